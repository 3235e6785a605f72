/**
 * The persistent Python interpreter that runs inside a sandbox (python3 -u KERNEL): one JSON request
 * per line on stdin, one JSON reply per line on its own copy of stdout. Code runs in one namespace
 * that outlives the call, as in a REPL: the value of a final expression is shown, an exception
 * returns its traceback and keeps the state, KeyboardInterrupt (SIGINT, sent on a timeout) stops the
 * code and keeps the state. File descriptors 1 and 2 are pipes it drains, so output of C code and
 * child processes is captured too, per call, capped; stdin is /dev/null, so code cannot read the
 * protocol. Standard library only: it works in any image with python3.
 */
export const PYTHON_KERNEL = String.raw`
import ast, base64, json, os, signal, sys, threading, time, traceback

CAP = int(sys.argv[1]) if len(sys.argv) > 1 else 1048576  # python3 -c KERNEL CAP
MARK = os.urandom(16).hex().encode()
OWN = globals().get('__file__', '<string>')
reply_out = os.fdopen(os.dup(1), 'w', encoding='utf-8', buffering=1)
requests = os.fdopen(os.dup(0), 'r', encoding='utf-8')
null = os.open(os.devnull, os.O_RDONLY)
os.dup2(null, 0)
os.close(null)

class Capture:
    def __init__(self, fd):
        r, w = os.pipe()
        os.dup2(w, fd)
        os.close(w)
        self.r = r
        self.lock = threading.Lock()
        self.seen = threading.Event()
        self.reset()
        threading.Thread(target=self.pump, daemon=True).start()

    def reset(self):
        self.data = bytearray()
        self.total = 0
        self.tail = b''

    def pump(self):
        while True:
            chunk = os.read(self.r, 65536)
            if not chunk:
                return
            with self.lock:
                joined = self.tail + chunk
                at = joined.find(MARK)
                if at >= 0:
                    self.keep(joined[:at])
                    self.tail = b''
                    self.seen.set()
                    rest = joined[at + len(MARK):]
                    if rest:
                        self.keep(rest)
                    continue
                keep = len(MARK) - 1
                self.keep(joined[:-keep] if len(joined) > keep else b'')
                self.tail = joined[-keep:] if len(joined) > keep else joined

    def keep(self, data):
        self.total += len(data)
        room = CAP - len(self.data)
        if room > 0:
            self.data += data[:room]

    def take(self, fd):
        self.seen.clear()
        os.write(fd, MARK)
        self.seen.wait(2)
        with self.lock:
            data, total = bytes(self.data), self.total
            self.reset()
        return data, total

out, err = Capture(1), Capture(2)
sys.stdout = os.fdopen(1, 'w', encoding='utf-8', errors='backslashreplace', buffering=1, closefd=False)
sys.stderr = os.fdopen(2, 'w', encoding='utf-8', errors='backslashreplace', buffering=1, closefd=False)
namespace = {'__name__': '__main__', '__builtins__': __builtins__}
running = False

def on_interrupt(signum, frame):
    # Only the user's code is interrupted; between calls the signal is ignored.
    if running:
        raise KeyboardInterrupt

signal.signal(signal.SIGINT, on_interrupt)

def user_traceback(error):
    frames = traceback.extract_tb(error.__traceback__)
    first = next((i for i, frame in enumerate(frames) if frame.filename == '<cell>'), 0)
    shown = [frame for frame in frames[first:] if frame.filename != OWN]
    lines = ['Traceback (most recent call last):\n'] if shown else []
    lines += traceback.format_list(shown)
    lines += traceback.format_exception_only(type(error), error)
    return ''.join(lines)

def run(code):
    tree = ast.parse(code, '<cell>', 'exec')
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, '<cell>', 'exec'), namespace)
    if last is not None:
        value = eval(compile(last, '<cell>', 'eval'), namespace)
        if value is not None:
            namespace['_'] = value
            return repr(value)
    return None

def encode(data):
    return base64.b64encode(data).decode('ascii')

reply_out.write(json.dumps({'ready': True, 'pid': os.getpid(), 'python': sys.version.split()[0]}) + '\n')
for line in requests:
    try:
        request = json.loads(line)
    except ValueError:
        continue
    started = time.monotonic()
    value, error, interrupted = None, None, False
    try:
        running = True
        try:
            value = run(request.get('code', ''))
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
    stdout, stdout_total = out.take(1)
    stderr, stderr_total = err.take(2)
    if value is not None and len(value) > CAP:
        value = value[:CAP]
    reply_out.write(json.dumps({
        'id': request.get('id'),
        'value': value,
        'error': error,
        'interrupted': interrupted,
        'stdout': encode(stdout),
        'stdoutTotal': stdout_total,
        'stderr': encode(stderr),
        'stderrTotal': stderr_total,
        'ms': round((time.monotonic() - started) * 1000),
    }) + '\n')
`;
