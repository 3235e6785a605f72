/**
 * The programs around the persistent Node.js kernel (nodeKernel.ts), all run by `node -e` (without
 * template literals, so written as plain strings):
 *
 * - NODE_LAUNCH makes sure a supervisor serves the session's socket: when none answers, it starts
 *   NODE_SUPERVISE detached (its own session, without the calling exec's marker, so that ending a
 *   call or a client never ends the kernel) and waits until the socket answers; it prints
 *   `previous N` when it replaces a kernel that ended with status N.
 * - NODE_SUPERVISE runs the kernel as its child and serves any number of clients on the socket, one
 *   JSON request per line, passing one call at a time to the kernel. Node cannot make its own fds 1
 *   and 2 into pipes it drains, so the supervisor drains the kernel's: per call, capped, up to the
 *   marker the kernel writes once the call is done, so output of child processes is captured too.
 *   It also collects the pictures written to /tmp/outputs during the call. When the kernel ends for
 *   any reason (process.exit, a signal, the memory limit), it writes the exit status beside the
 *   socket, so that clients can say why.
 * - NODE_CLIENT relays between its stdin/stdout (a SandboxProcess of the host) and the socket, and
 *   says the kernel's exit status when the kernel goes.
 */

export const NODE_SUPERVISE = String.raw`
'use strict';
const fs = require('fs'), net = require('net'), os = require('os'), path = require('path');
const crypto = require('crypto'), child = require('child_process');
const [sock, capText, kernelCode] = process.argv.slice(1);
const CAP = Number(capText);
const MARK = Buffer.from(crypto.randomBytes(16).toString('hex'));
const status = sock + '.exit';
const OUTPUTS = '/tmp/outputs';
const IMAGE_TYPES = { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif', '.webp': 'image/webp' };
const MOST_IMAGES = 4;
const IMAGE_BYTES = 5 * 1024 * 1024;
try {
  fs.mkdirSync(OUTPUTS, { recursive: true }); // there from the start, for the code to write pictures into
} catch (error) {}

for (const stale of [status, sock + '.log']) {
  try {
    fs.unlinkSync(stale);
  } catch (error) {}
}

const kernel = child.spawn(process.execPath, ['--expose-internals', '-e', kernelCode], {
  stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
});
kernel.send({ mark: MARK.toString() });

// One of the kernel's output streams: kept per call up to the cap, counted in full, cut at each marker.
class Capture {
  constructor(stream) {
    this.tail = Buffer.alloc(0);
    this.marks = 0;
    this.waiting = [];
    this.reset();
    stream.on('data', (chunk) => this.feed(chunk));
  }
  reset() {
    this.parts = [];
    this.kept = 0;
    this.total = 0;
  }
  keep(data) {
    this.total += data.length;
    const room = CAP - this.kept;
    if (room > 0 && data.length) {
      const part = data.subarray(0, room);
      this.parts.push(Buffer.from(part));
      this.kept += part.length;
    }
  }
  feed(chunk) {
    let joined = Buffer.concat([this.tail, chunk]);
    for (let at = joined.indexOf(MARK); at >= 0; at = joined.indexOf(MARK)) {
      this.keep(joined.subarray(0, at));
      joined = joined.subarray(at + MARK.length);
      this.marks++;
      this.waiting = this.waiting.filter((waiter) => (waiter.marks <= this.marks ? (waiter.resolve(), false) : true));
    }
    const hold = MARK.length - 1;
    this.keep(joined.subarray(0, Math.max(0, joined.length - hold)));
    this.tail = Buffer.from(joined.subarray(Math.max(0, joined.length - hold)));
  }
  marked(marks) {
    return new Promise((resolve) => {
      if (this.marks >= marks) resolve();
      else this.waiting.push({ marks: marks, resolve: resolve });
    });
  }
  take() {
    const data = Buffer.concat(this.parts);
    const total = this.total;
    this.reset();
    return { data: data, total: total };
  }
}

const out = new Capture(kernel.stdout);
const err = new Capture(kernel.stderr);
let startupErrors = '';
kernel.stderr.on('data', (chunk) => {
  if (!ready) startupErrors = (startupErrors + chunk.toString()).slice(-4000);
});

// What /tmp/outputs holds before a call: a picture is new, or changed, when this differs after it.
function snapshot() {
  const seen = new Map();
  let names = [];
  try {
    names = fs.readdirSync(OUTPUTS);
  } catch (error) {}
  for (const name of names) {
    try {
      const stat = fs.statSync(path.join(OUTPUTS, name), { bigint: true });
      seen.set(name, stat.mtimeNs + ':' + stat.size + ':' + stat.ino + ':' + stat.isFile());
    } catch (error) {}
  }
  return seen;
}

function images(before) {
  const found = [];
  const dropped = [];
  const after = snapshot();
  for (const name of Array.from(after.keys()).sort()) {
    const file = path.join(OUTPUTS, name);
    const extension = path.extname(name).toLowerCase();
    if (after.get(name) === before.get(name) || !after.get(name).endsWith(':true')) continue;
    if (extension === '.svg') dropped.push(file + ' (SVG: models take PNG, JPEG, GIF or WebP pictures; save it as PNG too)');
    const mime = IMAGE_TYPES[extension];
    if (!mime) continue;
    if (found.length >= MOST_IMAGES) {
      dropped.push(file);
      continue;
    }
    try {
      if (fs.statSync(file).size > IMAGE_BYTES) {
        dropped.push(file + ' (over 5 MiB)');
        continue;
      }
      found.push({ mime: mime, data: fs.readFileSync(file).toString('base64'), source: file });
    } catch (error) {}
  }
  return { found: found, dropped: dropped };
}

let ready = false;
let calls = 0;
let marks = 0;
let running = null;
const work = [];
const connections = new Set();

function send(client, message, answered) {
  if (!client.conn.destroyed) client.conn.write(JSON.stringify(message) + '\n');
  if (answered) {
    client.pending--;
    closeWhenDone(client);
  }
}

// A client that stopped sending still gets the answers to what it sent.
function closeWhenDone(client) {
  if (!client.reading && client.pending === 0) client.conn.end();
}

function next() {
  if (running || !work.length || !ready) return;
  const [client, request] = work.shift();
  if (!kernel.connected) return;
  // A call its caller gave up on (not started within its limit, or the caller gone) is not run late.
  const within = request.startWithinMs;
  if (!client.reading || (typeof within === 'number' && Date.now() - request.receivedAt > within)) {
    send(client, { id: request.id, skipped: true }, true);
    return next();
  }
  running = { client: client, id: request.id, before: snapshot(), marks: ++marks };
  send(client, { started: request.id });
  kernel.send({ id: request.id, code: typeof request.code === 'string' ? request.code : '' });
}

kernel.on('message', async (message) => {
  if (message && message.ready) return listen();
  const call = running;
  if (!call || !message || message.id !== call.id) return;
  // The output is complete once the marker the kernel wrote after the call has come through both pipes.
  await Promise.race([
    Promise.all([out.marked(call.marks), err.marked(call.marks)]),
    new Promise((resolve) => setTimeout(resolve, 2000)),
  ]);
  calls++;
  const stdout = out.take();
  const stderr = err.take();
  const pictures = images(call.before);
  let value = message.value;
  if (typeof value === 'string' && value.length > CAP) value = value.slice(0, CAP);
  send(
    call.client,
    {
      id: call.id,
      value: value,
      error: message.error,
      interrupted: message.interrupted,
      stdout: stdout.data.toString('base64'),
      stdoutTotal: stdout.total,
      stderr: stderr.data.toString('base64'),
      stderrTotal: stderr.total,
      ms: message.ms,
      images: pictures.found,
      imagesDropped: pictures.dropped,
    },
    true,
  );
  running = null;
  next();
});

const server = net.createServer({ allowHalfOpen: true }, (conn) => {
  const client = { conn: conn, pending: 0, reading: true };
  connections.add(conn);
  conn.on('close', () => connections.delete(conn));
  conn.on('error', () => {});
  send(client, { ready: true, pid: kernel.pid, version: process.version, calls: calls });
  let lines = '';
  conn.setEncoding('utf8');
  conn.on('data', (data) => {
    lines += data;
    for (let newline = lines.indexOf('\n'); newline >= 0; newline = lines.indexOf('\n')) {
      const line = lines.slice(0, newline);
      lines = lines.slice(newline + 1);
      let request;
      try {
        request = JSON.parse(line);
      } catch (error) {
        continue;
      }
      if (!request || typeof request !== 'object') continue;
      request.receivedAt = Date.now();
      client.pending++;
      work.push([client, request]);
    }
    next();
  });
  conn.on('end', () => {
    client.reading = false;
    closeWhenDone(client);
  });
});

function listen() {
  ready = true;
  const previous = process.umask(0o077);
  server.listen(sock, () => process.umask(previous));
  server.on('error', () => {
    // Another launcher's kernel took the socket first: this one is not needed.
    kernel.kill('SIGKILL');
    process.exit(0);
  });
}

function ended(code) {
  try {
    fs.unlinkSync(sock);
  } catch (error) {}
  if (!ready && startupErrors) fs.writeFileSync(sock + '.log', startupErrors);
  fs.writeFileSync(status, String(code));
  for (const conn of connections) conn.destroy();
  process.exit(0);
}

kernel.on('exit', (code, signal) => ended(code !== null ? code : -(os.constants.signals[signal] || 0)));
// Only a kernel that could not be started at all ends here; a closed channel is reported by 'exit'.
kernel.on('error', () => {
  if (kernel.pid === undefined) ended(127);
});
`;

