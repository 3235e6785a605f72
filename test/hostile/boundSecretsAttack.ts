/**
 * The attacker of the bound-secrets cases: a Node.js script run inside the sandbox, which holds only
 * the placeholders (TOKEN, SELF) and talks to the egress proxy byte for byte. It takes one job as
 * base64 JSON and prints what came back as JSON. `{TOKEN}` in a text becomes the placeholder,
 * `{SELF_BASIC}` the base64 of `me:` and SELF's placeholder, `{PAD:N}` N letters.
 */
export interface TlsJob {
  kind: 'tls';
  /** The CONNECT's authority. */
  connect: string;
  /** The name sent in the TLS handshake (SNI); the CONNECT's host when absent. */
  sni?: string;
  /** Trust the session CA's bundle (SSL_CERT_FILE) and verify the name: true; accept any certificate: false. */
  verify?: boolean;
  /** ALPN protocols offered. */
  alpn?: string[];
  /** Send the CONNECT in the same write as the TLS ClientHello, before the proxy's answer (the CONNECT's "head"). */
  early?: boolean;
  /** Extra header lines of the CONNECT itself. */
  connectHeaders?: string;
  /** What is written inside TLS, each a write of its own. */
  writes: string[];
}

export interface PlainJob {
  kind: 'plain';
  /** Written to the proxy as it is (plain HTTP in absolute form, a CONNECT with tricks...). */
  writes: string[];
}

export type AttackJob = TlsJob | PlainJob | { kind: 'parallel'; jobs: (TlsJob | PlainJob)[] };

export interface AttackAnswer {
  /** Everything that came back (after the CONNECT's answer, for TLS), as latin1. */
  answer: string;
  /** What the CONNECT was answered, for TLS jobs. */
  connected?: string;
  /** The ALPN protocol the TLS handshake chose. */
  alpn?: string | false;
  error?: string;
}

export const ATTACK_SCRIPT = String.raw`
const net = require('net'), tls = require('tls'), fs = require('fs'), { Duplex } = require('stream');
const proxy = new URL(process.env.HTTPS_PROXY);
const fill = (text) =>
  text
    .split('{TOKEN}').join(process.env.TOKEN)
    .split('{SELF_BASIC}').join(Buffer.from('me:' + process.env.SELF).toString('base64'))
    .replace(/\{PAD:(\d+)\}/g, (_, n) => 'a'.repeat(Number(n)));
function finish(socket, result, resolve) {
  let done = false;
  const end = () => { if (!done) { done = true; clearTimeout(timer); socket.destroy(); resolve(result); } };
  // Not an assertion: only so that a connection the proxy keeps open ends the script.
  const timer = setTimeout(end, 4000);
  socket.on('close', end);
  socket.on('end', end);
  socket.on('error', (error) => { result.error = error.message; end(); });
}
function writeAll(socket, writes) {
  writes.reduce((previous, text) => previous.then(() => new Promise((next) => socket.write(Buffer.from(fill(text), 'latin1'), () => setTimeout(next, 50)))), Promise.resolve());
}
function plain(job) {
  return new Promise((resolve) => {
    const result = { answer: '' };
    const socket = net.connect(proxy.port, proxy.hostname, () => writeAll(socket, job.writes));
    socket.on('data', (data) => (result.answer += data.toString('latin1')));
    finish(socket, result, resolve);
  });
}
/** The proxy connection as TLS sees it: the CONNECT goes first (with the ClientHello when early), its answer is taken off. */
function tunnel(job, result, ready) {
  const raw = net.connect(proxy.port, proxy.hostname);
  const connect = 'CONNECT ' + job.connect + ' HTTP/1.1\r\nHost: ' + job.connect + '\r\n' + fill(job.connectHeaders || '') + '\r\n';
  let head = Buffer.alloc(0), answered = false, first = true;
  const side = new Duplex({
    read() {},
    write(chunk, _, callback) {
      if (first && job.early) { first = false; raw.write(Buffer.concat([Buffer.from(connect, 'latin1'), chunk]), callback); }
      else raw.write(chunk, callback);
    },
    final(callback) { raw.end(); callback(); },
    destroy(error, callback) { raw.destroy(); callback(error); },
  });
  raw.on('data', (data) => {
    if (answered) return void side.push(data);
    head = Buffer.concat([head, data]);
    const at = head.indexOf('\r\n\r\n');
    if (at < 0) return;
    answered = true;
    result.connected = head.subarray(0, at).toString('latin1');
    const rest = head.subarray(at + 4);
    if (!result.connected.startsWith('HTTP/1.1 200')) { result.answer = rest.toString('latin1'); return void side.destroy(); }
    if (!job.early) ready();
    if (rest.length) side.push(rest);
  });
  raw.on('end', () => side.push(null));
  raw.on('error', (error) => side.destroy(error));
  raw.on('connect', () => { if (!job.early) raw.write(connect); else ready(); });
  return side;
}
function secure(job) {
  return new Promise((resolve) => {
    const result = { answer: '' };
    let side, started = false;
    const start = () => {
      started = true;
      const host = job.connect.replace(/:\d+$/, '');
      const options = { socket: side, servername: job.sni || host, ALPNProtocols: job.alpn, rejectUnauthorized: !!job.verify };
      if (job.verify) options.ca = fs.readFileSync(process.env.SSL_CERT_FILE);
      const socket = tls.connect(options, () => { result.alpn = socket.alpnProtocol; writeAll(socket, job.writes); });
      socket.on('data', (data) => (result.answer += data.toString('latin1')));
      finish(socket, result, resolve);
    };
    side = tunnel(job, result, start);
    side.on('error', (error) => { result.error = error.message; resolve(result); });
    side.on('close', () => { if (!started) resolve(result); });
  });
}
const run = (job) => (job.kind === 'plain' ? plain(job) : secure(job));
const job = JSON.parse(Buffer.from(process.argv[2], 'base64').toString());
(job.kind === 'parallel' ? Promise.all(job.jobs.map(run)) : run(job)).then((answer) => console.log(JSON.stringify(answer)));
`;
