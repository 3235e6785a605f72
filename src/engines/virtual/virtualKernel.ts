/**
 * The program the virtual engine's persistent Python runs (python -c, argv[1] the output cap): one
 * namespace that outlives the calls, and per call what the Docker engine's kernel does (the REPL code
 * they share, core/interpreters/pythonRepl.ts), without sockets or processes. Requests and replies are JSON lines on /dev/agent, a
 * device of its worker (pythonWorker.ts); stdout and stderr are captured by the worker, per call.
 * The value of a final expression is shown, an exception returns its traceback and keeps the state,
 * and SIGINT (raised through CPython's signal buffer at a timeout) interrupts the running code and
 * keeps the state. time.sleep waits in JavaScript on /dev/agent-sleep so that an interrupt wakes it:
 * the WebAssembly one spins and would hold the call past its deadline.
 */
import { PYTHON_REPL } from '../../core/interpreters/pythonRepl';

export const VIRTUAL_PYTHON_KERNEL = String.raw`
import ast, base64, importlib, json, os, signal, sys, time, traceback

CAP = int(sys.argv[1])
AGENT = os.open('/dev/agent', os.O_RDWR)
PAUSE = os.open('/dev/agent-sleep', os.O_WRONLY)
OWN = '<string>'
sys.stdout = os.fdopen(1, 'w', encoding='utf-8', errors='backslashreplace', buffering=1, closefd=False)
sys.stderr = os.fdopen(2, 'w', encoding='utf-8', errors='backslashreplace', buffering=1, closefd=False)
namespace = {'__name__': '__main__', '__builtins__': __builtins__}
running = False
pending = b''

def on_interrupt(signum, frame):
    # Only the code of a call is interrupted; between calls the signal is ignored.
    if running:
        raise KeyboardInterrupt

signal.signal(signal.SIGINT, on_interrupt)

def sleep(seconds):
    end = time.monotonic() + seconds
    if seconds < 0:
        raise ValueError('sleep length must be non-negative')
    while True:
        left = end - time.monotonic()
        if left <= 0:
            return
        os.write(PAUSE, repr(min(left, 60.0)).encode())

time.sleep = sleep

def receive():
    global pending
    while b'\n' not in pending:
        pending += os.read(AGENT, 1 << 20)
    line, _, pending = pending.partition(b'\n')
    return json.loads(line)

def send(message):
    data = memoryview((json.dumps(message) + '\n').encode())
    while data:
        data = data[os.write(AGENT, data):]

${PYTHON_REPL}

send({'ready': True, 'version': sys.version.split()[0]})
while True:
    request = receive()
    # Modules written between calls (by the file tools or a command) are found by the next import.
    importlib.invalidate_caches()
    before = snapshot()
    result, value, error, interrupted = evaluate(request.get('code', ''))
    found, dropped = images(result, before)
    if value is not None and len(value) > CAP:
        value = value[:CAP]
    send({'id': request.get('id'), 'value': value, 'error': error, 'interrupted': interrupted,
          'images': found, 'imagesDropped': dropped})
`;
