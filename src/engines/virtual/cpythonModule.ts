/**
 * CPython's WebAssembly, compiled once per process and handed to every sandbox's worker, which hands
 * it to each Python it starts. One module is one body of machine code: V8 compiles a function the
 * first time any interpreter runs it, and every later interpreter of the process, in any thread, runs
 * that code at once (a fresh interpreter starts in about 60 ms instead of 200 ms). Node.js 20 cannot
 * keep a compiled module across processes (v8.serialize writes no WebAssembly.Module, and Node has no
 * WebAssembly code cache), so a new process compiles again; that compile itself takes about 15 ms.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

const compiled = new Map<string, Promise<WebAssembly.Module | undefined>>();

/** The compiled python.wasm of that folder; undefined when it cannot be read or compiled (each Python then compiles its own). */
export function cpythonModule(folder: string): Promise<WebAssembly.Module | undefined> {
  let module = compiled.get(folder);
  if (!module) {
    module = readFile(join(folder, 'python.wasm')).then(
      (bytes) => WebAssembly.compile(bytes),
      () => undefined,
    );
    compiled.set(folder, module);
  }
  return module.catch(() => undefined);
}
