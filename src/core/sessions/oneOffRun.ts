/**
 * sandbox_run's one-off compute sandbox under the user's policy: the settings' limits and images,
 * the network the user allows (and the domains of bound secrets), the secrets the user offers that
 * the call asks for (read now, redacted from now on), the host's injected variables.
 */
import { secretsLayer } from '../secrets/knownSecrets';
import {
  NO_SECRETS,
  describeSecret,
  pickSecrets,
  redactionPairs,
  resolveSecrets,
  secretSpecLayers,
  type ResolvedSecrets,
  type SecretEntry,
} from '../secrets/catalog';
import type { ExecResult } from '../engine/engine';
import type { Runtime } from '../spec/spec';
import type { ImageOutput } from '../results/images';
import { resolveSpec } from '../spec/resolveSpec';
import { specFromSettings } from '../spec/settings';
import { runCompute, type RunInput } from './compute';
import { SETTING_KNOBS, SETTING_SECRET_WORDS, networkFor, withBoundDomains } from './sessionPolicy';
import type { CallOptions, SandboxServiceContext } from './serviceTypes';

export type OneOffInput = RunInput & {
  runtime?: Runtime;
  timeoutSeconds?: number;
  networkAllow?: readonly string[];
  /** Secrets the user offers that the one-off sandbox gets, by name (see SessionAsk.secrets). */
  secrets?: readonly string[];
};

export async function runOneOff(
  context: SandboxServiceContext,
  input: OneOffInput,
  options: CallOptions = {},
): Promise<ExecResult & { images: ImageOutput[] }> {
  const settings = context.settings();
  const notices: string[] = [];
  const picked = pickSecrets(input.secrets ?? [], settings.secrets, secretWords(context));
  const resolved = await resolveServiceSecrets(context, picked);
  const spec = resolveSpec(
    specFromSettings(settings),
    {
      mode: 'compute',
      workspaceAccess: 'none',
      runtime: input.runtime ?? computeRuntime(settings.defaultRuntime),
      timeoutSeconds: input.timeoutSeconds,
      ...withBoundDomains(
        networkFor({ networkAllow: input.networkAllow }, settings, context.raisedBy ?? SETTING_KNOBS, notices),
        picked,
        notices,
      ),
    },
    secretsLayer(context.injectedEnv?.() ?? context.secrets?.env()),
    ...secretSpecLayers(resolved),
  );
  const result = await runCompute(context.engine(), spec, input, {
    images: settings.images,
    ...options,
    boundSecretValues: { ...options.boundSecretValues, ...resolved.boundValues },
  });
  return { ...result, notices: [...notices, ...result.notices] };
}

/** The network a one-off sandbox gets, asking for these names (or none in particular) and these secrets. */
export function oneOffNetwork(
  context: SandboxServiceContext,
  networkAllow?: readonly string[],
  secretNames: readonly string[] = [],
): { network: boolean; networkAllow: string[]; secrets: string[] } {
  const settings = context.settings();
  const secrets = pickSecrets(secretNames, settings.secrets, secretWords(context));
  const net = withBoundDomains(
    networkFor({ networkAllow }, settings, context.raisedBy ?? SETTING_KNOBS, []),
    secrets,
    [],
  );
  return { ...net, secrets: secrets.map(describeSecret) };
}

/** The values of the secrets a new sandbox asked for (none asked: none read), redacted from now on. */
export async function resolveServiceSecrets(
  context: SandboxServiceContext,
  picked: readonly SecretEntry[],
): Promise<ResolvedSecrets> {
  if (!picked.length) return NO_SECRETS;
  const value = context.secretValue ?? ((name: string) => Promise.resolve(context.secrets?.valueOf(name)));
  const resolved = await resolveSecrets(picked, value, secretWords(context));
  context.secrets?.add(redactionPairs(resolved));
  return resolved;
}

function secretWords(context: SandboxServiceContext) {
  return context.secretWords ?? SETTING_SECRET_WORDS;
}

function computeRuntime(runtime: Runtime): Exclude<Runtime, 'linux'> {
  return runtime === 'linux' ? 'bash' : runtime;
}
