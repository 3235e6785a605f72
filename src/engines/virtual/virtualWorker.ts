/**
 * The worker thread of one virtual sandbox: loads just-bash (and through it, only when a program
 * asks, WebAssembly CPython or QuickJS), holds the sandbox's file system, and runs commands and file
 * operations on request. A worker keeps a runaway loop off the editor's thread, and can be ended
 * whole when a command ignores its deadline. The session's persistent Python runs in a worker of
 * its own, started from here on first use (sessionPython.ts), over this worker's file system.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { IFileSystem, SecureFetch } from 'just-bash';
import { DISK_LIMIT_NEXT, DISK_LIMIT_REACHED } from '../../core/limits/diskLimit';
import { SandboxError } from '../../core/errors';
import { formatSize } from '../../core/spec/units';
import { allowlistFetch } from './allowlistFetch';
import { deletePath, listFiles, readFile, writeFiles } from './fileOps';
import { pythonCommands } from './pythonCommand';
import { PythonProcess } from './pythonOnce';
import type {
  ExecPayload,
  ExecReply,
  PythonRunPayload,
  WireError,
  WorkerMessage,
  WorkerConfigure,
  WorkerRequest,
  WorkerSetup,
} from './protocol';
import { SessionPython } from './sessionPython';
import { buildFileSystem, SANDBOX_HOME } from './workerFileSystem';
import { wgetCommand } from './wgetCommand';

type JustBash = typeof import('just-bash');

const port = parentPort!;
/** The sandbox this worker is for, from its WorkerConfigure; a warm worker waits for it with just-bash loaded. */
let setup: WorkerSetup;
/** CPython compiled once by the engine's process, for the python3 command and the session's Python. */
let cpython: WebAssembly.Module | undefined;
/** The interpreter for this sandbox's first python3 command, started with the worker when it had CPython (booted warm). */
let sparePython: PythonProcess | undefined;
/** A sandbox that ran no python3 this long after it started gives its waiting interpreter's memory back. */
const SPARE_PYTHON_MS = 30_000;

/** The waiting interpreter, or a new one: each python3 command gets its own. */
function takePython(module: WebAssembly.Module): PythonProcess {
  const spare = sparePython;
  sparePython = undefined;
  return spare ?? new PythonProcess(module);
}
const running = new Map<number, AbortController>();
/** The scratch file system's and output's bounds while the worker warms up. */
const WARM_UP_BYTES = 1 << 20;
/**
 * The shell's own loop and command counts are lifted: its time limit (a deadline checked between
 * statements) stops it. awk, sed and jq keep their iteration caps, since a loop inside one of them
 * never reaches a statement boundary and would cost the whole session at the deadline.
 */
const UNBOUNDED = Number.MAX_SAFE_INTEGER;
const DEADLINE = /\n?bash: (?:execution exceeded execution deadline \(\d+ms\)|.* exceeded its execution deadline)\n$/;
const ABORTED = /\n?bash: execution aborted\n$/;

function post(message: WorkerMessage): void {
  port.postMessage(message);
}

function wireError(error: unknown): WireError {
  if (SandboxError.is(error))
    return { reason: error.reason, message: error.message, ...(error.hint ? { hint: error.hint } : {}) };
  const message = error instanceof Error ? error.message : String(error);
  if (/ENOSPC|byte limit exceeded/.test(message))
    return {
      reason: 'disk-limit',
      message: `${DISK_LIMIT_REACHED}: the sandbox's files are kept in its memory, at most ${formatSize(setup?.maxMemoryBytes ?? 0)} (${message})`,
      hint: DISK_LIMIT_NEXT,
    };
  if (/EROFS|read-only/i.test(message))
    return {
      reason: 'read-only',
      message: `The workspace is read-only: ${message}`,
      hint: 'Ask the user for read-write workspace access (setting agentSandbox.workspaceAccess, or --workspace rw), or write under /tmp instead.',
    };
  if (/EACCES|EPERM/.test(message))
    return {
      reason: 'permission-denied',
      message: `Permission denied: ${message}`,
      hint: 'Write somewhere the sandbox owns, like a new folder in /workspace.',
    };
  if (/ENOENT/.test(message))
    return { reason: 'file-not-found', message, hint: 'List the directory with sandbox_fs_list to see what is there.' };
  return {
    reason: 'engine-error',
    message: `The virtual engine failed: ${message}`,
    hint: 'Try again; if it persists, reopen the session.',
  };
}

