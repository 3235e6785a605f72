/**
 * The worker thread of a session's persistent Python, started by the sandbox's worker: just-bash's
 * CPython in WebAssembly, loaded once and kept running the kernel program (virtualKernel.ts) between
 * calls, over the sandbox's own files (pythonFileSystem.ts). A timeout raises SIGINT through
 * CPython's signal buffer, which keeps the state; a call that will not stop costs this thread.
 */
import { readFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import {
  receiveInPython,
  SIGNAL,
  type FromPython,
  type FsOp,
  type PythonWorkerSetup,
  type ToPython,
} from './pythonChannel';
import { moveCPythonStack, type CPythonStackExports } from './cpythonStack';
import { Capture, makeAgentDevice, makeSleepDevice, type DeviceFs } from './pythonDevices';
import { PythonFileSystem } from './pythonFileSystem';
import { VIRTUAL_PYTHON_KERNEL } from './virtualKernel';

type WasmImports = { env: Record<string, (...args: number[]) => number> };
interface CPython {
  FS: DeviceFs & {
    init(input: () => number | null, output: (byte: number) => void, error: (byte: number) => void): void;
    writeFile(path: string, data: Uint8Array): void;
    chdir(path: string): void;
  };
  ENV: Record<string, string>;
  callMain(args: string[]): number;
}

const setup = workerData as PythonWorkerSetup & { module: WebAssembly.Module };
const view = new Int32Array(setup.shared);
const port = parentPort!;
let stdout = new Capture(setup.outputCap);
let stderr = new Capture(setup.outputCap);
/** A python3 command's stdin, and its heap's limit, known once the command comes. */
let stdin: Uint8Array = new Uint8Array(0);
let memoryBytes = setup.memoryBytes;
/**
 * Node.js modules and packages CPython's JavaScript loads as it runs; any other (net, child_process,
 * ws for its sockets) is refused. Files by path (tsx's own, in the tests) are code shipped with us.
 */
const ALLOWED_MODULES = new Set(['fs', 'node:fs', 'crypto', 'node:crypto']);

function post(message: FromPython): void {
  port.postMessage(message);
}

/** A file operation, done by the sandbox's worker while this thread waits; throws the errno's name. */
function fsRequest(op: FsOp): unknown {
  post({ type: 'fs', ...op });
  const reply = receiveInPython(view, setup.inbox);
  if (reply.type !== 'fs-reply') throw new Error('EIO');
  if (!reply.ok) throw new Error(reply.code);
  return reply.value;
}

/** After CPython's JavaScript is loaded, this thread may load nothing but what it needs. */
function refuseOtherModules(): void {
  const loader = Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown };
  const load = loader._load;
  loader._load = function (this: unknown, request: string, ...rest: unknown[]) {
    if (!/^[./]/.test(request) && !ALLOWED_MODULES.has(request))
      throw new Error(`The sandbox's Python may not load ${request}.`);
    return load.call(this, request, ...rest);
  };
}

async function main(): Promise<void> {
  const createPython = createRequire(__filename)(join(setup.cpython, 'python.cjs')) as (
    options: object,
  ) => Promise<CPython>;
  refuseOtherModules();
  let files: PythonFileSystem | undefined;
  let signalFlag: { memory: WebAssembly.Memory; address: number } | undefined;
  let stackExports: CPythonStackExports | undefined;
  const python = await createPython({
    noInitialRun: true,
    // CPython reads a signal number here at its eval loop's checks (emscripten_signal.c).
    Py_EmscriptenSignalBuffer: view.subarray(SIGNAL, SIGNAL + 1),
    instantiateWasm(imports: WasmImports, done: (instance: WebAssembly.Instance) => void) {
      // The heap grows up to the session's memory limit; past it, allocations fail (MemoryError) instead.
      const grow = imports.env.emscripten_resize_heap!;
      imports.env.emscripten_resize_heap = (size: number) => (size >>> 0 > memoryBytes ? 0 : grow(size));
      void WebAssembly.instantiate(setup.module, imports as unknown as WebAssembly.Imports).then((instance) => {
        const exports = instance.exports as unknown as CPythonStackExports & {
          memory: WebAssembly.Memory;
          Py_EMSCRIPTEN_SIGNAL_HANDLING: { value: number };
        };
        signalFlag = { memory: exports.memory, address: exports.Py_EMSCRIPTEN_SIGNAL_HANDLING.value };
        stackExports = exports;
        done(instance);
      });
      return {};
    },
    preRun: [
      (cpython: CPython) => {
        const FS = cpython.FS;
        FS.init(
          setup.once ? readStdin : () => null,
          (byte) => stdout.push(byte),
          (byte) => stderr.push(byte),
        );
        FS.mkdirTree('/lib');
        FS.writeFile('/lib/python313.zip', readFileSync(join(setup.cpython, 'python313.zip')));
        Object.assign(cpython.ENV, setup.env, {
          PYTHONHOME: '/',
          PYTHONPATH: '/lib/python313.zip',
          // No __pycache__ folders in the user's workspace.
          PYTHONDONTWRITEBYTECODE: '1',
        });
        // A python3 command's interpreter meets the sandbox's files when its command comes (runOnce).
        if (setup.once) return;
        files = new PythonFileSystem(FS, fsRequest, setup.maxFileBytes);
        files.mountFolders();
        makeAgentDevice(FS, { next: () => nextRequest(files!), line: (text) => answer(text, files!) });
        makeSleepDevice(FS, view);
        FS.chdir(setup.cwd);
      },
    ],
  });
  // Before main() runs, a C stack big enough for it (cpythonStack.ts).
  const moveStack = () => moveCPythonStack(stackExports!);
  if (setup.once) return runOnce(python, moveStack);
  // Signal checks are off unless the embedder turns them on (Pyodide does the same).
  new Int32Array(signalFlag!.memory.buffer)[signalFlag!.address >> 2] = 1;
  let why: string;
  try {
    moveStack();
    why = `ended with exit code ${python.callMain(['-c', VIRTUAL_PYTHON_KERNEL, String(setup.outputCap)])}`;
  } catch (error) {
    why = `failed (${(error as Error).message})`;
  }
  post({ type: 'ended', why: `The Python interpreter ${why}.` });
}