export const NODE_LAUNCH = String.raw`
'use strict';
const fs = require('fs'), net = require('net'), path = require('path'), child = require('child_process');
const [sock, cap, supervise, kernel] = process.argv.slice(1);
const status = sock + '.exit';

function answers() {
  return new Promise((resolve) => {
    const probe = net.connect(sock);
    probe.on('connect', () => (probe.destroy(), resolve(true)));
    probe.on('error', () => resolve(false));
  });
}

function read(file) {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch (error) {
    return undefined;
  }
}

(async () => {
  if (await answers()) return;
  fs.mkdirSync(path.dirname(sock), { recursive: true, mode: 0o700 });
  // How the last kernel of this session ended, if one did: its state is gone.
  const previous = read(status);
  if (previous !== undefined) process.stdout.write('previous ' + previous + '\n');
  for (const stale of [status, sock]) {
    try {
      fs.unlinkSync(stale);
    } catch (error) {}
  }
  const env = Object.assign({}, process.env);
  delete env.AGENT_SANDBOX_EXEC;
  child.spawn(process.execPath, ['-e', supervise, '--', sock, cap, kernel], { env: env, detached: true, stdio: 'ignore' }).unref();
  for (let tries = 0; tries < 1250; tries++) {
    if (await answers()) return;
    const code = read(status);
    if (code !== undefined) {
      process.stderr.write('the Node.js kernel ended with exit code ' + code + ' as it started: ' + (read(sock + '.log') || '') + '\n');
      process.exit(1);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  process.stderr.write('the Node.js kernel did not start\n');
  process.exit(1);
})();
`;

export const NODE_CLIENT = String.raw`
'use strict';
const fs = require('fs'), net = require('net');
const sock = process.argv[1];
const conn = net.connect(sock);
let leaving = false;
let connected = false;

conn.on('connect', () => (connected = true));
conn.on('error', (error) => {
  // Before the connection, there is no kernel to talk to; after it, 'close' says how the kernel ended.
  if (connected) return;
  process.stderr.write(String(error.message) + '\n');
  process.exit(1);
});
conn.on('data', (data) => process.stdout.write(data));
process.stdin.on('data', (data) => conn.write(data));
process.stdin.on('end', () => {
  leaving = true;
  conn.end();
});
conn.on('close', async () => {
  // The kernel went, unless this client is the one leaving: say how it ended (its supervisor writes the status).
  for (let tries = 0; !leaving && tries < 100; tries++) {
    let code;
    try {
      code = parseInt(fs.readFileSync(process.argv[1] + '.exit', 'utf8'), 10);
    } catch (error) {}
    if (code !== undefined && !Number.isNaN(code)) {
      process.stdout.write(JSON.stringify({ ended: code }) + '\n');
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  process.stdout.write('', () => process.exit(0));
});
`;
