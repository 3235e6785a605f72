/**
 * The persistent Python interpreter inside a sandbox, in three small programs (standard library
 * only, so any image with python3 runs them):
 *
 * - PYTHON_LAUNCH makes sure a kernel serves the session's socket: when none answers, it starts
 *   PYTHON_SUPERVISE detached (its own session, without the calling exec's marker, so that ending a
 *   call or a client never ends the kernel) and waits until the socket answers.
 * - PYTHON_SUPERVISE runs the kernel and, when it ends for any reason (os._exit, a signal, the memory
 *   limit), writes its exit status beside the socket, so that clients can say why.
 * - PYTHON_KERNEL serves any number of clients on the socket, one JSON request per line, and runs
 *   their code one call at a time in its main thread, in one namespace that outlives the calls and
 *   the clients: the value of a final expression is shown, an exception returns its traceback and
 *   keeps the state, SIGINT (sent on a timeout) interrupts the running code and keeps the state.
 *   File descriptors 1 and 2 are pipes it drains, so output of C code and child processes is
 *   captured too, per call, capped; stdin is /dev/null.
 * - PYTHON_CLIENT relays between its stdin/stdout (a SandboxProcess of the host) and the socket, and
 *   says the kernel's exit status when the kernel goes.
 *
 * So VS Code, an MCP connection and one `agent-sandbox tool` command after another share the same
 * interpreter of a session, and its state lasts as long as the session.
 */

import { PYTHON_REPL } from './pythonRepl';

/** Where a session's Python kernel listens (the sandbox user's own /tmp). */
export const PYTHON_SOCKET = '/tmp/.agent-sandbox/python.sock';

export const PYTHON_KERNEL = String.raw`
import ast, base64, json, os, queue, signal, socket, sys, threading, time, traceback

SOCK, CAP = sys.argv[1], int(sys.argv[2])
MARK = os.urandom(16).hex().encode()
OWN = globals().get('__file__', '<string>')
null = os.open(os.devnull, os.O_RDWR)
os.dup2(null, 0)

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
calls = 0
work = queue.Queue()

def on_interrupt(signum, frame):
    # Only the code of a call is interrupted; between calls the signal is ignored.
    if running:
        raise KeyboardInterrupt

signal.signal(signal.SIGINT, on_interrupt)

class Client:
    def __init__(self, conn):
        self.conn = conn
        self.lock = threading.Lock()
        self.pending = 0
        self.reading = True

    @property
    def gone(self):
        # It stopped sending: its process ended or closed this connection, so no one waits for a call's result.
        return not self.reading

    def send(self, message, answered=False):
        data = (json.dumps(message) + '\n').encode()
        with self.lock:
            try:
                self.conn.sendall(data)
            except OSError:
                pass
            if answered:
                self.pending -= 1
                self.close_when_done()

    def close_when_done(self):
        # A client that stopped sending still gets the answers to what it sent.
        if not self.reading and self.pending == 0:
            self.conn.close()

    def serve(self):
        self.send({'ready': True, 'pid': os.getpid(), 'version': sys.version.split()[0], 'calls': calls})
        reader = self.conn.makefile('r', encoding='utf-8', errors='replace')
        try:
            for line in reader:
                try:
                    request = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(request, dict):
                    continue
                request['_received'] = time.monotonic()
                with self.lock:
                    self.pending += 1
                work.put((self, request))
        except OSError:
            # A client that went away mid-line (its process ended): nothing of ours goes to the user's stderr.
            pass
        with self.lock:
            self.reading = False
            self.close_when_done()

def accept(server):
    while True:
        conn, _ = server.accept()
        threading.Thread(target=Client(conn).serve, daemon=True).start()

${PYTHON_REPL}
os.umask(0o077)
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(SOCK)
server.listen(16)
threading.Thread(target=accept, args=(server,), daemon=True).start()

while True:
    try:
        client, request = work.get()
    except KeyboardInterrupt:
        continue
    # A call its caller gave up on (not started within its limit, or the caller gone) is not run late.
    within = request.get('startWithinMs')
    waited = (time.monotonic() - request.get('_received', time.monotonic())) * 1000
    if client.gone or (isinstance(within, (int, float)) and waited > within):
        client.send({'id': request.get('id'), 'skipped': True}, answered=True)
        continue
    client.send({'started': request.get('id')})
    started = time.monotonic()
    before = snapshot()
    result, value, error, interrupted = evaluate(request.get('code', ''))
    calls += 1
    found, dropped = images(result, before)
    stdout, stdout_total = out.take(1)
    stderr, stderr_total = err.take(2)
    if value is not None and len(value) > CAP:
        value = value[:CAP]
    client.send({
        'id': request.get('id'),
        'value': value,
        'error': error,
        'interrupted': interrupted,
        'stdout': encode(stdout),
        'stdoutTotal': stdout_total,
        'stderr': encode(stderr),
        'stderrTotal': stderr_total,
        'ms': round((time.monotonic() - started) * 1000),
        'images': found,
        'imagesDropped': dropped,
    }, answered=True)
`;

export const PYTHON_SUPERVISE = String.raw`
import os, subprocess, sys
sock, cap, kernel = sys.argv[1], sys.argv[2], sys.argv[3]
status = sock + '.exit'
try:
    os.unlink(status)
except FileNotFoundError:
    pass
code = subprocess.call([sys.executable, '-u', '-c', kernel, sock, cap])
try:
    os.unlink(sock)
except FileNotFoundError:
    pass
with open(status, 'w') as f:
    f.write(str(code))
`;

export const PYTHON_LAUNCH = String.raw`
import os, socket, subprocess, sys, time
sock, cap, supervise, kernel = sys.argv[1:5]

def answers():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(sock)
        return True
    except OSError:
        return False
    finally:
        s.close()

if not answers():
    os.makedirs(os.path.dirname(sock), mode=0o700, exist_ok=True)
    # How the last kernel of this session ended, if one did: its state is gone.
    try:
        with open(sock + '.exit') as f:
            print('previous ' + f.read().strip(), flush=True)
    except (OSError, ValueError):
        pass
    try:
        os.unlink(sock)
    except FileNotFoundError:
        pass
    env = {k: v for k, v in os.environ.items() if k != 'AGENT_SANDBOX_EXEC'}
    subprocess.Popen([sys.executable, '-c', supervise, sock, cap, kernel], env=env, start_new_session=True,
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, close_fds=True)
    for _ in range(300):
        if answers():
            break
        time.sleep(0.02)
    else:
        sys.exit('the Python kernel did not start')
`;

export const PYTHON_CLIENT = String.raw`
import os, socket, sys, threading, time
sock = sys.argv[1]
conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
conn.connect(sock)

leaving = threading.Event()

def forward():
    for line in sys.stdin.buffer:
        try:
            conn.sendall(line)
        except OSError:
            break
    leaving.set()
    try:
        conn.shutdown(socket.SHUT_WR)
    except OSError:
        pass

threading.Thread(target=forward, daemon=True).start()
out = sys.stdout.buffer
while True:
    data = conn.recv(65536)
    if not data:
        break
    out.write(data)
    out.flush()
# The kernel went, unless this client is the one leaving: say how it ended (its supervisor writes the status).
status = sock + '.exit'
for _ in range(0 if leaving.is_set() else 100):
    if os.path.exists(status):
        try:
            with open(status) as f:
                out.write(('{"ended": %d}\n' % int(f.read().strip())).encode())
        except (OSError, ValueError):
            pass
        break
    time.sleep(0.02)
out.flush()
os._exit(0)
`;
