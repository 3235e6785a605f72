/**
 * What the persistent kernel (pythonKernel.ts) and a one-off run (pythonRun.ts) share, in Python:
 * running code as a REPL does (the value of a final expression is kept), its traceback without our
 * own frames, its value shown compactly, and the images it left (an image value, open matplotlib
 * figures, new pictures in /tmp/outputs). The including program defines `namespace` and `OWN`.
 */
export const PYTHON_REPL = String.raw`
def user_traceback(error, filename='<cell>'):
    frames = traceback.extract_tb(error.__traceback__)
    first = next((i for i, frame in enumerate(frames) if frame.filename == filename), 0)
    shown = [frame for frame in frames[first:] if frame.filename != OWN]
    lines = ['Traceback (most recent call last):\n'] if shown else []
    lines += traceback.format_list(shown)
    lines += traceback.format_exception_only(type(error), error)
    return ''.join(lines)

def run(code, filename='<cell>'):
    tree = ast.parse(code, filename, 'exec')
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, filename, 'exec'), namespace)
    if last is not None:
        value = eval(compile(last, filename, 'eval'), namespace)
        if value is not None:
            namespace['_'] = value
            return value
    return None

def shown(result):
    # The repr a REPL would show; pandas tables compact (head and tail rows, at most 12 columns, long
    # cells cut, and their shape), so one DataFrame does not fill the model's result.
    pandas = sys.modules.get('pandas')
    if pandas is None:
        return repr(result)
    try:
        with pandas.option_context(
            'display.max_rows', 20, 'display.min_rows', 10, 'display.max_columns', 12,
            'display.width', 120, 'display.max_colwidth', 40, 'display.show_dimensions', True,
        ):
            return repr(result)
    except Exception:
        return repr(result)

def encode(data):
    return base64.b64encode(data).decode('ascii')

OUTPUTS = '/tmp/outputs'
try:
    os.makedirs(OUTPUTS, exist_ok=True)  # there from the start, for the code to write pictures into
except OSError:
    pass
IMAGE_TYPES = {'.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif', '.webp': 'image/webp'}
MOST_IMAGES = 4
IMAGE_BYTES = 5 * 1024 * 1024
LONG_SIDE = 1568

def fit(data, mime):
    # Scaled down (with Pillow, where the image has it) when its long side is more than a model takes.
    try:
        from PIL import Image
    except Exception:
        return data, mime
    try:
        import io
        picture = Image.open(io.BytesIO(data))
        if max(picture.size) <= LONG_SIDE and len(data) <= IMAGE_BYTES:
            return data, mime
        picture.thumbnail((LONG_SIDE, LONG_SIDE))
        out = io.BytesIO()
        picture.save(out, format='PNG')
        return out.getvalue(), 'image/png'
    except Exception:
        return data, mime

def snapshot():
    # What /tmp/outputs holds before a call: a picture is new, or changed, when this differs after it.
    seen = {}
    try:
        for entry in os.scandir(OUTPUTS):
            try:
                stat = entry.stat()
                seen[entry.name] = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
            except OSError:
                pass
    except OSError:
        pass
    return seen

def images(value, before):
    found, dropped = [], []
    def add(data, mime, source):
        if len(found) >= MOST_IMAGES:
            dropped.append(source)
            return
        data, mime = fit(data, mime)
        if len(data) > IMAGE_BYTES:
            dropped.append(source + ' (over 5 MiB)')
            return
        found.append({'mime': mime, 'data': encode(data), 'source': source})
    if value is not None and hasattr(value, '_repr_png_'):
        try:
            data = value._repr_png_()
            if data:
                add(data, 'image/png', 'the value')
        except Exception:
            pass
    pyplot = sys.modules.get('matplotlib.pyplot')
    if pyplot is not None:
        try:
            import io
            for number in pyplot.get_fignums():
                figure = pyplot.figure(number)
                out = io.BytesIO()
                figure.savefig(out, format='png', dpi=100)
                add(out.getvalue(), 'image/png', 'figure %d' % number)
                pyplot.close(figure)
        except Exception:
            pass
    after = snapshot()
    for name in sorted(after):
        path = os.path.join(OUTPUTS, name)
        extension = os.path.splitext(name)[1].lower()
        mime = IMAGE_TYPES.get(extension)
        if extension == '.svg' and after[name] != before.get(name):
            dropped.append(path + ' (SVG: models take PNG, JPEG, GIF or WebP pictures; save it as PNG too)')
        try:
            if mime and after[name] != before.get(name) and os.path.isfile(path):
                with open(path, 'rb') as f:
                    add(f.read(IMAGE_BYTES + 1), mime, path)
        except OSError:
            pass
    return found, dropped

def evaluate(code):
    # One call's code as the kernels run it: (the value, its text, an error's text, interrupted). The
    # including kernel's SIGINT handler interrupts only while 'running' (a global it defines) is set.
    global running
    result, value, error, interrupted = None, None, None, False
    try:
        running = True
        try:
            result = run(code)
            value = None if result is None else shown(result)
        finally:
            running = False
    except KeyboardInterrupt as caught:
        interrupted = True
        error = user_traceback(caught)
    except SystemExit as caught:
        error = 'SystemExit: %r (the interpreter keeps running; its state is kept)\n' % (caught.code,)
    except BaseException as caught:
        error = user_traceback(caught)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        pass
    return result, value, error, interrupted
`;
