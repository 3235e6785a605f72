/**
 * The JSON the Docker Engine answers with (containers inspected and listed, execs inspected, the
 * version, events), read with zod where it enters: an engine that answers something else (a proxy,
 * an API we do not speak) gives one clear error instead of a TypeError deep inside.
 * Objects stay loose: newer engines add fields, and only the fields read here are checked.
 */
import { z } from 'zod';
import { SandboxError } from '../../core/errors';

/** Labels come as null on some engines (Podman) when a container has none. */
const labelsSchema = z
  .record(z.string(), z.string())
  .nullish()
  .transform((labels) => labels ?? {});

export const containerInspectSchema = z.looseObject({
  Id: z.string(),
  Created: z.string().optional(),
  Config: z.looseObject({ Image: z.string().optional(), Labels: labelsSchema, Env: z.array(z.string()).nullish() }),
  State: z.looseObject({
    Status: z.string().optional(),
    Running: z.boolean(),
    Paused: z.boolean().optional(),
    OOMKilled: z.boolean().optional(),
    ExitCode: z.number().optional(),
    Error: z.string().optional(),
    FinishedAt: z.string().optional(),
  }),
  HostConfig: z.looseObject({ Memory: z.number().optional() }).optional(),
  NetworkSettings: z
    .looseObject({
      Networks: z.record(z.string(), z.looseObject({ NetworkID: z.string().optional() })).nullish(),
    })
    .optional(),
});
export type ContainerInspect = z.output<typeof containerInspectSchema>;

export const containerListSchema = z.array(
  z.looseObject({
    Id: z.string(),
    Names: z.array(z.string()).nullish(),
    Image: z.string(),
    State: z.string(),
    Labels: labelsSchema,
  }),
);
export type ContainerSummary = z.output<typeof containerListSchema>[number];

export const execInspectSchema = z.looseObject({ Running: z.boolean(), ExitCode: z.number().nullish() });
export type ExecInspect = z.output<typeof execInspectSchema>;

export const engineVersionSchema = z.looseObject({
  Version: z.string(),
  ApiVersion: z.string().optional(),
  Os: z.string().optional(),
  Arch: z.string().optional(),
  Components: z.array(z.looseObject({ Name: z.string() })).nullish(),
  Platform: z.looseObject({ Name: z.string().optional() }).optional(),
});
export type EngineVersion = z.output<typeof engineVersionSchema>;

/** One line of the event stream; old engines say `status` and `id` where new ones say `Action` and `Actor.ID`. */
export const engineEventSchema = z.object({
  Type: z.string().optional(),
  Action: z.string().optional(),
  status: z.string().optional(),
  id: z.string().optional(),
  Actor: z.object({ ID: z.string().optional(), Attributes: z.record(z.string(), z.string()).optional() }).optional(),
  time: z.number().optional(),
  timeNano: z.number().optional(),
});
export type EngineEvent = z.output<typeof engineEventSchema>;

/** The engine's answer to `what`, as `schema` reads it; an engine-error saying which field is wrong otherwise. */
export function readEngineJson<S extends z.ZodType>(schema: S, answer: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(answer);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue?.path.length ? issue.path.join('.') : 'the answer';
  throw new SandboxError(
    'engine-error',
    `The engine's answer to ${what} is not what the Docker Engine API gives (${where}: ${issue?.message ?? 'unreadable'}).`,
    'Check that the engine address (setting agentSandbox.engineHost, --engine-host or DOCKER_HOST) is a Docker Engine or Podman API (docker version shows it), then try again.',
  );
}

/** The events among a finished stream's lines (newline-delimited JSON) that the schema reads; others are skipped. */
export function readEventLines(text: string): EngineEvent[] {
  const events: EngineEvent[] = [];
  for (const line of text.split('\n')) {
    const event = readEventLine(line);
    if (event) events.push(event);
  }
  return events;
}

/** One event line, or undefined for a blank, cut or foreign line (the stream carries on past it). */
export function readEventLine(line: string): EngineEvent | undefined {
  if (!line.trim()) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    return undefined;
  }
  const parsed = engineEventSchema.safeParse(json);
  return parsed.success ? parsed.data : undefined;
}
