/** zod issues turned into problems at the YAML node they are about, in words, with a fix for near misses. */
import { isScalar, type Node } from 'yaml';
import type { z } from 'zod';
import { nearMiss } from './nearMiss';
import type { ProblemList, ProblemSeverity, PromptFix } from './problems';
import { locate, valueRange, type PathSegment } from './yamlTree';

export interface CheckContext {
  problems: ProblemList;
  /** Offset of the YAML text in the file. */
  base: number;
}

const EXPECTED: Record<string, string> = {
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  string: 'text',
  array: 'a list',
  object: 'a block of settings',
  record: 'a block of settings',
};

const WORDS_FOR_BOOLEANS: Record<string, boolean> = {
  yes: true,
  y: true,
  on: true,
  true: true,
  no: false,
  n: false,
  off: false,
  false: false,
};

export function label(prefix: readonly PathSegment[], path: readonly PathSegment[]): string {
  return [...prefix, ...path].reduce<string>(
    (text, segment) => (typeof segment === 'number' ? `${text}[${segment}]` : text ? `${text}.${segment}` : segment),
    '',
  );
}

export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return 'empty';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a block of settings';
  if (typeof value === 'string') return `the text "${value}"`;
  return String(value);
}

export function reportZodIssues(
  issues: readonly z.core.$ZodIssue[],
  root: Node | null,
  prefix: readonly PathSegment[],
  context: CheckContext,
  severity: ProblemSeverity = 'error',
): void {
  for (const issue of issues) {
    const located = locate(root, issue.path as PathSegment[]);
    const range = valueRange(located);
    if (!range) continue;
    const node = located.complete ? located.node : undefined;
    const value = isScalar(node)
      ? node.value
      : node && typeof node === 'object' && 'toJSON' in node
        ? (node as { toJSON(): unknown }).toJSON()
        : undefined;
    const name = label(prefix, issue.path as PathSegment[]);
    const fixes: PromptFix[] = [];
    const replace = (title: string, newText: string) =>
      fixes.push({
        title,
        preferred: true,
        edits: [{ start: context.base + range[0], end: context.base + range[1], newText }],
      });
    let message: string;
    switch (issue.code) {
      case 'invalid_type': {
        message = `${name} must be ${EXPECTED[issue.expected] ?? issue.expected}, not ${describeValue(value)}`;
        if (typeof value === 'string' && isScalar(node)) {
          const text = value.trim();
          if ((issue.expected === 'number' || issue.expected === 'int') && text !== '' && Number.isFinite(Number(text)))
            replace(`Write ${text} as a number`, text);
          const bool = WORDS_FOR_BOOLEANS[text.toLowerCase()];
          if (issue.expected === 'boolean' && bool !== undefined) replace(`Change to ${bool}`, String(bool));
          if (issue.expected === 'array' && /^[^\s,[\]{}#]+$/.test(text))
            replace(`Make it a list: [${text}]`, `[${text}]`);
        }
        break;
      }
      case 'invalid_value': {
        const allowed = issue.values.map(String);
        message =
          value === null || value === undefined
            ? `${name} has no value: write one of ${allowed.join(', ')}`
            : `${name} ${describeValue(value).replace(/^the text /, '')} is not one of ${allowed.join(', ')}`;
        const suggestion = typeof value === 'string' ? nearMiss(value, allowed) : undefined;
        if (suggestion) {
          message += `; did you mean ${suggestion}?`;
          replace(`Change to ${suggestion}`, suggestion);
        }
        break;
      }
      case 'too_small':
      case 'too_big': {
        const last = String(issue.path[issue.path.length - 1] ?? '');
        message = ownMessage(issue.message)
          ? issue.message.replace(new RegExp(`^${last}\\b`), name)
          : boundMessage(name, issue);
        if (last === 'memory' && typeof value === 'number' && value >= 32 && issue.code === 'too_small') {
          // A plain number is bytes; someone who writes 512 means 512m.
          message += `; a plain number is bytes: did you mean ${value}m?`;
          replace(`Change to ${value}m`, `${value}m`);
        }
        break;
      }
      default:
        message = ownMessage(issue.message)
          ? `${name}: ${issue.message}`
          : `${name}: ${issue.message.replace(/^Invalid input: /, '')}`;
    }
    context.problems.add(
      severity,
      issue.code === 'invalid_type' ? 'invalid-type' : 'invalid-value',
      message,
      context.base + range[0],
      context.base + range[1],
      fixes,
    );
  }
}

/** A message the schema wrote itself (not zod's generic "Too small: ..."). */
function ownMessage(message: string): boolean {
  return !/^(Too (small|big)|Invalid)/.test(message);
}

function boundMessage(name: string, issue: z.core.$ZodIssueTooSmall | z.core.$ZodIssueTooBig): string {
  const small = issue.code === 'too_small';
  const bound = Number(small ? (issue as z.core.$ZodIssueTooSmall).minimum : (issue as z.core.$ZodIssueTooBig).maximum);
  const inclusive = issue.inclusive !== false;
  if (issue.origin === 'string')
    return small && bound <= 1
      ? `${name} must not be empty`
      : `${name} must have ${small ? 'at least' : 'at most'} ${bound} characters`;
  if (issue.origin === 'array' || issue.origin === 'set')
    return `${name} must have ${small ? 'at least' : 'at most'} ${bound} items`;
  const relation = small ? (inclusive ? 'at least' : 'more than') : inclusive ? 'at most' : 'less than';
  return `${name} must be ${relation} ${bound}`;
}