/**
 * A python3 command: waits for it (CPython loaded ahead), runs its arguments once as `python3 ARGS`
 * would, over the sandbox's files at their own paths; then its exit code and output go back.
 */
function runOnce(python: CPython, moveStack: () => void): void {
  post({ type: 'loaded' });
  const command = receiveInPython(view, setup.inbox);
  if (command.type !== 'command') return post({ type: 'ended', why: 'The Python interpreter got no command.' });
  stdout = new Capture(command.outputCap);
  stderr = new Capture(command.outputCap);
  stdin = command.stdin;
  memoryBytes = command.memoryBytes;
  Object.assign(python.ENV, command.env);
  const files = new PythonFileSystem(python.FS, fsRequest, command.maxFileBytes);
  let exitCode: number;
  try {
    files.mountFolders();
    python.FS.chdir(command.cwd);
    moveStack();
    exitCode = python.callMain(command.argv);
  } catch (error) {
    // sys.exit and os._exit end the runtime by throwing its ExitStatus.
    const status = (error as { status?: unknown }).status;
    if (typeof status === 'number') exitCode = status;
    else {
      stderr.pushText(`python3: the interpreter failed (${(error as Error).message})\n`);
      exitCode = 1;
    }
  }
  for (const failure of files.flushOpenFiles()) stderr.pushText(`python3: a file open was not saved: ${failure}\n`);
  const out = stdout.bytes();
  const err = stderr.bytes();
  post({
    type: 'exited',
    exitCode,
    stdout: out.data,
    stderr: err.data,
    stdoutBytes: out.bytes,
    stderrBytes: err.bytes,
  });
}

let stdinOffset = 0;

/** stdin for Emscripten's FS: one byte per call, null at its end. */
function readStdin(): number | null {
  return stdinOffset < stdin.length ? stdin[stdinOffset++]! : null;
}

let current: number | undefined;

/** Waits for the next call: before it runs, folders made since are mounted and lookups forgotten. */
function nextRequest(files: PythonFileSystem): Uint8Array {
  const message: ToPython = receiveInPython(view, setup.inbox);
  if (message.type !== 'run') return new Uint8Array(0);
  // What was written between calls (CPython's own start-up words) is no call's output.
  stdout.take();
  stderr.take();
  files.mountFolders();
  files.forgetLookups();
  current = message.id;
  return Buffer.from(`${JSON.stringify({ id: message.id, code: message.code })}\n`, 'utf8');
}

/** A line from the kernel program: that it is ready, or a call's reply, sent on with the call's output. */
function answer(text: string, files: PythonFileSystem): void {
  const message = JSON.parse(text) as {
    ready?: boolean;
    version?: string;
    id?: number;
    value: string | null;
    error: string | null;
    interrupted: boolean;
    images: { mime: string; data: string; source: string }[];
    imagesDropped: string[];
  };
  if (message.ready) return post({ type: 'ready', version: message.version ?? 'unknown' });
  for (const failure of files.flushOpenFiles())
    stderr.pushText(`A file open in the interpreter was not saved: ${failure}\n`);
  const out = stdout.take();
  const err = stderr.take();
  post({
    type: 'reply',
    id: current ?? -1,
    result: {
      ...(message.value !== null ? { value: message.value } : {}),
      ...(message.error !== null ? { error: message.error } : {}),
      interrupted: message.interrupted,
      stdout: out.text,
      stdoutBytes: out.bytes,
      stderr: err.text,
      stderrBytes: err.bytes,
      images: message.images.map((image) => ({ ...image, data: Buffer.from(image.data, 'base64') })),
      notices: message.imagesDropped.length
        ? [`Images not returned (at most 4, of 5 MiB each): ${message.imagesDropped.join(', ')}.`]
        : [],
    },
  });
}

main().catch((error: unknown) =>
  post({ type: 'ended', why: `The Python interpreter could not start: ${(error as Error).message}.` }),
);
