/**
 * The one place where settings, `.prompt` frontmatter, CLI flags and tool calls become a resolved,
 * validated `SandboxSpec`. Later layers win; `limits` and `env` merge key by key, and the names
 * marked as secrets (`secretEnv`) add up.
 */
import { z } from 'zod';
import { SandboxError } from '../errors';
import { sandboxSpecSchema, type SandboxSpec, type SpecLayer } from './spec';

export function mergeLayers(layers: readonly (SpecLayer | undefined)[]): SpecLayer {
  const merged: SpecLayer = {};
  for (const layer of layers) {
    if (!layer) continue;
    for (const [key, value] of Object.entries(layer) as [keyof SpecLayer, unknown][]) {
      if (value === undefined) continue;
      if (key === 'limits' || key === 'env') {
        (merged as Record<string, unknown>)[key] = { ...(merged[key] ?? {}), ...withoutUndefined(value as object) };
      } else if (key === 'secretEnv') {
        merged.secretEnv = [...new Set([...(merged.secretEnv ?? []), ...(value as string[])])];
      } else {
        (merged as Record<string, unknown>)[key] = value;
      }
    }
  }
  return merged;
}

export function resolveSpec(...layers: (SpecLayer | undefined)[]): SandboxSpec {
  const result = sandboxSpecSchema.safeParse(mergeLayers(layers));
  if (!result.success) throw invalidSpecError(result.error);
  return result.data;
}

export function invalidSpecError(error: z.ZodError, what = 'sandbox configuration'): SandboxError {
  const lines = error.issues.map((issue) => {
    const where = issue.path.length ? issue.path.join('.') : what;
    return `- ${where}: ${issue.message}`;
  });
  return new SandboxError(
    'invalid-input',
    `Invalid ${what}:\n${lines.join('\n')}`,
    'Fix the values listed above and try again.',
  );
}

function withoutUndefined(value: object): object {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
}
