/**
 * Which engine runs sandboxes: `docker`, `virtual`, or `auto` (Docker when it answers, otherwise
 * the virtual engine, but only once the user has agreed to its lighter isolation). Nothing here
 * ever falls back to the host: without an engine the answer is an error that says what to do.
 */
import { SandboxError } from '../errors';

export const ENGINE_CHOICES = ['auto', 'docker', 'virtual'] as const;
export type EngineChoice = (typeof ENGINE_CHOICES)[number];

/** The user's answer to "use the virtual engine when no container engine answers?"; undefined until asked. */
export type VirtualConsent = 'granted' | 'declined' | undefined;

export interface SelectionInput {
  choice: EngineChoice;
  /** Resolves when the Docker Engine answers; throws a SandboxError (engine-unavailable, engine-permission, ...) when not. */
  probeDocker(): Promise<void>;
  /** The remembered answer; the CLI, which cannot ask, passes 'granted'. */
  consent: VirtualConsent;
}

export type Selection =
  | { kind: 'docker'; reason: string }
  | { kind: 'virtual'; reason: string; dockerProblem?: string }
  /** No engine may run: `error` says what to install or change; `ask` when the user has not been asked yet. */
  | { kind: 'none'; error: SandboxError; ask: boolean; dockerProblem: string };

const CHOOSE_HINT =
  'Start Docker (Docker Desktop, `sudo systemctl start docker`, or Podman with DOCKER_HOST pointing at its socket), or set agentSandbox.engine to "virtual" (CLI: --engine virtual) to run bash and Python in the embedded engine.';

export async function selectEngine(input: SelectionInput): Promise<Selection> {
  if (input.choice === 'docker') return { kind: 'docker', reason: 'the engine setting is "docker"' };
  if (input.choice === 'virtual') return { kind: 'virtual', reason: 'the engine setting is "virtual"' };
  try {
    await input.probeDocker();
    return { kind: 'docker', reason: 'the Docker Engine answers' };
  } catch (error) {
    // Only "nobody answers" (or "answers but refuses us") moves on; any other failure came from an engine that is there.
    if (!SandboxError.is(error, 'engine-unavailable') && !SandboxError.is(error, 'engine-permission'))
      return { kind: 'docker', reason: 'the Docker Engine answers' };
    const problem = error.message;
    switch (input.consent) {
      case 'granted':
        return { kind: 'virtual', reason: 'no container engine answers', dockerProblem: problem };
      case 'declined':
        return {
          kind: 'none',
          ask: false,
          dockerProblem: problem,
          error: new SandboxError(
            'engine-unavailable',
            `${problem} The virtual engine was declined, so no sandbox can run.`,
            CHOOSE_HINT,
            { cause: error },
          ),
        };
      default:
        return {
          kind: 'none',
          ask: true,
          dockerProblem: problem,
          error: new SandboxError(
            'engine-unavailable',
            `${problem} No sandbox runs until an engine is chosen: the user is being asked whether to use the virtual engine (in-process bash and Python, lighter isolation than a container).`,
            `Ask the user to answer that question, or to ${CHOOSE_HINT.charAt(0).toLowerCase()}${CHOOSE_HINT.slice(1)}`,
            { cause: error },
          ),
        };
    }
  }
}

/** Reads an engine choice from a flag, variable or setting; undefined when absent. */
export function parseEngineChoice(value: string | undefined, source: string): EngineChoice | undefined {
  if (value === undefined || value === '') return undefined;
  if ((ENGINE_CHOICES as readonly string[]).includes(value)) return value as EngineChoice;
  throw new SandboxError(
    'invalid-input',
    `${source} must be one of ${ENGINE_CHOICES.join(', ')}, not "${value}".`,
    'auto uses Docker when it answers; docker and virtual pick one engine.',
  );
}

/** How long `auto` waits for the Docker Engine to answer before counting it as absent. */
export const PROBE_TIMEOUT_MS = 3000;

/** Asks an engine who it is; an engine that does not answer in time counts as unavailable. */
export async function probeEngine(
  engine: { info(signal?: AbortSignal): Promise<unknown> },
  timeoutMs = PROBE_TIMEOUT_MS,
): Promise<void> {
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    await engine.info(signal);
  } catch (error) {
    if (!signal.aborted) throw error;
    throw new SandboxError(
      'engine-unavailable',
      `The Docker Engine did not answer within ${timeoutMs / 1000} s.`,
      'Check that it runs and that DOCKER_HOST (or agentSandbox.engineHost) points at it.',
      { cause: error },
    );
  }
}
