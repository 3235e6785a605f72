/** The engine a command talks to: the Docker Engine (with the CLI's shared warm containers), or the virtual engine. */
import { parseEngineChoice, probeEngine, selectEngine, type EngineChoice } from '../core/engine/engineSelection';
import type { SandboxEngine } from '../core/engine/engine';
import { folderKeeperLauncher } from '../core/sessions/folderKeeper';
import { defaultStateDir } from '../core/sessions/leases';
import { DockerEngine } from '../engines/docker/dockerEngine';
import { sharedPoolFromEnv } from '../engines/docker/computeRuns';
import { fillerLauncher } from '../engines/docker/sharedPool';
import { runtimeFlag, usageError, type ParsedArgs } from './args';

/**
 * The engine for this command: --engine, else AGENT_SANDBOX_ENGINE, else auto. The CLI cannot ask,
 * so auto uses the virtual engine when no Docker Engine answers, and `note` says so (on stderr).
 */
export async function createEngine(
  args: ParsedArgs,
  note: (message: string) => void = () => undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<SandboxEngine> {
  let choice: EngineChoice;
  try {
    choice =
      parseEngineChoice(args.values.engine, '--engine') ??
      parseEngineChoice(env.AGENT_SANDBOX_ENGINE, 'AGENT_SANDBOX_ENGINE') ??
      'auto';
  } catch (error) {
    throw usageError((error as Error).message);
  }
  // Imported only when chosen: a Docker command does not evaluate the virtual engine.
  const virtualEngine = async () => new (await import('../engines/virtual/virtualEngine')).VirtualEngine();
  if (choice === 'virtual') return virtualEngine();
  const runtime = runtimeFlag(args.values.runtime) ?? 'python';
  const host = args.values['engine-host'];
  // A command that makes one run and ends claims a warm container another process left, and leaves
  // one for the next (a detached filler); a long-lived one (mcp) keeps its own pool instead.
  const shared = ['run', 'tool'].includes(args.command) ? sharedPoolFromEnv(env) : { size: 0, waitSeconds: 0 };
  const cliPath = process.argv[1];
  const docker = new DockerEngine({
    host,
    env,
    images: args.values.image ? { [runtime]: args.values.image } : undefined,
    // A read-write session is watched between commands too, by a detached keeper run from this same script.
    ...(cliPath
      ? {
          folderKeeper: folderKeeperLauncher({
            nodePath: process.execPath,
            cliPath,
            args: host ? ['--engine-host', host] : [],
            env,
          }),
        }
      : {}),
    ...(cliPath && shared.size > 0
      ? {
          poolSize: 0,
          sharedPool: {
            ...shared,
            stateDir: defaultStateDir(env),
            launchFiller: fillerLauncher({
              nodePath: process.execPath,
              cliPath,
              args: host ? ['--engine-host', host] : [],
              env,
            }),
          },
        }
      : {}),
  });
  // The probe asks only whether the engine answers (/_ping): what it is, the first sandbox asks when it needs to.
  const selection = await selectEngine({
    choice,
    consent: 'granted',
    probeDocker: () => probeEngine({ info: (signal) => docker.ping(signal) }),
  });
  if (selection.kind !== 'virtual') return docker;
  await docker.dispose();
  note(
    `${selection.dockerProblem} Using the virtual engine instead: bash and Python in this process, a lighter isolation than a container (no real processes, packages or network). Choose with --engine docker|virtual or AGENT_SANDBOX_ENGINE.`,
  );
  return virtualEngine();
}
