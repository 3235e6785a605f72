/**
 * The persistent Node.js interpreter inside a sandbox: the same protocol and guarantees as the Python
 * one (pythonKernel.ts), in four small Node scripts, so that an image with node and no python3 runs it:
 *
 * - NODE_LAUNCH makes sure a supervisor serves the session's socket: when none answers, it starts
 *   NODE_SUPERVISE detached (its own session, without the calling exec's marker) and waits until the
 *   socket answers.
 * - NODE_SUPERVISE runs the kernel as its child and serves any number of clients on the socket, one
 *   JSON request per line, passing one call at a time to the kernel. Node cannot make its own fds 1
 *   and 2 into pipes it drains, so the supervisor drains them: per call, capped, up to a marker the
 *   kernel writes once the call is done, so output of child processes is captured too. It also
 *   collects the pictures written to /tmp/outputs during the call. When the kernel ends for any
 *   reason (process.exit, a signal, the memory limit), it writes the exit status beside the socket.
 * - NODE_KERNEL runs the code in the process's own global scope, as the `node` REPL does: top-level
 *   declarations become globals, so they outlive the call; the code runs in an async function, so
 *   top-level await works and a final Promise is awaited; the final expression's value is shown with
 *   util.inspect; an exception returns its stack and keeps the state; SIGINT (sent on a timeout)
 *   stops a synchronous loop (vm's breakOnSigint) or stops waiting for a pending promise.
 * - NODE_CLIENT relays between its stdin/stdout (a SandboxProcess of the host) and the socket, and
 *   says the kernel's exit status when the kernel goes.
 *
 * The scripts are run with `node -e`, and so are written without template literals.
 */

/** Where a session's Node.js kernel listens (the sandbox user's own /tmp). */
export const NODE_SOCKET = '/tmp/.agent-sandbox/node.sock';

