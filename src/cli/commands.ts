/** What each CLI command does, on the same core the extension uses. */
import { copyFileLimit } from '../core/files/sandboxFileBytes';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KnownSecrets } from '../core/secrets/knownSecrets';
import { askedSecrets, secretNotices } from './secretFlags';
import type { SandboxEngine, SessionInfo } from '../core/engine/engine';
import { FileStore, defaultFileStoreFolder } from '../core/files/fileStore';
import { WorkspaceLeases, defaultStateDir } from '../core/sessions/leases';
import { removeOrphans } from '../core/sessions/orphans';
import { DEFAULT_SESSION, parseSandboxId, sandboxIdOf } from '../core/sessions/sessions';
import { evalAsExec } from '../core/tools/evalResult';
import { saveImages } from './savedImages';
import { specFromFlags, usageError, type ParsedArgs } from './args';
import { cliSandboxService, cliSettings } from './cliService';
import type { SandboxService } from '../core/sessions/sandboxService';
import type { CloseOptions } from '../core/sessions/serviceTypes';
import type { Output } from './output';
import { parseSize } from '../core/spec/units';
import { SandboxError } from '../core/errors';
import { copyDiff } from '../core/files/copyDiff';
import { applyCopyChanges } from '../core/files/copyApply';
import { requireBaseline } from '../core/files/copyPending';
import { ChangesAwaitReview, type HeldSession } from '../core/sessions/copyHold';

import { workspaceFolder, exitCodeFor } from './commandFlags';

export { createEngine } from './createEngine';
export { exitCodeFor, protectedPathsFlag, workspaceFolder } from './commandFlags';
export { runCommand } from './runCommand';

export interface CommandContext {
  args: ParsedArgs;
  output: Output;
  signal: AbortSignal;
  readStdin: () => Promise<string>;
  /** The secrets the command injects and redacts from what it prints (unless --show-secrets) and logs. */
  secrets: KnownSecrets;
}

/** The session the flags name: --session NAME, or a scoped one as ls shows it (agent:KEY/NAME); the default one without. */
function sessionFlag(args: ParsedArgs): string {
  return args.values.session ?? DEFAULT_SESSION;
}

export async function openCommand(engine: SandboxEngine, context: CommandContext): Promise<number> {
  const { args, output, signal } = context;
  if (args.positionals.length) throw usageError(`open takes no arguments (got "${args.positionals.join(' ')}").`);
  const { values } = args;
  const layer = specFromFlags(values);
  const folder = workspaceFolder(args);
  const { scope, name } = parseSandboxId(sessionFlag(args));
  const service = cliSandboxService(engine, folder, cliSettings(values, folder), { secrets: context.secrets });
  // Every secret the flags offer goes to this sandbox: a bound one's domains join its allowlist.
  const secrets = askedSecrets(values);
  const { sandbox, created, notices } = await service.openSession(
    { session: name, scope, layer, byUser: true, secrets },
    { signal, onProgress: (progress) => output.progress(progress.message) },
  );
  output.session(sandbox.info, created, [...notices, ...secretNotices(sandbox, created, secrets)]);
  return 0;
}

export async function execCommand(engine: SandboxEngine, context: CommandContext): Promise<number> {
  const { args, output, signal } = context;
  if (args.values.python !== undefined || args.values.node !== undefined) return interpreterCommand(engine, context);
  if (args.positionals.length === 0)
    throw usageError('exec needs a command after --, like: agent-sandbox exec -- python3 -c "print(42)"');
  const folder = workspaceFolder(args);
  const service = cliSandboxService(engine, folder, cliSettings(args.values, folder), { secrets: context.secrets });
  const sandbox = await service.requireSession(sessionFlag(args), { signal });
  const timeout = args.values.timeout !== undefined ? Number(args.values.timeout) : undefined;
  if (timeout !== undefined && !(timeout > 0))
    throw usageError(`--timeout must be a positive number of seconds, not "${args.values.timeout}".`);
  const cmd = args.positionals.length === 1 && /\s/.test(args.positionals[0]!) ? undefined : args.positionals;
  const stdin = args.values.interactive ? await context.readStdin() : undefined;
  const result = await sandbox.exec(
    { ...(cmd ? { cmd } : { command: args.positionals[0]! }), stdin, timeoutSeconds: timeout },
    signal,
  );
  output.execResult(result, { session: sandboxIdOf(sandbox.info), engine: engine.kind });
  return exitCodeFor(result);
}