function commands(jb: JustBash): ReturnType<JustBash['defineCommand']>[] {
  // curl is just-bash's own, present only with a fetch; wget is ours, over the same fetch.
  const python = cpython
    ? {
        start: () => takePython(cpython!),
        memoryBytes: setup.pythonMemoryBytes,
        maxFileBytes: setup.maxMemoryBytes,
        maxFileReadBytes: setup.maxFileReadBytes,
      }
    : undefined;
  const own = [...(setup.python ? pythonCommands(jb, python) : []), ...(setup.network ? [wgetCommand(jb)] : [])];
  if (setup.javascript) {
    // `node` is what agents type; js-exec is just-bash's (QuickJS) JavaScript runner.
    return [
      ...own,
      jb.defineCommand('node', async (args, ctx) =>
        ctx.exec!('js-exec', { cwd: ctx.cwd, args, stdin: jb.latin1FromBytes(ctx.stdin), stdinKind: 'bytes' }),
      ),
    ];
  }
  const unavailable = (name: string) =>
    jb.defineCommand(name, async () => ({
      stdout: '',
      stderr: `${name}: JavaScript in the virtual engine needs Node.js 22.6 or newer, and this host runs Node.js ${process.versions.node}. Use the Docker engine to run JavaScript.\n`,
      exitCode: 127,
    }));
  return [...own, unavailable('node'), unavailable('js-exec')];
}

/**
 * Our fetch is the engine's own code, not the sandbox's: just-bash's defense in depth would block
 * what Node's TLS reads (process.env) while a command runs, so the request runs as trusted code.
 */
function trustedFetch(jb: JustBash, fetch: SecureFetch): SecureFetch {
  return (url, init) => jb.DefenseInDepthBox.runTrustedAsync(() => fetch(url, init));
}

async function exec(jb: JustBash, fs: IFileSystem, id: number, payload: ExecPayload): Promise<ExecReply> {
  const cwd = await fs.stat(payload.cwd).catch(() => undefined);
  if (!cwd?.isDirectory)
    return {
      stdout: '',
      stderr: `The working directory ${payload.cwd} does not exist.\n`,
      exitCode: 1,
      timedOut: false,
      cancelled: false,
    };
  const controller = new AbortController();
  running.set(id, controller);
  try {
    // A fresh shell per call over the session's file system: state other than files resets, as between two `sh -c`.
    const runtimeMs = payload.timeoutMs + 1000;
    const bash = new jb.Bash({
      fs,
      cwd: payload.cwd,
      env: payload.env,
      python: setup.python,
      javascript: setup.javascript,
      customCommands: commands(jb),
      // The allowlist tier: curl and wget reach the allowed names through our fetch, and nothing else.
      ...(setup.network
        ? {
            fetch: trustedFetch(
              jb,
              allowlistFetch({
                ...setup.network,
                timeoutMs: payload.timeoutMs,
                signal: controller.signal,
                onDecision: (decision) => post({ type: 'decision', decision }),
              }),
            ),
          }
        : {}),
      executionLimits: {
        maxExecutionTimeMs: payload.timeoutMs,
        maxPythonTimeoutMs: runtimeMs,
        maxJsTimeoutMs: runtimeMs,
        maxSqliteTimeoutMs: runtimeMs,
        maxLoopIterations: UNBOUNDED,
        maxCommandCount: UNBOUNDED,
        maxWorkUnits: UNBOUNDED,
        maxOutputSize: payload.maxOutputBytes,
      },
    });
    // The braces keep what was printed before a deadline or an abort (just-bash drops it otherwise).
    const script = payload.scriptFile
      ? await fs.readFile(payload.scriptFile).catch(() => payload.script)
      : payload.script;
    const result = await bash.exec(`{\n${script}\n}`, {
      stdin: payload.stdin,
      stdinKind: payload.stdinKind,
      signal: controller.signal,
      rawScript: true,
    });
    const timedOut = result.exitCode === 124 && DEADLINE.test(result.stderr);
    const cancelled = !timedOut && controller.signal.aborted && ABORTED.test(result.stderr);
    const stderr = timedOut
      ? result.stderr.replace(DEADLINE, '')
      : cancelled
        ? result.stderr.replace(ABORTED, '')
        : result.stderr;
    return { stdout: result.stdout, stderr, exitCode: result.exitCode, timedOut, cancelled };
  } finally {
    running.delete(id);
  }
}