export const NODE_KERNEL = String.raw`
'use strict';
(() => {
  const vm = require('vm'), util = require('util'), fs = require('fs');
  const proc = process;
  // The marker that ends a call's output, from the supervisor (not in argv, where ps would show it).
  let MARK = '';
  const CELL = '<cell>';
  // Node's own parser (with --expose-internals), to find a cell's top-level declarations.
  let acorn = null;
  try {
    acorn = require('internal/deps/acorn/acorn/dist/acorn');
  } catch (error) {}
  // import() in a cell, resolved from the working directory (a vm script has no loader of its own).
  const IMPORT = '__agentSandboxImport';
  Object.defineProperty(globalThis, IMPORT, { value: (specifier) => import(specifier), enumerable: false });

  let current = null;
  let lastValue;
  const work = [];

  proc.on('SIGINT', () => {
    // Between calls the signal is ignored; in a call, the pending promise is given up.
    if (current) current.interrupt();
  });
  proc.on('uncaughtException', (error) => say('Uncaught ' + shownError(error)));
  proc.on('unhandledRejection', (reason) => say('Uncaught (in promise) ' + shownError(reason)));
  // The supervisor is gone: nobody can reach this kernel any more.
  proc.on('disconnect', () => proc.exit(0));
  proc.on('message', (request) => {
    if (request && typeof request.mark === 'string') return void (MARK = request.mark);
    work.push(request);
    if (work.length === 1) void next();
  });

  function say(text) {
    try {
      fs.writeSync(2, text + '\n');
    } catch (error) {}
  }

  function names(pattern, into) {
    if (!pattern) return;
    if (pattern.type === 'Identifier') into.push(pattern.name);
    else if (pattern.type === 'ObjectPattern')
      pattern.properties.forEach((p) => names(p.type === 'RestElement' ? p.argument : p.value, into));
    else if (pattern.type === 'ArrayPattern') pattern.elements.forEach((e) => names(e, into));
    else if (pattern.type === 'RestElement') names(pattern.argument, into);
    else if (pattern.type === 'AssignmentPattern') names(pattern.left, into);
  }

  function visit(node, found) {
    if (!node || typeof node.type !== 'string') return;
    found(node);
    for (const key of Object.keys(node)) {
      const child = node[key];
      if (Array.isArray(child)) child.forEach((c) => visit(c, found));
      else if (child && typeof child === 'object' && typeof child.type === 'string') visit(child, found);
    }
  }

  function parse(code) {
    for (const sourceType of ['script', 'module']) {
      try {
        return acorn.parse(code, {
          ecmaVersion: 'latest',
          sourceType: sourceType,
          allowAwaitOutsideFunction: true,
          allowHashBang: true,
        });
      } catch (error) {}
    }
    return null;
  }

  // The cell as a script: its top-level declarations become globals (var, so that a later cell may
  // declare them again), the rest runs in an async function that returns the final expression.
  function prepare(code) {
    if (!acorn) return null;
    // An object literal on its own, as the REPL reads it: {a: 1}.
    if (/^\s*\{/.test(code) && /\}\s*$/.test(code) && parse('(' + code + ')')) code = '(' + code + ')';
    const tree = parse(code);
    if (!tree) return null;
    const edits = [];
    const hoisted = [];
    const functions = [];
    const edit = (from, to, text) => edits.push({ from: from, to: to, text: text });
    if (code.startsWith('#!')) edit(0, 2, '//');
    visit(tree, (node) => {
      if (node.type === 'ImportExpression') edit(node.start, node.start + 6, IMPORT);
    });
    // const a = 1, {b} = c  becomes  void ((a = 1), ({b} = c)), assignments to the globals declared above.
    const assign = (node) => {
      edit(node.start, node.start + node.kind.length, 'void (');
      node.declarations.forEach((declaration) => {
        names(declaration.id, hoisted);
        if (declaration.init) {
          edit(declaration.start, declaration.start, '(');
          edit(declaration.end, declaration.end, ')');
        } else if (node.kind !== 'var') edit(declaration.end, declaration.end, ' = undefined');
      });
      const last = node.declarations[node.declarations.length - 1];
      edit(last.end, last.end, ')');
      if (code[node.end - 1] !== ';') edit(node.end, node.end, ';');
    };
    // A var in a block or a loop's head outside any function is global too, as in a script.
    (function vars(node, parent) {
      if (/Function|StaticBlock/.test(node.type)) return;
      if (node.type === 'VariableDeclaration' && node.kind === 'var' && parent && parent.type !== 'Program') {
        const head =
          (parent.type === 'ForStatement' && parent.init === node) ||
          (/^For(In|Of)Statement$/.test(parent.type) && parent.left === node);
        if (!head) return assign(node);
        node.declarations.forEach((declaration) => names(declaration.id, hoisted));
        edit(node.start, node.start + 3, '');
      }
      for (const key of Object.keys(node)) {
        const child = node[key];
        for (const each of Array.isArray(child) ? child : [child])
          if (each && typeof each.type === 'string') vars(each, node);
      }
    })(tree, null);
    tree.body.forEach((node, index) => {
      if (node.type === 'VariableDeclaration') assign(node);
      else if (node.type === 'FunctionDeclaration') {
        hoisted.push(node.id.name);
        functions.push(node.id.name);
      } else if (node.type === 'ClassDeclaration') {
        hoisted.push(node.id.name);
        edit(node.start, node.start, node.id.name + ' = ');
        edit(node.end, node.end, ';');
      } else if (node.type === 'ImportDeclaration') {
        const from = IMPORT + '(' + JSON.stringify(node.source.value) + ')';
        const whole = node.specifiers.find((s) => s.type === 'ImportNamespaceSpecifier');
        const parts = node.specifiers
          .filter((s) => s.type !== 'ImportNamespaceSpecifier')
          .map((s) => {
            const imported =
              s.type === 'ImportDefaultSpecifier'
                ? 'default'
                : s.imported.type === 'Identifier'
                  ? s.imported.name
                  : JSON.stringify(s.imported.value);
            return imported + ': ' + s.local.name;
          });
        node.specifiers.forEach((s) => hoisted.push(s.local.name));
        const pick = parts.length ? '({ ' + parts.join(', ') + ' } = ' : '';
        const text = whole
          ? 'void (' + whole.local.name + ' = await ' + from + (pick ? ', ' + pick + whole.local.name + ')' : '') + ');'
          : pick
            ? 'void ' + pick + 'await ' + from + ');'
            : 'await ' + from + ';';
        edit(node.start, node.end, text);
      }
      if (index === tree.body.length - 1 && node.type === 'ExpressionStatement') {
        // On the statement's own line: V8 places some errors at the return, and the line should be the code's.
        const end = code[node.end - 1] === ';' ? node.end - 1 : node.end;
        edit(node.start, node.start, 'return (');
        edit(end, end, ')');
      }
    });
    // In the order of the code; where text is both inserted and replaced, the insertion first.
    edits.sort((a, b) => a.from - b.from || Number(a.to > a.from) - Number(b.to > b.from));
    let body = '';
    let at = 0;
    for (const change of edits) {
      body += code.slice(at, change.from) + change.text;
      at = Math.max(at, change.to);
    }
    body += code.slice(at);
    const declared = Array.from(new Set(hoisted));
    const head =
      (declared.length ? 'var ' + declared.join(', ') + '; ' : '') +
      '(async () => {' +
      functions.map((name) => ' this.' + name + ' = ' + name + ';').join('') +
      '\n';
    // The wrapper's own call is on the line after the code's last; its frame is left out of stacks.
    return { source: head + body + '\n})()', wrapperLine: body.split('\n').length + 1 };
  }

  // Without the parser (or for syntax it does not know) the code runs as it is, and if that is not a
  // valid script, in an async function; a syntax error is V8's own, with its line.
  function compile(code) {
    const prepared = prepare(code);
    if (prepared) {
      current.wrapperLine = prepared.wrapperLine;
      return new vm.Script(prepared.source, { filename: CELL, lineOffset: -1 });
    }
    try {
      return new vm.Script(code, { filename: CELL });
    } catch (error) {
      current.wrapperLine = code.split('\n').length + 1;
      return new vm.Script('(async () => {\n' + code + '\n})()', { filename: CELL, lineOffset: -1 });
    }
  }

  function shownError(error) {
    if (!util.types.isNativeError(error) && !(error instanceof Error)) return util.inspect(error);
    let text;
    try {
      text = util.inspect(error);
    } catch (failed) {
      text = String(error && error.stack);
    }
    return userFrames(text, current ? current.wrapperLine : 0);
  }

  // The code's own frames: the kernel's, and those below the cell's last, are left out.
  function userFrames(text, wrapperLine) {
    const frame = /^\s+at /;
    const kernel = /\[eval\]|node:vm:|node:internal\/vm[:\/]|node:internal\/process\/execution/;
    // How a call reached the kernel, in a stack with no frame of the code's own.
    const delivery = /node:events:|node:internal\/child_process|node:internal\/process\/task_queues/;
    const wrapper = wrapperLine ? CELL + ':' + wrapperLine + ':' : null;
    const lines = text.split('\n');
    const kept = [];
    for (let i = 0; i < lines.length; ) {
      if (!frame.test(lines[i])) {
        kept.push(lines[i++]);
        continue;
      }
      let end = i;
      while (end < lines.length && frame.test(lines[end])) end++;
      const block = lines.slice(i, end).filter((line) => !kernel.test(line) && !(wrapper && line.includes(wrapper)));
      let last = -1;
      block.forEach((line, k) => {
        if (line.includes(CELL)) last = k;
      });
      kept.push(...(last >= 0 ? block.slice(0, last + 1) : block.filter((line) => !delivery.test(line))));
      i = end;
    }
    return kept.join('\n');
  }

  function drained(stream) {
    return new Promise((resolve) => {
      if (!stream.writableLength) return resolve();
      stream.once('drain', resolve);
      setTimeout(resolve, 2000);
    });
  }

  async function next() {
    while (work.length) {
      const request = work[0];
      const started = Date.now();
      let value = null;
      let error = null;
      let interrupted = false;
      let giveUp;
      const interruption = new Promise((resolve, reject) => (giveUp = reject));
      interruption.catch(() => {});
      const INTERRUPTED = {};
      current = { interrupt: () => giveUp(INTERRUPTED), wrapperLine: 0 };
      try {
        const code = typeof request.code === 'string' ? request.code : '';
        const script = compile(code);
        const result = script.runInThisContext({ breakOnSigint: true, displayErrors: false });
        const settled = await Promise.race([Promise.resolve(result), interruption]);
        if (settled !== undefined) {
          value = util.inspect(settled, { showProxy: true });
          // _ is the last value, as in the REPL, until the code makes _ its own.
          if (!('_' in globalThis) || globalThis._ === lastValue) globalThis._ = lastValue = settled;
        }
      } catch (caught) {
        if (caught === INTERRUPTED) {
          interrupted = true;
          error =
            'Interrupted (SIGINT): the call stopped waiting for its promise. The state is kept; timers and callbacks the code started may still run.';
        } else if (caught && caught.code === 'ERR_SCRIPT_EXECUTION_INTERRUPTED') {
          interrupted = true;
          error = 'Interrupted (SIGINT): the running code was stopped. The state is kept.';
        } else error = shownError(caught);
      }
      current = null;
      await drained(proc.stdout);
      await drained(proc.stderr);
      try {
        fs.writeSync(1, MARK);
      } catch (failed) {}
      try {
        fs.writeSync(2, MARK);
      } catch (failed) {}
      proc.send({ id: request.id, value: value, error: error, interrupted: interrupted, ms: Date.now() - started });
      work.shift();
    }
  }

  proc.send({ ready: true });
})();
`;

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
    const mime = IMAGE_TYPES[path.extname(name).toLowerCase()];
    if (!mime || after.get(name) === before.get(name) || !after.get(name).endsWith(':true')) continue;
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
