/** What each CLI command does, on the same core the extension uses. */
import { readFile } from 'node:fs/promises';
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { runCompute } from '../core/compute';
import type { ExecResult, SandboxEngine, SessionInfo } from '../core/engine';
import { SandboxError } from '../core/errors';
import { resolveSpec } from '../core/resolveSpec';
import { DEFAULT_SESSION, openSession, requireSession } from '../core/sessions';
import { DockerEngine } from '../engines/docker/dockerEngine';
import { runtimeFlag, specFromFlags, usageError, type ParsedArgs } from './args';
import type { Output } from './output';

export interface CommandContext {
  args: ParsedArgs;
  output: Output;
  signal: AbortSignal;
  readStdin: () => Promise<string>;
}

export function createEngine(args: ParsedArgs): SandboxEngine {
  const runtime = runtimeFlag(args.values.runtime) ?? 'python';
  return new DockerEngine({ host: args.values['engine-host'], images: args.values.image ? { [runtime]: args.values.image } : undefined });
}

function workspaceFolder(args: ParsedArgs): string {
  const folder = resolve(args.values.folder ?? process.cwd());
  try {
    return realpathSync(folder);
  } catch {
    throw usageError(`The folder ${folder} does not exist.`);
  }
}

/** Exit code of the CLI for a sandboxed call: the program's own, 124 on timeout, like coreutils' timeout. */
export function exitCodeFor(result: ExecResult): number {
  switch (result.outcome) {
    case 'ok':
      return 0;
    case 'timeout':
      return 124;
    case 'cancelled':
      return 130;
    case 'oom':
      return 137;
    default:
      return result.exitCode ?? 125;
  }
}

export async function runCommand(engine: SandboxEngine, context: CommandContext): Promise<number> {
  const { args, output, signal } = context;
  const { values, positionals } = args;
  const sources = [values.code !== undefined, values.file !== undefined, positionals[0] === '-'].filter(Boolean).length;
  if (sources !== 1 || positionals.length > (positionals[0] === '-' ? 1 : 0)) {
    throw usageError('run takes exactly one of --code CODE, --file PATH, or - (read the code from standard input).');
  }
  const code = values.code ?? (values.file !== undefined ? await readFile(values.file, 'utf8').catch((error: Error) => {
    throw usageError(`Cannot read ${values.file}: ${error.message}`);
  }) : await context.readStdin());
  const spec = resolveSpec({ mode: 'compute' }, specFromFlags(values), values.workspace ? { workspaceAccess: values.workspace as 'none' } : undefined);
  const folder = spec.workspaceAccess === 'none' ? undefined : workspaceFolder(args);
  const result = await runCompute(engine, spec, { code }, { signal, workspaceFolder: folder, onProgress: (progress) => output.progress(progress.message) });
  output.execResult(result, { runtime: spec.runtime, engine: engine.kind });
  return exitCodeFor(result);
}

export async function openCommand(engine: SandboxEngine, context: CommandContext): Promise<number> {
  const { args, output, signal } = context;
  if (args.positionals.length) throw usageError(`open takes no arguments (got "${args.positionals.join(' ')}").`);
  const spec = resolveSpec({ mode: 'code' }, specFromFlags(args.values));
  const name = args.values.session ?? DEFAULT_SESSION;
  const { sandbox, created } = await openSession(engine, spec, { name, workspaceFolder: workspaceFolder(args), signal, onProgress: (progress) => output.progress(progress.message) });
  output.session(sandbox.info, created);
  return 0;
}

export async function execCommand(engine: SandboxEngine, context: CommandContext): Promise<number> {
  const { args, output, signal } = context;
  if (args.positionals.length === 0) throw usageError('exec needs a command after --, like: agent-sandbox exec -- python3 -c "print(42)"');
  const sandbox = await requireSession(engine, args.values.session ?? DEFAULT_SESSION, workspaceFolder(args), signal);
  const timeout = args.values.timeout !== undefined ? Number(args.values.timeout) : undefined;
  if (timeout !== undefined && !(timeout > 0)) throw usageError(`--timeout must be a positive number of seconds, not "${args.values.timeout}".`);
  const cmd = args.positionals.length === 1 && /\s/.test(args.positionals[0]!) ? undefined : args.positionals;
  const stdin = args.values.interactive ? await context.readStdin() : undefined;
  const result = await sandbox.exec({ ...(cmd ? { cmd } : { command: args.positionals[0]! }), stdin, timeoutSeconds: timeout }, signal);
  output.execResult(result, { session: sandbox.info.name, engine: engine.kind });
  return exitCodeFor(result);
}

export async function lsCommand(engine: SandboxEngine, context: CommandContext): Promise<number> {
  const { args, output, signal } = context;
  const sessions = await engine.list(args.values['all-folders'] ? {} : { workspaceFolder: workspaceFolder(args) }, signal);
  output.sessions(sessions);
  return 0;
}

export async function closeCommand(engine: SandboxEngine, context: CommandContext): Promise<number> {
  const { args, output, signal } = context;
  const folder = workspaceFolder(args);
  if (args.values.all === (args.values.session !== undefined)) throw usageError('close takes either --session NAME or --all.');
  let targets: SessionInfo[];
  if (args.values.all) {
    targets = await engine.list({ workspaceFolder: folder }, signal);
  } else {
    const name = args.values.session!;
    targets = await engine.list({ name, workspaceFolder: folder }, signal);
    if (targets.length === 0) throw new SandboxError('session-not-found', `No session named "${name}" is open for ${folder}.`, 'List sessions with agent-sandbox ls.');
  }
  for (const session of targets) await engine.remove(session.id, signal);
  output.closed(targets);
  return 0;
}

export async function engineCommand(engine: SandboxEngine, context: CommandContext): Promise<number> {
  context.output.engine(await engine.info(context.signal));
  return 0;
}
