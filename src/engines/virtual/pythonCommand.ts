/**
 * `python3` and `python` as a program expects them. With CPython compiled by the engine's process,
 * the command runs its own interpreter (pythonOnce.ts), which reads every argument as real Python
 * does. Without it, just-bash's command runs: its CPython runs a wrapper script from its own /tmp,
 * so neither the script's folder nor the working directory is on sys.path and a program cannot
 * import its own modules. This wraps that command: the folder that real Python would put first on
 * sys.path (the script's, or the working directory for -c, -m and stdin) is put there, as the
 * interpreter sees it (the sandbox's files appear under /host).
 */
import { posix } from 'node:path';
import type { IFileSystem } from 'just-bash';
import type { PythonProcess } from './pythonOnce';

type JustBash = typeof import('just-bash');

/** Where just-bash's CPython sees the sandbox's file system. */
const HOST_MOUNT = '/host';
/** Options of real Python that change nothing here (output is never buffered, nothing is cached). */
const IGNORED = new Set(['-u', '-B', '-s', '-E']);

function pathPrelude(folder: string): string {
  return `import sys as _jb_sys; _jb_sys.path.insert(0, ${JSON.stringify(HOST_MOUNT + folder)}); del _jb_sys`;
}

/** The arguments for the bundled python3, with the folder of the program first on sys.path. */
export async function pythonArguments(args: readonly string[], cwd: string, fs: IFileSystem): Promise<string[]> {
  const rest = args.filter(
    (arg, index) =>
      !(
        IGNORED.has(arg) &&
        args.slice(0, index).every((before) => before.startsWith('-') && before !== '-c' && before !== '-m')
      ),
  );
  const first = rest[0];
  if (first === undefined || first === '-')
    return [
      '-c',
      `${pathPrelude(cwd)}\nimport sys as _jb_sys\nexec(compile(_jb_sys.stdin.read(), '<stdin>', 'exec'))`,
      ...rest.slice(1),
    ];
  if (first === '-c' && rest.length >= 2) {
    const code = rest[1]!;
    // `from __future__` must come first; such a program keeps the plain sys.path.
    return /^\s*from\s+__future__\s/.test(code) ? [...rest] : ['-c', `${pathPrelude(cwd)}\n${code}`, ...rest.slice(2)];
  }
  if (first === '-m' && rest.length >= 2 && /^[A-Za-z_][A-Za-z0-9_.]*$/.test(rest[1]!)) {
    return [
      '-c',
      `${pathPrelude(cwd)}\nimport runpy\nrunpy.run_module(${JSON.stringify(rest[1])}, run_name='__main__', alter_sys=True)`,
      ...rest.slice(2),
    ];
  }
  if (first.startsWith('-')) return [...rest];
  const script = posix.resolve(cwd, first);
  if (!(await fs.exists(script))) return [...rest]; // the bundled command says it cannot open the file
  const run = [
    pathPrelude(posix.dirname(script)),
    'import sys as _jb_sys',
    `_jb_sys.argv[0] = ${JSON.stringify(first)}`,
    `_jb_path = ${JSON.stringify(script)}`,
    "exec(compile(open(_jb_path).read(), _jb_path, 'exec'), {'__name__': '__main__', '__file__': _jb_path, '__builtins__': __builtins__})",
  ].join('\n');
  return ['-c', run, ...rest.slice(1)];
}

/** What the python3 command needs to run its own CPython (pythonOnce.ts) instead of just-bash's. */
export interface OwnPython {
  /** A new interpreter, loaded and waiting for its command. */
  start(): PythonProcess;
  memoryBytes: number;
  maxFileBytes: number;
  maxFileReadBytes: number;
}

export function pythonCommands(jb: JustBash, own?: OwnPython): ReturnType<JustBash['defineCommand']>[] {
  return ['python3', 'python'].map((name) =>
    jb.defineCommand(name, async (args, ctx) => {
      if (own) {
        // CPython itself reads the arguments (its options, a program's own -h): the sandbox's files
        // are at their own paths, so sys.path is real Python's.
        const result = await own.start().run({
          fs: ctx.fs,
          argv: [...args],
          stdin: Buffer.from(jb.latin1FromBytes(ctx.stdin), 'latin1'),
          env: Object.fromEntries(ctx.env),
          cwd: ctx.cwd,
          outputCap: ctx.limits.maxOutputSize,
          memoryBytes: own.memoryBytes,
          maxFileBytes: own.maxFileBytes,
          maxFileReadBytes: own.maxFileReadBytes,
          timeoutMs: ctx.limits.maxPythonTimeoutMs,
          ...(ctx.signal ? { signal: ctx.signal } : {}),
        });
        return { ...result, stdoutKind: 'bytes' as const };
      }
      if (
        !ctx.origCommand ||
        args.includes('--version') ||
        args.includes('-V') ||
        args.includes('--help') ||
        args.includes('-h')
      )
        return ctx.origCommand!(args);
      return ctx.origCommand(await pythonArguments(args, ctx.cwd, ctx.fs));
    }),
  );
}
