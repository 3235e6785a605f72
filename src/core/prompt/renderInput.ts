/**
 * The input of a `.prompt` file checked against its input schema (JSON Schema, as Dotprompt makes it
 * from Picoschema), with messages that name the field and say what to change.
 */
import { z } from 'zod';
import type { PathSegment } from './yamlTree';
import { label } from './zodProblems';

export interface InputProblem {
  /** The field, like `userInput` or `items[0].name`; empty for the input as a whole. */
  field: string;
  message: string;
}

type JsonSchema = Record<string, unknown>;

/**
 * Problems of `input` against `schema`; none when it fits. Throws when the schema itself cannot be
 * read as JSON Schema (the caller reports that as a problem of the file).
 */
export function checkInput(schema: JsonSchema, input: Record<string, unknown>): InputProblem[] {
  const checker = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
  const parsed = checker.safeParse(input);
  if (parsed.success) return [];
  return parsed.error.issues.flatMap((issue) => describeIssue(issue, schema, input));
}

function describeIssue(issue: z.core.$ZodIssue, schema: JsonSchema, input: unknown): InputProblem[] {
  const path = issue.path as PathSegment[];
  const field = label([], path);
  const name = field || 'the input';
  const value = valueAt(input, path);
  const fieldSchema = schemaAt(schema, path);
  if (issue.code === 'unrecognized_keys') {
    const known = Object.keys(propertiesOf(fieldSchema));
    return issue.keys.map((key) => ({
      field: label([], [...path, key]),
      message: `"${label([], [...path, key])}" is not in the file's input schema${known.length ? `, which takes ${known.join(', ')}` : ''}: remove it, or add it to input.schema.`,
    }));
  }
  if (value === undefined && (issue.code === 'invalid_type' || issue.code === 'invalid_union')) {
    const description = typeof fieldSchema.description === 'string' ? ` (${fieldSchema.description})` : '';
    const example = path.length === 1 ? ` Add it, like {"${field}": ${exampleOf(fieldSchema)}}.` : ' Add it.';
    return [{ field, message: `"${name}" is missing: the file's input schema requires it${description}.${example}` }];
  }
  if (issue.code === 'invalid_type' || issue.code === 'invalid_union') {
    const expected = expectedTypes(issue);
    return [
      {
        field,
        message: `"${name}" must be ${expected.join(' or ') || 'of another type'}, not ${shown(value)}: change it to fit the file's input schema.`,
      },
    ];
  }
  if (issue.code === 'invalid_value')
    return [
      {
        field,
        message: `"${name}" must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}, not ${shown(value)}.`,
      },
    ];
  return [{ field, message: `"${name}" does not fit the file's input schema: ${issue.message}. Change it to fit.` }];
}

const ARTICLES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  integer: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
  null: 'null',
};

function expectedTypes(issue: z.core.$ZodIssue): string[] {
  if (issue.code === 'invalid_type') return [ARTICLES[issue.expected] ?? issue.expected];
  if (issue.code === 'invalid_union')
    return [...new Set(issue.errors.flatMap((errors) => errors.flatMap((inner) => expectedTypes(inner))))];
  if (issue.code === 'invalid_value') return issue.values.map((v) => JSON.stringify(v));
  return [];
}

function shown(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function exampleOf(schema: JsonSchema): string {
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (Array.isArray(schema.enum) && schema.enum.length) return JSON.stringify(schema.enum[0]);
  switch (type) {
    case 'number':
    case 'integer':
      return '1';
    case 'boolean':
      return 'true';
    case 'array':
      return '[]';
    case 'object':
      return '{}';
    default:
      return '"..."';
  }
}

function valueAt(value: unknown, path: readonly PathSegment[]): unknown {
  let current = value;
  for (const segment of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string | number, unknown>)[segment];
  }
  return current;
}

function propertiesOf(schema: JsonSchema): Record<string, JsonSchema> {
  const properties = schema.properties;
  return properties && typeof properties === 'object' ? (properties as Record<string, JsonSchema>) : {};
}

/** The schema of the field at a path (properties and items only; {} when it cannot be told). */
function schemaAt(schema: JsonSchema, path: readonly PathSegment[]): JsonSchema {
  let current: JsonSchema = schema;
  for (const segment of path) {
    const next =
      typeof segment === 'number'
        ? (current.items as JsonSchema | undefined)
        : (propertiesOf(current)[segment] as JsonSchema | undefined);
    if (!next || typeof next !== 'object') return {};
    current = next;
  }
  return current;
}