let python: SessionPython | undefined;

async function runPython(fs: IFileSystem, id: number, payload: PythonRunPayload): Promise<unknown> {
  const controller = new AbortController();
  running.set(id, controller);
  try {
    python ??= new SessionPython(fs, setup, cpython);
    return await python.run(payload, controller.signal);
  } finally {
    running.delete(id);
  }
}

async function handle(jb: JustBash, fs: IFileSystem, request: WorkerRequest): Promise<unknown> {
  switch (request.type) {
    case 'python-open':
      python ??= new SessionPython(fs, setup, cpython);
      return python.open(request);
    case 'python-run':
      return runPython(fs, request.id, request);
    case 'exec':
      return exec(jb, fs, request.id, request);
    case 'abort':
      running.get(request.target)?.abort(new Error('cancelled'));
      return null;
    case 'place':
      return writeFiles(fs, request.files, false);
    case 'write':
      return writeFiles(fs, request.files, true);
    case 'read':
      return readFile(fs, request.path, request.maxBytes, request.encoding, request.offset);
    case 'list':
      return listFiles(fs, request.path, request.depth, request.most);
    case 'delete':
      return deletePath(fs, request.path, request.recursive);
  }
}

/**
 * Runs a compute run's steps on a scratch file system built as a sandbox's is (buildFileSystem,
 * then place, then exec with the sandbox's own shell options), which is then dropped, so that the
 * sandbox's first command finds that code compiled: a shell on a file system of its kind took 2 to
 * 4 ms to construct cold, against 0.4 ms warm. Nothing of a sandbox is here yet: each worker serves one.
 */
async function warmUp(jb: JustBash): Promise<void> {
  setup = {
    access: 'none',
    python: true,
    javascript: false,
    maxMemoryBytes: WARM_UP_BYTES,
    maxFileReadBytes: WARM_UP_BYTES,
    protectedPaths: [],
    pythonMemoryBytes: 0,
  };
  const scratch = await buildFileSystem(jb, setup);
  const script = '/tmp/warm/main.sh';
  const code =
    'echo warm > /tmp/warm/out; cat /tmp/warm/out | wc -l; x=$((1 + 1)); [ "$x" = 2 ] && printf "%s\\n" "$x"';
  await writeFiles(scratch, [{ path: script, data: Buffer.from(code), mode: 0o644 }], false);
  await exec(jb, scratch, -1, {
    script: `bash ${script}`,
    scriptFile: script,
    cwd: '/workspace',
    env: { HOME: SANDBOX_HOME, PATH: '/usr/bin:/bin' },
    timeoutMs: 10_000,
    maxOutputBytes: WARM_UP_BYTES,
  });
}

async function configure(jb: JustBash, message: WorkerConfigure): Promise<void> {
  setup = message.setup;
  cpython = message.cpython;
  if (!setup.python || !cpython) {
    sparePython?.kill();
    sparePython = undefined;
  } else if (sparePython)
    setTimeout(() => {
      sparePython?.kill();
      sparePython = undefined;
    }, SPARE_PYTHON_MS).unref();
  let fs: IFileSystem;
  try {
    fs = await buildFileSystem(jb, setup);
  } catch (error) {
    post({ type: 'failed', error: wireError(error) });
    return;
  }
  port.on('message', (request: WorkerRequest) => {
    handle(jb, fs, request).then(
      (value) => post({ type: 'reply', id: request.id, ok: true, value }),
      (error: unknown) => post({ type: 'reply', id: request.id, ok: false, error: wireError(error) }),
    );
  });
  post({ type: 'ready' });
}

async function main(): Promise<void> {
  let jb: JustBash;
  try {
    jb = await import('just-bash');
    await warmUp(jb);
    const boot = (workerData ?? {}) as { cpython?: WebAssembly.Module };
    if (boot.cpython) {
      sparePython = new PythonProcess(boot.cpython);
      await sparePython.loaded;
    }
  } catch (error) {
    post({ type: 'failed', error: wireError(error) });
    return;
  }
  port.once('message', (message: WorkerConfigure) => void configure(jb, message));
  post({ type: 'booted' });
}

void main();
