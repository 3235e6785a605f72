/** `agent-sandbox run`: one program in a fresh compute sandbox; its output and exit code are the command's. */
import { readFile } from 'node:fs/promises';
import type { SandboxEngine } from '../core/engine/engine';
import { pickSecrets, redactionPairs, resolveSecrets, secretSpecLayers } from '../core/secrets/catalog';
import { secretsLayer } from '../core/secrets/knownSecrets';
import { runCompute } from '../core/sessions/compute';
import { withBoundDomains } from '../core/sessions/sessionPolicy';
import { resolveSpec } from '../core/spec/resolveSpec';
import { specFromFlags, usageError } from './args';
import type { CommandContext } from './commands';
import { exitCodeFor, protectedPathsFlag, workspaceFolder } from './commandFlags';
import { CLI_SECRET_WORDS, askedSecrets, offeredSecrets } from './secretFlags';

export async function runCommand(engine: SandboxEngine, context: CommandContext): Promise<number> {
  const { args, output, signal } = context;
  const { values, positionals } = args;
  const sources = [values.code !== undefined, values.file !== undefined, positionals[0] === '-'].filter(Boolean).length;
  if (sources !== 1 || positionals.length > (positionals[0] === '-' ? 1 : 0)) {
    throw usageError('run takes exactly one of --code CODE, --file PATH, or - (read the code from standard input).');
  }
  const code =
    values.code ??
    (values.file !== undefined
      ? await readFile(values.file, 'utf8').catch((error: Error) => {
          throw usageError(`Cannot read ${values.file}: ${error.message}`);
        })
      : await context.readStdin());
  // The secrets the flags offer, all given to this sandbox, as the service gives them (sessionPolicy.ts).
  // The settings (a large schema) are read only when the flags offer secrets.
  const offered = offeredSecrets(values).length
    ? (await import('./cliSettings')).cliSettings(values, process.cwd()).secrets
    : [];
  const picked = pickSecrets(askedSecrets(values) ?? [], offered, CLI_SECRET_WORDS);
  const resolved = await resolveSecrets(picked, async (name) => context.secrets.valueOf(name), CLI_SECRET_WORDS);
  context.secrets.add(redactionPairs(resolved));
  const flags = specFromFlags(values);
  const spec = resolveSpec(
    { mode: 'compute' },
    flags,
    withBoundDomains({ network: Boolean(flags.network), networkAllow: flags.networkAllow ?? [] }, picked, []),
    values.workspace ? { workspaceAccess: values.workspace as 'none' } : undefined,
    // The same secrets as every sandbox the tools and sessions open get.
    secretsLayer(context.secrets.env()),
    ...secretSpecLayers(resolved),
  );
  const folder = spec.workspaceAccess === 'none' ? undefined : workspaceFolder(args);
  const result = await runCompute(
    engine,
    spec,
    { code },
    {
      signal,
      workspaceFolder: folder,
      protectedPaths: protectedPathsFlag(args),
      boundSecretValues: resolved.boundValues,
      onProgress: (progress) => output.progress(progress.message),
    },
  );
  output.execResult(result, { runtime: spec.runtime, engine: engine.kind });
  return exitCodeFor(result);
}
