/**
 * What the zod schemas say about a frontmatter key: its description, its kind of value, its allowed
 * values. Completions and hovers read it from here, so the schemas stay the one source of truth.
 */
import { z } from 'zod';
import { VALUE_DOCS, frontmatterSandboxObjectSchema, harnessSandboxSchema } from '../spec/frontmatterSpec';
import { RUNTIMES } from '../spec/spec';
import { dotpromptFrontmatterSchema } from './frontmatterSchema';

export type PromptDialect = 'dotprompt' | 'harness';

export interface FieldDoc {
  key: string;
  description?: string;
  /** The kind of value in words: "number", "true or false", "list of strings", "block", "python | node | ...". */
  kind: string;
  /** Allowed values, for enums and booleans. */
  values: string[];
  /** True when the value is a block of keys. */
  isBlock: boolean;
}

type Schema = z.ZodType;

/** One wrapper that adds nothing a user writes (optional, default, nullable, a pipe's input side) removed. */
function step(schema: Schema): Schema | undefined {
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodDefault || schema instanceof z.ZodNullable)
    return schema.unwrap() as Schema;
  if (schema instanceof z.ZodPipe) return schema.in as Schema;
  return undefined;
}

function unwrap(schema: Schema): Schema {
  let current = schema;
  for (let next = step(current); next; next = step(current)) current = next;
  return current;
}

/** The outermost description (`.describe()` may sit on a wrapper or on what it wraps). */
function describe(schema: Schema): string | undefined {
  for (let current: Schema | undefined = schema; current; current = step(current))
    if (current.description) return current.description;
  return undefined;
}

function members(schema: Schema): Schema[] {
  const inner = unwrap(schema);
  return inner instanceof z.ZodUnion ? (inner.options as Schema[]).flatMap(members) : [inner];
}

function objectMember(schema: Schema): z.ZodObject | undefined {
  return members(schema).find((member): member is z.ZodObject => member instanceof z.ZodObject);
}

function kindOf(schema: Schema): { kind: string; values: string[]; isBlock: boolean } {
  const kinds: string[] = [];
  const values: string[] = [];
  let isBlock = false;
  for (const member of members(schema)) {
    if (member instanceof z.ZodEnum) {
      values.push(...(member.options as string[]));
      kinds.push((member.options as string[]).join(' | '));
    } else if (member instanceof z.ZodBoolean) {
      values.push('true', 'false');
      kinds.push('true or false');
    } else if (member instanceof z.ZodNumber) kinds.push(member.format === 'safeint' ? 'whole number' : 'number');
    else if (member instanceof z.ZodString) kinds.push('text');
    else if (member instanceof z.ZodArray)
      kinds.push(unwrap(member.element as Schema) instanceof z.ZodString ? 'list of strings' : 'list');
    else if (member instanceof z.ZodObject || member instanceof z.ZodRecord) {
      isBlock = true;
      kinds.push('block of settings');
    }
  }
  return { kind: [...new Set(kinds)].join(', or ') || 'any value', values: [...new Set(values)], isBlock };
}

/** The schema of the value at a key path (dialect decides which sandbox block is meant). */
export function schemaAt(path: readonly string[], dialect: PromptDialect): Schema | undefined {
  let schema: Schema | undefined = dotpromptFrontmatterSchema;
  for (const [index, key] of path.entries()) {
    if (index === 1 && path[0] === 'sandbox')
      schema = dialect === 'harness' ? harnessSandboxSchema : frontmatterSandboxObjectSchema;
    const object: z.ZodObject | undefined = schema && objectMember(schema);
    schema = object?.shape[key] as Schema | undefined;
    if (!schema) return undefined;
  }
  return schema;
}

export function fieldDoc(path: readonly string[], dialect: PromptDialect): FieldDoc | undefined {
  const schema = schemaAt(path, dialect);
  if (!schema) return undefined;
  const key = path[path.length - 1]!;
  if (path.length === 1 && key === 'sandbox') {
    return {
      key,
      description: describe(schema),
      kind: `${RUNTIMES.join(' | ')}, or block of settings`,
      values: [...RUNTIMES],
      isBlock: true,
    };
  }
  return { key, description: describe(schema), ...kindOf(schema) };
}

/** The keys a block at this path may hold, with their documentation. */
export function fieldsIn(path: readonly string[], dialect: PromptDialect): FieldDoc[] {
  const container =
    path.length === 0
      ? dotpromptFrontmatterSchema
      : path.length === 1 && path[0] === 'sandbox'
        ? dialect === 'harness'
          ? harnessSandboxSchema
          : frontmatterSandboxObjectSchema
        : schemaAt(path, dialect);
  const object = container && objectMember(container);
  if (!object) return [];
  return Object.keys(object.shape).flatMap((key) => fieldDoc([...path, key], dialect) ?? []);
}

/** Documentation of one value of an enum key (runtime: python, ...). */
export function valueDoc(key: string, value: string): string | undefined {
  return VALUE_DOCS[key]?.[value];
}