/** `exec --python CODE` or `exec --node CODE`: the code in the session's persistent interpreter, its value printed as a REPL would. */
async function interpreterCommand(engine: SandboxEngine, context: CommandContext): Promise<number> {
  const { args, output, signal } = context;
  if (args.values.python !== undefined && args.values.node !== undefined)
    throw usageError('exec takes one of --python CODE and --node CODE, not both.');
  const [language, code] =
    args.values.node !== undefined ? (['node', args.values.node] as const) : (['python', args.values.python!] as const);
  if (args.positionals.length)
    throw usageError(`exec takes either --${language} CODE or a command after --, not both.`);
  const folder = workspaceFolder(args);
  const service = cliSandboxService(engine, folder, cliSettings(args.values, folder), { secrets: context.secrets });
  const sandbox = await service.requireSession(sessionFlag(args), { signal });
  const timeout = args.values.timeout !== undefined ? Number(args.values.timeout) : sandbox.info.spec.timeoutSeconds;
  if (!(timeout > 0)) throw usageError(`--timeout must be a positive number of seconds, not "${args.values.timeout}".`);
  try {
    const { interpreter, notices } = await service.interpreter(sandbox, language, signal);
    const evaluated = await interpreter.run(code, { timeoutMs: timeout * 1000, signal });
    const result = evalAsExec(evaluated, timeout, sandbox.info.spec.limits, notices);
    const saved = await saveImages(evaluated.images);
    const withValue = result.value === undefined ? result : { ...result, stdout: `${result.stdout}${result.value}\n` };
    const shown = {
      ...withValue,
      notices: [...withValue.notices, ...saved.map((image) => `image saved: ${image.path}`)],
    };
    output.execResult(shown, { session: sandboxIdOf(sandbox.info), engine: engine.kind });
    return evaluated.outcome === 'error' ? 1 : evaluated.outcome === 'crashed' ? 125 : exitCodeFor(result);
  } finally {
    // The interpreter stays with the session; only this command's connection to it ends.
    await service.closeInterpreters();
  }
}

export async function lsCommand(engine: SandboxEngine, context: CommandContext): Promise<number> {
  const { args, output, signal } = context;
  const folder = workspaceFolder(args);
  const service = cliSandboxService(engine, folder, cliSettings(args.values, folder), { secrets: context.secrets });
  output.sessions(args.values['all-folders'] ? await service.listAllFolders(signal) : await service.list(signal));
  return 0;
}

/**
 * `close`: a copy session with changes not applied to the folder stays open (exit 1) unless
 * --discard; --all closes the others and names the ones it kept.
 */
export async function closeCommand(engine: SandboxEngine, context: CommandContext): Promise<number> {
  const { args, output, signal } = context;
  const folder = workspaceFolder(args);
  if (args.values.all === (args.values.session !== undefined))
    throw usageError('close takes either --session NAME or --all.');
  const service = cliSandboxService(engine, folder, cliSettings(args.values, folder), { secrets: context.secrets });
  const options = { signal, discardChanges: Boolean(args.values.discard) };
  // A closed session's notices are what its removal found (a setuid bit stripped, say) and what it discarded.
  const { closed, held } = args.values.all
    ? await service.closeAll(options)
    : await closeOne(service, args.values.session!, options);
  output.closed(closed, held);
  return held.length ? 1 : 0;
}

/** One session closed, or kept open for its unapplied changes. */
async function closeOne(
  service: SandboxService,
  sandboxId: string,
  options: CloseOptions,
): Promise<{ closed: SessionInfo[]; held: HeldSession[] }> {
  try {
    return { closed: [await service.close(sandboxId, options)], held: [] };
  } catch (error) {
    if (!(error instanceof ChangesAwaitReview)) throw error;
    return { closed: [], held: [{ session: error.session, changes: error.changes }] };
  }
}

/** A copy session and the baseline of its copy, or why there is none. */
async function copySession(engine: SandboxEngine, context: CommandContext) {
  const { args, signal } = context;
  const folder = workspaceFolder(args);
  const service = cliSandboxService(engine, folder, cliSettings(args.values, folder), { secrets: context.secrets });
  const sandbox = await service.requireSession(sessionFlag(args), { signal });
  const id = sandboxIdOf(sandbox.info);
  if (sandbox.info.workspaceAccess !== 'copy') {
    throw new SandboxError(
      'invalid-input',
      `Session "${id}" has workspace access ${sandbox.info.workspaceAccess}, not copy: it has no copy to compare.`,
      'Open a session with --workspace copy to review its changes before they reach the folder.',
    );
  }
  return { sandbox, baseline: await requireBaseline(sandbox.info, defaultStateDir()) };
}

