/**
 * Completions in the frontmatter: keys of the block the cursor is in, and the allowed values of the key
 * on the cursor's line. Reads the lines around the cursor (indentation), so it works while the YAML
 * is half-typed and does not parse.
 */
import { HARNESS_SANDBOX_MODES } from '../spec/frontmatterSpec';
import { analyzePrompt } from './analyzePrompt';
import { findFrontmatter } from './frontmatter';
import { fieldDoc, fieldsIn, valueDoc, type PromptDialect } from './schemaDocs';
import { LineIndex } from './textPositions';

export interface PromptCompletion {
  label: string;
  kind: 'key' | 'value';
  detail: string;
  documentation?: string;
  /** Text to insert; a snippet (with $0) when `snippet` is set, its later lines indented relative to the key (as editors indent snippets). */
  insertText: string;
  snippet: boolean;
  /** Open the suggestions again after inserting (to pick the key's value). */
  retrigger: boolean;
}

export interface PromptCompletions {
  items: PromptCompletion[];
  /** The range the chosen item replaces (offsets). */
  start: number;
  end: number;
}

const KEY_LINE = /^(\s*)([A-Za-z_][\w-]*)?$/;
const VALUE_LINE = /^(\s*)([A-Za-z_][\w-]*):[ \t]+([^\s#'"[\]{},]*)$/;
const PARENT_LINE = /^(\s*)([A-Za-z_][\w-]*):\s*(#.*)?$/;
const BLANK = /^\s*(#.*)?$/;

export function completePrompt(text: string, offset: number): PromptCompletions | undefined {
  const frontmatter = findFrontmatter(text);
  if (!frontmatter || offset < frontmatter.start || offset > (frontmatter.close ? frontmatter.end - 1 : text.length))
    return undefined;
  const lines = new LineIndex(text);
  const { line } = lines.position(offset);
  const lineStart = lines.lineStart(line);
  const prefix = text.slice(lineStart, offset);
  const rest = /^[\w-]*/.exec(text.slice(offset, lineStart + lines.lineText(line).length))![0];
  const firstLine = lines.position(frontmatter.start).line;
  const dialect = guessDialect(text, frontmatter.start, frontmatter.close ? frontmatter.end : text.length);

  const value = VALUE_LINE.exec(prefix);
  if (value) {
    const path = ancestors(lines, line, value[1]!.length, firstLine);
    if (!path) return undefined;
    const key = value[2]!;
    const doc = fieldDoc([...path, key], dialect);
    if (!doc || doc.values.length === 0) return undefined;
    const docsKey = path.length === 0 && key === 'sandbox' ? 'runtime' : key;
    const items = doc.values.map((candidate) => ({
      label: candidate,
      kind: 'value' as const,
      detail: `${[...path, key].join('.')}: ${doc.kind}`,
      documentation: valueDoc(docsKey, candidate) ?? doc.description,
      insertText: candidate,
      snippet: false,
      retrigger: false,
    }));
    return { items, start: offset - value[3]!.length, end: offset + rest.length };
  }

  const key = KEY_LINE.exec(prefix);
  if (!key) return undefined;
  const indent = key[1]!;
  const path = ancestors(lines, line, indent.length, firstLine);
  if (!path) return undefined;
  const typed = key[2] ?? '';
  const present = siblingKeys(
    lines,
    line,
    indent.length,
    firstLine,
    frontmatter.close ? lines.position(frontmatter.end).line : lines.lineCount,
  );
  const hasColon = text.slice(offset + rest.length).startsWith(':');
  const items = fieldsIn(path, dialect)
    .filter((field) => !present.has(field.key) || field.key === typed + rest)
    .map((field): PromptCompletion => {
      const base = {
        label: field.key,
        kind: 'key' as const,
        detail: field.kind,
        documentation: field.description,
        snippet: false,
        retrigger: false,
      };
      if (hasColon) return { ...base, insertText: field.key };
      const isList = field.kind.startsWith('list');
      if (field.isBlock && field.values.length === 0)
        return { ...base, insertText: `${field.key}:\n  $0`, snippet: true };
      if (isList && field.values.length === 0) return { ...base, insertText: `${field.key}:\n  - $0`, snippet: true };
      return { ...base, insertText: `${field.key}: `, retrigger: field.values.length > 0 };
    });
  return { items, start: offset - typed.length, end: offset + rest.length };
}

/** The keys of the blocks that enclose a line at this indentation, outermost first; undefined inside lists or scalars. */
function ancestors(lines: LineIndex, line: number, indent: number, firstLine: number): string[] | undefined {
  const path: string[] = [];
  let current = indent;
  for (let l = line - 1; l >= firstLine && current > 0; l--) {
    const text = lines.lineText(l);
    if (BLANK.test(text)) continue;
    const own = text.length - text.trimStart().length;
    if (own >= current) continue;
    const parent = PARENT_LINE.exec(text);
    if (!parent) return undefined;
    path.unshift(parent[2]!);
    current = own;
  }
  return current === 0 ? path : undefined;
}

/** Keys already written in the block around the line, at the same indentation. */
function siblingKeys(lines: LineIndex, line: number, indent: number, firstLine: number, endLine: number): Set<string> {
  const keys = new Set<string>();
  for (const direction of [-1, 1]) {
    for (let l = line + direction; l >= firstLine && l < endLine; l += direction) {
      const text = lines.lineText(l);
      if (BLANK.test(text)) continue;
      const own = text.length - text.trimStart().length;
      if (own < indent) break;
      const match = own === indent ? /^\s*([A-Za-z_][\w-]*)\s*:/.exec(text) : undefined;
      if (match) keys.add(match[1]!);
    }
  }
  return keys;
}

function guessDialect(text: string, start: number, end: number): PromptDialect {
  const analysis = analyzePrompt(text);
  if (analysis.data) return analysis.dialect;
  const yaml = text.slice(start, end);
  const harnessMode = new RegExp(`^\\s+mode:\\s*(${HARNESS_SANDBOX_MODES.join('|')})\\s*$`, 'm');
  return /^(harness|harness_config|workspace)\s*:/m.test(yaml) || harnessMode.test(yaml) ? 'harness' : 'dotprompt';
}
