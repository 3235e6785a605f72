/**
 * The persistent Node.js interpreter inside a sandbox: the same protocol and guarantees as the Python
 * one (pythonKernel.ts), in four small Node scripts, so that an image with node and no python3 runs
 * it. The kernel is here; the launcher, the supervisor that serves the socket and the client are in
 * nodeSupervisor.ts.
 *
 * NODE_KERNEL runs the code in the process's own global scope, as the `node` REPL does: top-level
 * declarations become globals, so they outlive the call; the code runs in an async function, so
 * top-level await works and a final Promise is awaited; the final expression's value is shown with
 * util.inspect; an exception returns its stack and keeps the state; SIGINT (sent on a timeout) stops
 * a synchronous loop (vm's breakOnSigint) or stops waiting for a pending promise. It gets its calls
 * from the supervisor over an IPC channel, one at a time; its stdout and stderr are the supervisor's
 * pipes, and it writes a marker to both when a call is done.
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