/** `diff`: what a copy session changed, against the baseline kept at its copy. */
export async function diffCommand(engine: SandboxEngine, context: CommandContext): Promise<number> {
  const { args, output, signal } = context;
  if (args.positionals.length) throw usageError(`diff takes no arguments (got "${args.positionals.join(' ')}").`);
  const { sandbox, baseline } = await copySession(engine, context);
  const result = await copyDiff(sandbox, baseline, { maxBytes: copyFileLimit(sandbox), signal });
  output.copyDiff(result, sandboxIdOf(sandbox.info));
  return 0;
}

/** `apply`: a copy session's changes into the folder, with protected paths and conflicts held back. */
export async function applyCommand(engine: SandboxEngine, context: CommandContext): Promise<number> {
  const { args, output, signal } = context;
  const { sandbox, baseline } = await copySession(engine, context);
  const outcome = await applyCopyChanges(sandbox, baseline, {
    paths: args.positionals,
    includeProtected: Boolean(args.values['include-protected']),
    ...(args.values.expect !== undefined ? { expectDigest: args.values.expect } : {}),
    maxBytes: copyFileLimit(sandbox),
    stateDir: defaultStateDir(),
    signal,
  });
  output.applied(outcome);
  return outcome.heldBack.length || outcome.conflicts.length ? 1 : 0;
}

export async function engineCommand(engine: SandboxEngine, context: CommandContext): Promise<number> {
  context.output.engine(await engine.info(context.signal));
  return 0;
}

/** Removes orphaned sandboxes; as the cleanup a closing VS Code window leaves behind, it waits first. */
export async function gcCommand(engine: SandboxEngine, context: CommandContext): Promise<number> {
  const { values } = context.args;
  const seconds = (name: string, value: string | undefined, fallback: number) => {
    if (value === undefined) return fallback;
    const number = Number(value);
    if (!Number.isFinite(number) || number < 0)
      throw usageError(`--${name} must be a number of seconds, not "${value}".`);
    return number;
  };
  const after = seconds('after', values.after, 0);
  const grace = seconds('grace', values.grace, 120);
  if (after > 0)
    await new Promise<void>((done) => {
      const timer = setTimeout(done, after * 1000);
      context.signal.addEventListener('abort', () => (clearTimeout(timer), done()), { once: true });
    });
  const leases = new WorkspaceLeases(join(defaultStateDir(), 'leases'));
  // Only with --folder given explicitly does gc stay in one folder; by default it looks at every folder.
  const onlyFolder = values.folder !== undefined ? workspaceFolder(context.args) : undefined;
  const kept: HeldSession[] = [];
  const removed = await removeOrphans(
    engine,
    {
      now: Date.now(),
      graceMs: grace * 1000,
      lease: (folder) => leases.read(folder),
      onlyFolder,
      onHeld: (held) => kept.push(held),
    },
    context.signal,
  );
  context.output.orphans(removed, kept);
  return 0;
}

/** The CLI's file store: AGENT_SANDBOX_FILE_STORE, with AGENT_SANDBOX_FILE_STORE_MAX_SIZE as its limit per file. */
export function cliFileStore(env: NodeJS.ProcessEnv = process.env): FileStore {
  const limit = env.AGENT_SANDBOX_FILE_STORE_MAX_SIZE || undefined;
  const maxFileBytes = limit === undefined ? undefined : parseSize(limit);
  if (limit !== undefined && !maxFileBytes)
    throw usageError(`AGENT_SANDBOX_FILE_STORE_MAX_SIZE must be a size like 100m or 1g, not "${limit}".`);
  return new FileStore(defaultFileStoreFolder(env), { maxFileBytes });
}

/** `files upload|download|list|delete`: the local file store, without an engine. */
export async function filesCommand(context: CommandContext): Promise<number> {
  const { args, output } = context;
  const [action, ...operands] = args.positionals;
  const store = cliFileStore();
  const operand = (what: string) => {
    if (operands.length !== 1) throw usageError(`files ${action} takes one ${what}.`);
    return operands[0]!;
  };
  switch (action) {
    case 'upload':
      output.storedFile(await store.putFile(operand('PATH'), { name: args.values.name }));
      return 0;
    case 'download': {
      const { data, file } = await store.get(operand('KEY'));
      if (args.values.output !== undefined) await writeFile(args.values.output, data);
      output.fileContent(file, data, args.values.output);
      return 0;
    }
    case 'list':
      if (operands.length) throw usageError('files list takes no arguments.');
      output.storedFiles(await store.list());
      return 0;
    case 'delete':
      output.deletedFile(await store.delete(operand('KEY')));
      return 0;
    default:
      throw usageError(
        action === undefined
          ? 'files needs an action: upload, download, list or delete.'
          : `Unknown files action "${action}": use upload, download, list or delete.`,
      );
  }
}
