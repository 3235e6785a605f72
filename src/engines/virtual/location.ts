/**
 * Where the worker and just-bash are: beside the bundle (dist/just-bash/..., laid out like the
 * package so that just-bash finds its own workers and CPython next to it), or in the source tree
 * when running from TypeScript (tests).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** Bundled layout, relative to dist/: see esbuild.mjs. */
export const BUNDLED_WORKER = join('just-bash', 'dist', 'bundle', 'chunks', 'virtualWorker.js');

export interface WorkerLocation {
  /** The worker's entry file. */
  entry: string;
  /** True when it is TypeScript, run through tsx. */
  typescript: boolean;
  /** package.json of the just-bash in use, for its version. */
  packageJson: string;
}

/** just-bash's CPython (python.wasm and its standard library) beside that package.json, in the source tree and the bundle alike. */
export function cpythonFolder(location: WorkerLocation): string {
  return join(dirname(location.packageJson), 'vendor', 'cpython-emscripten');
}

export function workerLocation(): WorkerLocation {
  if (__filename.endsWith('.ts')) {
    return {
      entry: join(__dirname, 'virtualWorker.ts'),
      typescript: true,
      packageJson: join(__dirname, '..', '..', '..', 'node_modules', 'just-bash', 'package.json'),
    };
  }
  return {
    entry: join(__dirname, BUNDLED_WORKER),
    typescript: false,
    packageJson: join(__dirname, 'just-bash', 'package.json'),
  };
}

/**
 * The persistent Python's worker and just-bash's CPython, as the sandbox's worker finds them: beside
 * it in the bundle (chunks/pythonWorker.js, and vendor/ three folders up), or in the source tree.
 */
export function pythonWorkerLocation(): { entry: string; typescript: boolean; cpython: string } {
  if (__filename.endsWith('.ts')) {
    return {
      entry: join(__dirname, 'pythonWorker.ts'),
      typescript: true,
      cpython: join(__dirname, '..', '..', '..', 'node_modules', 'just-bash', 'vendor', 'cpython-emscripten'),
    };
  }
  return {
    entry: join(__dirname, 'pythonWorker.js'),
    typescript: false,
    cpython: join(__dirname, '..', '..', '..', 'vendor', 'cpython-emscripten'),
  };
}

/**
 * A worker thread on an entry file; from TypeScript (the tests), compiled on the fly by tsx, as the
 * main thread is. A bundled worker does not take the process's Node.js options: a loader the main
 * thread was started with (tsx's, in the benchmark) would be loaded again in every worker.
 */
export function startWorker(entry: string, typescript: boolean, options: WorkerOptions): Worker {
  return typescript
    ? new Worker(`require('tsx/cjs/api').register(); require(${JSON.stringify(entry)});`, { ...options, eval: true })
    : new Worker(entry, { execArgv: [], ...options });
}

let version: string | undefined;

/** just-bash's version, read from its package.json; "unknown" when it cannot be read. */
export function justBashVersion(location = workerLocation()): string {
  if (version) return version;
  try {
    version = String(
      (JSON.parse(readFileSync(location.packageJson, 'utf8')) as { version?: string }).version ?? 'unknown',
    );
  } catch {
    version = 'unknown';
  }
  return version;
}

/** js-exec imports node:module's stripTypeScriptTypes, which Node.js has from 22.6 on. */
export function javascriptSupported(nodeVersion = process.versions.node): boolean {
  const [major = 0, minor = 0] = nodeVersion.split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 6);
}
