/**
 * sandbox_run's Python program, run as a fresh interpreter would run it in a notebook cell: the
 * program runs as __main__ with its own file name in tracebacks, the value of a final expression is
 * shown, and the images it left (open matplotlib figures, an image value, new pictures in
 * /tmp/outputs) come back. They travel after the program's own output on stdout, behind a mark the
 * host chose and the driver read (and deleted) before the program ran, as one JSON line, when there
 * is any. A program that printed the mark itself would only spoil its own result.
 *
 * argv: the program, the file holding the mark, how many bytes the images may take (what stdout
 * can carry beside the program's own output).
 */
import { PYTHON_REPL } from './pythonRepl';

export const PYTHON_RUN = String.raw`
import ast, base64, json, os, sys, traceback

program, mark_file, room = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(mark_file) as f:
    MARK = f.read().strip()
try:
    os.unlink(mark_file)
except OSError:
    pass
CAP = 1 << 20
OWN = globals().get('__file__', '<string>')
sys.argv = [program]
sys.path[0] = os.path.dirname(program)
namespace = {'__name__': '__main__', '__builtins__': __builtins__, '__file__': program}
${PYTHON_REPL}

before = snapshot()
with open(program, encoding='utf-8') as f:
    source = f.read()
result, value, status = None, None, 0
try:
    result = run(source, program)
    if result is not None:
        value = shown(result)[:CAP]
except SystemExit as caught:
    code = caught.code
    status = code if isinstance(code, int) else (0 if code is None else 1)
    if not isinstance(code, int) and code is not None:
        sys.stderr.write(str(code) + '\n')
except BaseException as caught:
    sys.stderr.write(user_traceback(caught, program))
    status = 1
found, dropped = images(result, before)
carried, used = [], 0
for image in found:
    if used + len(image['data']) > room:
        dropped.append(image['source'] + ' (over what sandbox_run carries; a session returns it)')
        continue
    carried.append(image)
    used += len(image['data'])
try:
    sys.stdout.flush()
    sys.stderr.flush()
except Exception:
    pass
# Only when there is something to carry: a program without a final value or images keeps its stdout as it was.
if value is not None or carried or dropped:
    os.write(1, (MARK + json.dumps({'value': value, 'images': carried, 'imagesDropped': dropped}) + '\n').encode())
sys.exit(status)
`;
