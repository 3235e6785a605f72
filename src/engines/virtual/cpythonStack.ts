/**
 * A C stack for just-bash's CPython. Its python.wasm is linked with Emscripten's default stack of
 * 64 KiB, placed right above CPython's static data, and WebAssembly has no guard page: running a
 * script file takes about 78 KiB (computing sys.path[0] puts some 64 KiB of path buffers on the
 * stack), so the stack ran past its end into the static data below it. What that overwrote
 * depended on where the stack stood when main() began, which moves with the size of the arguments
 * (callMain copies argv, the worker's own file path first, onto the stack): for some sizes the
 * interpreter printed its output and then aborted while finalizing ("Fatal Python error:
 * gilstate_tss_clear: failed to clear current tstate (TSS)"), for others a call went through a
 * clobbered function pointer ("table index is out of bounds"). The extension installed in VS Code
 * hit it on every run, from the length of its install path.
 *
 * The stack is only the __stack_pointer global and the memory below it, so each interpreter gets a
 * block of its own heap as its stack before main() runs. 4 MiB: the deepest runs measured (nested
 * containers' repr at CPython's C recursion limit, __getattr__ recursion under a raised recursion
 * limit) took under 0.9 MiB before CPython stopped them or the worker's own 4 MiB JavaScript stack
 * ran out. The block fits in the memory the module starts with (20 MiB), so it costs no growth.
 */

/** The two exports of python.wasm this needs. */
export interface CPythonStackExports {
  malloc(size: number): number;
  _emscripten_stack_restore(pointer: number): void;
}

export const CPYTHON_STACK_BYTES = 4 * 1024 * 1024;

/** Moves the interpreter's C stack into a block of its heap; throws when the heap has no room for it. */
export function moveCPythonStack(exports: CPythonStackExports, bytes = CPYTHON_STACK_BYTES): void {
  const base = exports.malloc(bytes) >>> 0;
  if (base === 0)
    throw new Error(
      `its memory limit left no room for its C stack of ${bytes / (1024 * 1024)} MiB; raise the sandbox's memory limit`,
    );
  // The stack grows down from the block's end, aligned as the ABI wants (16 bytes).
  exports._emscripten_stack_restore(Math.floor((base + bytes) / 16) * 16);
}
