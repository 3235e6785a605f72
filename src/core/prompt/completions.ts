/**
 * Completions in the frontmatter: keys of the block the cursor is in, and the allowed values of the key
 * on the cursor's line. Reads the lines around the cursor (indentation), so it works while the YAML
 * is half-typed and does not parse.
 */
import { HARNESS_SANDBOX_MODES } from '../spec/frontmatterSpec';
import { analyzePrompt } from './analyzePrompt';
import { findFrontmatter } from './frontmatter';
import { fieldDoc, fieldsIn, valueDoc, type PromptDialect } from './schemaDocs';
import { secretCandidates, secretEntryDoc, type PromptEnvironment } from './secretNames';
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
/** An item of a block list being typed: `  - GITHUB_`. */
const ITEM_LINE = /^(\s*)-[ \t]+([^\s#'"[\]{},]*)$/;
/** An item of a flow list being typed: `secrets: [GITHUB_TOKEN, DB_`. */
const FLOW_LINE = /^(\s*)([A-Za-z_][\w-]*):[ \t]*\[([^\]#'"{}]*,)?[ \t]*([^\s#'"[\]{},]*)$/;
const NAME_ITEM = /^\s*-[ \t]+([A-Za-z_][A-Za-z0-9_]*)\s*(#.*)?$/;

export function completePrompt(
  text: string,
  offset: number,
  environment: PromptEnvironment = {},
): PromptCompletions | undefined {
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

  const flow = FLOW_LINE.exec(prefix);
  const item = flow ? undefined : ITEM_LINE.exec(prefix);
  if (flow || item) {
    let path: string[] | undefined;
    let listed: string[];
    if (flow) {
      const parent = ancestors(lines, line, flow[1]!.length, firstLine);
      path = parent && [...parent, flow[2]!];
      const after = /^[^\]\n]*/.exec(text.slice(offset + rest.length))![0];
      listed = `${flow[3] ?? ''},${after}`.split(',').map((name) => name.trim());
    } else {
      const owner = listOwner(lines, line, item![1]!.length, firstLine);
      const parent = owner && ancestors(lines, owner.line, owner.indent, firstLine);
      path = parent && [...parent, owner.key];
      listed = owner
        ? listedItems(
            lines,
            line,
            item![1]!.length,
            owner.line,
            frontmatter.close ? lines.position(frontmatter.end).line : lines.lineCount,
          )
        : [];
    }
    const typed = (flow ? flow[4] : item![2])!;
    const items = path ? listCompletions(path, dialect, environment, new Set(listed)) : [];
    return items.length ? { items, start: offset - typed.length, end: offset + rest.length } : undefined;
  }

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
      if (isList && field.values.length === 0) {
        // Open the suggestions on the first item when there are values to pick (the offered secrets).
        const pick = listCompletions([...path, field.key], dialect, environment, new Set()).length > 0;
        return { ...base, insertText: `${field.key}:\n  - $0`, snippet: true, retrigger: pick };
      }
      return { ...base, insertText: `${field.key}: `, retrigger: field.values.length > 0 };
    });
  return { items, start: offset - typed.length, end: offset + rest.length };
}

/** What an item of the list at this path may be: for sandbox.secrets, the secrets the user offers that it does not name yet. */
function listCompletions(
  path: readonly string[],
  dialect: PromptDialect,
  environment: PromptEnvironment,
  listed: ReadonlySet<string>,
): PromptCompletion[] {
  if (dialect === 'harness' || path.length !== 2 || path[0] !== 'sandbox' || path[1] !== 'secrets') return [];
  return secretCandidates(environment, listed).map((entry) => ({
    label: entry.name,
    kind: 'value' as const,
    detail: entry.inside ? 'sandbox.secrets: inside secret' : 'sandbox.secrets: bound secret',
    documentation: secretEntryDoc(entry),
    insertText: entry.name,
    snippet: false,
    retrigger: false,
  }));
}

/** The key whose block list holds an item line whose dash is at this indentation (the dash may sit under the key, or deeper). */
function listOwner(
  lines: LineIndex,
  line: number,
  dash: number,
  firstLine: number,
): { key: string; line: number; indent: number } | undefined {
  for (let l = line - 1; l >= firstLine; l--) {
    const text = lines.lineText(l);
    if (BLANK.test(text)) continue;
    const own = text.length - text.trimStart().length;
    if (own > dash || (own === dash && text.trimStart().startsWith('-'))) continue;
    const parent = PARENT_LINE.exec(text);
    return parent ? { key: parent[2]!, line: l, indent: own } : undefined;
  }
  return undefined;
}

/** The plain names of the other items of the block list around a line. */
function listedItems(lines: LineIndex, line: number, dash: number, ownerLine: number, endLine: number): string[] {
  const names: string[] = [];
  for (const direction of [-1, 1]) {
    for (let l = line + direction; l > ownerLine && l < endLine; l += direction) {
      const text = lines.lineText(l);
      if (BLANK.test(text)) continue;
      const own = text.length - text.trimStart().length;
      if (own < dash || (own === dash && !text.trimStart().startsWith('-'))) break;
      const name = own === dash ? NAME_ITEM.exec(text) : undefined;
      if (name) names.push(name[1]!);
    }
  }
  return names;
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
