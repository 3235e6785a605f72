/**
 * A tool's input JSON schema, as models read it. Some model families (and OpenAI-compatible
 * endpoints behind bring-your-own-key models) reject or strip `exclusiveMinimum` and
 * `propertyNames`: the schema keeps to plain `minimum`/`maximum`, and limits that matter are also
 * said in the tool's description.
 */
import { z } from 'zod';

/** What the model may send (`io: 'input'`), without `$schema` and `propertyNames` (string keys are JSON's own). */
export function toolInputSchema(schema: z.ZodType): Record<string, unknown> {
  // A `.refine` (exec's "command or cmd") has no JSON Schema form and is left out; zod still checks it in `invoke`.
  const { $schema: _ignored, ...jsonSchema } = z.toJSONSchema(schema, { io: 'input' }) as Record<string, unknown>;
  return strip(jsonSchema) as Record<string, unknown>;
}

function strip(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(strip);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== 'propertyNames')
      .map(([key, inner]) => [key, strip(inner)]),
  );
}
