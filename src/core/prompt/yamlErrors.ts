/**
 * The YAML parser's errors in the frontmatter, said in plain words: what is wrong, what to change, and a range
 * on the line where the change goes. One mistake often makes the parser report several errors; they become one.
 */
import { Parser, type Document, type YAMLError } from 'yaml';

/** A mistake in the YAML text; offsets are relative to that text. */
export interface YamlMistake {
  message: string;
  start: number;
  end: number;
}

interface Line {
  start: number;
  /** End of the line's text, without the line break. */
  end: number;
  indent: number;
  /** The text after the indentation. */
  body: string;
  kind: 'blank' | 'comment' | 'item' | 'key' | 'other';
  key?: string;
}

interface Found extends YamlMistake {
  /** Errors starting before this offset (and at or after `start`) are follow-ons of this mistake. */
  coversTo: number;
}

interface Context {
  text: string;
  lines: Line[];
  /** 0-based line of the file where the YAML text starts. */
  firstLine: number;
  doc: Document.Parsed;
  errors: YAMLError[];
}

const KEY = /^("[^"]*"|'[^']*'|[^\s#'"{[\]},&*!|>%@`-][^#]*?|-[^\s#][^#]*?)[ \t]*:(?=\s|$)/;

/** Every syntax mistake of a parsed frontmatter (duplicate keys are left to the caller). */
export function explainYamlErrors(doc: Document.Parsed, text: string, firstLine: number): YamlMistake[] {
  const errors = doc.errors.filter((error) => error.code !== 'DUPLICATE_KEY').sort((a, b) => a.pos[0] - b.pos[0]);
  const context: Context = { text, lines: splitLines(text), firstLine, doc, errors };
  const found: Found[] = handlebars(context);
  const covered: [number, number][] = found.map((mistake) => [lineOf(context, mistake.start).start, mistake.coversTo]);
  for (const error of errors) {
    const at = error.pos[0];
    if (covered.some(([from, to]) => at >= from && at < to)) continue;
    const mistake = explain(context, error);
    const line = lineOf(context, mistake.start);
    covered.push([Math.min(line.start, at), mistake.coversTo]);
    if (!found.some((other) => lineOf(context, other.start) === line)) found.push(mistake);
  }
  return found.sort((a, b) => a.start - b.start).map(({ message, start, end }) => ({ message, start, end }));
}

function explain(context: Context, error: YAMLError): Found {
  const { text } = context;
  const at = error.pos[0];
  const line = lineOf(context, at);
  const message = error.message;
  if (error.code === 'MISSING_CHAR' && message.startsWith('Missing closing')) return unclosedQuote(context, error);
  if (error.code === 'BAD_INDENT' && message.startsWith('Flow ')) return unclosedFlow(context, at);
  if (error.code === 'TAB_AS_INDENT') {
    const tab = line.start + text.slice(line.start, line.end).indexOf('\t');
    const indentEnd = line.start + (text.slice(line.start, line.end).match(/^[ \t]*/)?.[0].length ?? 0);
    return found(
      `Line ${fileLine(context, line)} is indented with a tab: YAML indents only with spaces. Replace the tab with spaces.`,
      tab,
      Math.max(indentEnd, tab + 1),
    );
  }
  if (error.code === 'BAD_SCALAR_START' && '@`%'.includes(text[at]!)) {
    const char = text[at]!;
    const why = char === '%' ? 'YAML reserves % for directives' : 'YAML reserves @ and `';
    const end = valueEnd(line, text, at);
    return found(
      `A value that starts with ${char} must be quoted (${why}): write ${quotedExample(text, line, at, end)}.`,
      at,
      end,
    );
  }
  if (error.code === 'BAD_ALIAS' && message.endsWith('cannot be an empty string')) {
    const char = text[at]!;
    const end = valueEnd(line, text, at);
    const [what, fix] =
      char === '*' ? ['an alias', 'the anchor it repeats (*name)'] : ['an anchor', 'the anchor (&name)'];
    return found(
      `${char} alone is read as ${what} without a name: quote it if you mean the text (${quotedExample(text, line, at, end)}), or name ${fix}.`,
      at,
      end,
    );
  }
  if (error.code === 'BAD_DQ_ESCAPE')
    return found(
      `${text.slice(at, at + 2)} is not an escape YAML knows inside double quotes: write \\\\ for a backslash, or use single quotes, where \\ is plain text.`,
      at,
      at + 2,
    );
  if (error.code === 'MULTIPLE_DOCS') return secondDocument(context, at);
  const mixed = listAmongKeys(context, line);
  if (mixed) return mixed;
  if (error.code === 'BLOCK_AS_IMPLICIT_KEY' && message.startsWith('Nested mappings')) {
    const indented = context.errors.some((other) => other.code === 'MULTILINE_IMPLICIT_KEY' && other.pos[0] === at);
    return indented ? indentedUnderValue(context, line, at) : colonInValue(context, line, at);
  }
  if (
    (error.code === 'BAD_INDENT' && message.startsWith('All ')) ||
    (error.code === 'BLOCK_AS_IMPLICIT_KEY' && message.startsWith('A block sequence'))
  ) {
    const misaligned = misalignedLine(context, line);
    if (misaligned) return misaligned;
  }
  if (
    error.code === 'MULTILINE_IMPLICIT_KEY' ||
    (error.code === 'MISSING_CHAR' && message.startsWith('Implicit map keys need to be followed'))
  ) {
    const mistake = noSpaceAfterColon(text, line.start, line.end) ?? notAKey(context, line);
    return { ...mistake, coversTo: Math.max(line.end, error.pos[1]) + 1 };
  }
  if (error.code === 'UNEXPECTED_TOKEN') {
    const before = text.slice(line.start, at).trimEnd();
    if (message.endsWith('at node end') && /["']$/.test(before))
      return found(
        'Text follows the closing quote of this value: put the whole value inside the quotes, or remove the text after the closing quote.',
        at,
        valueEnd(line, text, at),
      );
    if (']}'.includes(text[at]!))
      return found(
        `This ${text[at]} closes nothing: remove it, or add the ${text[at] === ']' ? '[' : '{'} that opens it.`,
        at,
        at + 1,
      );
    if (message.startsWith('Unexpected , in'))
      return found('An extra comma: remove it, or put an item between the commas.', at, at + 1);
    if (/[|>][-+0-9]*$/.test(before) || message.startsWith('Block scalar header'))
      return found(
        `Text after ${before.slice(-1)} on the same line: a block of text starts on the next line, indented. Move "${text.slice(at, valueEnd(line, text, at))}" to the next line.`,
        at,
        valueEnd(line, text, at),
      );
  }
  if (error.code === 'MISSING_CHAR' && message.startsWith('Comments must be separated'))
    return found('Add a space before # to start a comment, or quote the value if # belongs to it.', at, at + 1);
  if (error.code === 'BLOCK_IN_FLOW' || message.startsWith('Missing , '))
    return found('Inside [ ] and { }, items are separated by commas: a comma is missing here.', at, error.pos[1]);
  const [start, end] = atEndOfInput(text, error.pos);
  return found(`This is not valid YAML: ${message}.`, start, end);
}

function found(message: string, start: number, end: number, coversTo = end + 1): Found {
  return { message, start, end: Math.max(end, start), coversTo };
}

/** A quoted value that runs to the end of the frontmatter: the closing quote goes on the line where it opens. */
function unclosedQuote(context: Context, error: YAMLError): Found {
  const { text } = context;
  const quote = error.message.includes('"') ? '"' : "'";
  let open = -1;
  for (const candidate of scalarsOf(context.doc))
    if (text[candidate[0]] === quote && candidate[1] >= error.pos[0] - 1) open = candidate[0];
  if (open < 0) open = text.lastIndexOf(quote, error.pos[0]);
  const line = lineOf(context, open);
  const example = `${text.slice(line.start + line.indent, line.end).trimEnd()}${quote}`;
  return found(
    `The ${quote} that opens this value is never closed: add ${quote} at the end of the value (${example}), or remove the opening ${quote}.`,
    open,
    line.end,
    text.length + 1,
  );
}

/** A [ or { never closed: the parser notices only at the next key; the closing bracket belongs after the last item. */
function unclosedFlow(context: Context, at: number): Found {
  const { text } = context;
  const noticed = lineOf(context, at);
  // A collection left open is ended by the parser at the next line indented no more than its own.
  const open = flowCollections(text).filter((flow) => {
    const line = lineOf(context, flow.offset);
    if (flow.closed || flow.offset >= at) return false;
    return !context.lines.some(
      (other) =>
        isContent(other) && other.start > line.start && other.start < noticed.start && other.indent <= line.indent,
    );
  });
  const outer = open[0];
  if (!outer) return found(`This is not valid YAML: a list or map is not closed.`, ...atEndOfInput(text, [at, at + 1]));
  const openLine = lineOf(context, outer.offset);
  const what = text[outer.offset] === '[' ? 'list' : 'map';
  const opener = text[outer.offset]!;
  const where = openLine === noticed ? '' : ` on line ${fileLine(context, openLine)}`;
  const closers = open
    .map((flow) => (text[flow.offset] === '[' ? ']' : '}'))
    .reverse()
    .join('');
  if (noticed.start < at || (noticed.body.includes(closers[closers.length - 1]!) && noticed.kind !== 'key')) {
    const continued = noticed.start + noticed.indent <= at ? noticed : openLine;
    return found(
      `The ${what} opened with ${opener}${where} continues on line ${fileLine(context, continued)}, which must be indented: add spaces at its start, or keep the ${what} on one line.`,
      continued.start + continued.indent,
      continued.end,
      Math.max(at, continued.end) + 1,
    );
  }
  const last = [...context.lines]
    .reverse()
    .find(
      (line) => line.start < at && line.start >= openLine.start && line.kind !== 'blank' && line.kind !== 'comment',
    )!;
  if (last === openLine) {
    const written = text.slice(openLine.start + openLine.indent, openLine.end).trimEnd();
    const example = written.includes('#') ? '' : ` (${written}${closers})`;
    return found(
      `The ${what} opened with ${opener} is never closed: add ${closers} at its end${example}.`,
      outer.offset,
      openLine.end,
      at + 1,
    );
  }
  return found(
    `The ${what} opened with ${opener} on line ${fileLine(context, openLine)} is never closed: add ${closers} after its last item${last.body.includes('#') ? '' : ` (${last.body.trimEnd()}${closers})`}.`,
    last.start + last.indent,
    last.end,
    at + 1,
  );
}

/** `{{name}}` in the frontmatter is a YAML map holding a map, never what the author meant. */
function handlebars(context: Context): Found[] {
  const { text } = context;
  if (!text.includes('{{')) return [];
  const found: Found[] = [];
  for (const flow of flowCollections(text)) {
    if (text.slice(flow.offset, flow.offset + 2) !== '{{' || found.some((other) => other.start === flow.offset - 1))
      continue;
    const line = lineOf(context, flow.offset);
    const close = text.indexOf('}}', flow.offset);
    const end = close >= 0 && close < line.end ? close + 2 : line.end;
    const expression = text.slice(flow.offset, end);
    // Inside [ ] or { } only the expression is quoted; as a block value, the rest of the line with it.
    const inFlow = /[[{,]\s*$/.test(text.slice(line.start, flow.offset));
    const quoted = quotedExample(text, line, flow.offset, inFlow ? end : valueEnd(line, text, flow.offset));
    const example = inFlow ? `${quoted}${text.slice(end, valueEnd(line, text, end))}` : quoted;
    const advice = /^\{\{[#/!>^~]|^\{\{else\b/.test(expression)
      ? 'move it below the closing --- or remove it.'
      : `YAML reads { as the start of a map. Quote the value to keep the text: ${example}.`;
    found.push({
      message: `${expression} is Handlebars, which works only in the prompt text after the closing ---, not in the frontmatter: ${advice}`,
      start: flow.offset,
      end,
      coversTo: text.length + 1,
    });
  }
  return found;
}

/** `- a` among keys at the same indentation: a block holds either list items or keys. */
function listAmongKeys(context: Context, line: Line): Found | undefined {
  const { text, lines } = context;
  const index = lines.indexOf(line);
  if (line.kind !== 'item' && line.kind !== 'key') return undefined;
  const previous = [...lines.slice(0, index)]
    .reverse()
    .find((other) => isContent(other) && other.indent <= line.indent);
  if (!previous || previous.indent !== line.indent || previous.kind === line.kind) return undefined;
  if (previous.kind !== 'item' && previous.kind !== 'key') return undefined;
  const parent = [...lines.slice(0, index)].reverse().find((other) => isContent(other) && other.indent < line.indent);
  const blockEnd =
    lines.slice(index + 1).find((other) => isContent(other) && other.indent < line.indent)?.start ?? text.length;
  const sameLevel = lines.filter(
    (other) => other.indent === line.indent && other.start >= (parent?.end ?? 0) && other.start < blockEnd,
  );
  if (!parent || line.kind === 'item') {
    const items = sameLevel.filter((other) => other.kind === 'item');
    const firstKey = sameLevel.find((other) => other.kind === 'key')!;
    const shown = items.slice(0, 3).map((item) => `"${item.body.trimEnd()}"`);
    const what = items.length === 1 ? `the list item ${shown[0]}` : `list items (${shown.join(', ')})`;
    const message = parent
      ? `The block under "${parent.key ?? parent.body}" mixes ${what} with keys like "${firstKey.key}:": a block holds either "- " items or keys. Remove the item, or put it under a key of its own.`
      : `The frontmatter mixes ${what} with keys like "${firstKey.key}:" at the top level: Dotprompt expects keys (model:, tools:, ...). Remove the "- " item, or put it under a key (for example tools:, with the item indented below it).`;
    const last = items[items.length - 1]!;
    return found(message, items[0]!.start + items[0]!.indent, last.end, blockEnd + 1);
  }
  return found(
    `"${line.key}:" is indented like the "- " items of "${parent.key ?? parent.body}", and a block holds either "- " items or keys: unindent "${line.key}:" if it is a key of its own, or make it an item ("- ${line.body.trimEnd()}").`,
    line.start + line.indent,
    line.start + line.indent + line.key!.length + 1,
    blockEnd + 1,
  );
}

/** `model: gpt` then `  tools: [a]` indented below it: a key holds either a value or indented keys. */
function indentedUnderValue(context: Context, line: Line, at: number): Found {
  const { text } = context;
  const indented = nextContent(context, line);
  const value = text.slice(at, valueEnd(line, text, at));
  if (!indented?.key || !line.key) return colonInValue(context, line, at);
  return found(
    `"${indented.key}:" is indented under "${line.key}", which already has a value (${value}): unindent it to line up with "${line.key}:". If this line is part of the value of ${line.key}, put the whole value in quotes.`,
    indented.start + indented.indent,
    indented.start + indented.indent + indented.key.length + 1,
    indented.end + 1,
  );
}

/** `model: a: b`: a second `: ` in a plain value starts a key. */
function colonInValue(context: Context, line: Line, at: number): Found {
  const { text } = context;
  const end = valueEnd(line, text, at);
  const whose = line.key ? `The value of "${line.key}"` : 'This value';
  return found(
    `${whose} contains ": ", which YAML reads as the start of another key: quote the value (${quotedExample(text, line, at, end)}).`,
    at,
    end,
  );
}

/** A key or item indented differently from the ones above it in the same block. */
function misalignedLine(context: Context, line: Line | undefined): Found | undefined {
  if (!line || (line.kind !== 'key' && line.kind !== 'item')) return undefined;
  const index = context.lines.indexOf(line);
  const before = context.lines.slice(0, index).filter(isContent);
  const parent = [...before].reverse().find((other) => other.indent < line.indent);
  const sibling = before.find((other) => other.start > (parent?.start ?? -1) && other.indent > (parent?.indent ?? -1));
  if (!sibling || sibling.indent === line.indent) return undefined;
  const spaces = (count: number) =>
    count === 0 ? 'not indented' : `indented by ${count} space${count === 1 ? '' : 's'}`;
  const start = line.start + line.indent;
  if (line.kind === 'item')
    return found(
      `This list item is ${spaces(line.indent)}, but the items above it are ${spaces(sibling.indent)}: line up its "-" with theirs.`,
      start,
      line.end,
    );
  const where = parent?.key ? ` under "${parent.key}"` : '';
  const outside = parent?.key ? `, or by ${parent.indent} to move it out of ${parent.key}` : '';
  return found(
    `"${line.key}:" is ${spaces(line.indent)}, but the keys above it${where} are ${spaces(sibling.indent)}: indent it by ${sibling.indent} like them${outside}.`,
    start,
    start + line.key!.length + 1,
  );
}

/** `model:gpt`: without a space after the colon YAML reads one piece of text, not a key and its value. */
export function noSpaceAfterColon(text: string, from: number, to: number): YamlMistake | undefined {
  const line = text.slice(from, to).split('\n')[0]!;
  const match = /^(\s*)([A-Za-z_][\w.-]*):([^\s:#][^#]*?)\s*(#.*)?$/.exec(line);
  if (!match || /^\/\//.test(match[3]!)) return undefined;
  const [, indent, key, value] = match;
  return {
    message: `Put a space after the colon: write ${key}: ${value}. Without it, YAML reads "${key}:${value}" as one piece of text, not a key and its value.`,
    start: from + indent!.length,
    end: from + indent!.length + key!.length + 1 + value!.length,
  };
}

function notAKey(context: Context, line: Line): Found {
  const index = context.lines.indexOf(line);
  const previous = [...context.lines.slice(0, index)].reverse().find(isContent);
  const continues =
    previous?.kind === 'key' && previous.indent === line.indent && previous.body.slice(previous.key!.length + 1).trim()
      ? ` If it continues the value of "${previous.key}" above, indent it.`
      : '';
  return found(
    `"${line.body.trimEnd()}" is not a key: each line here must be a key with a colon (name: value).${continues}`,
    line.start + line.indent,
    line.end,
  );
}

function secondDocument(context: Context, at: number): Found {
  const index = context.lines.indexOf(lineOf(context, at));
  const marker = [...context.lines.slice(0, index + 1)].reverse().find((line) => /^(---|\.\.\.)(\s|$)/.test(line.body));
  const line = marker ?? lineOf(context, at);
  return found(
    `A line starting with ${line.body.slice(0, 3)} starts or ends a YAML document inside the frontmatter, which ends only at a line of exactly ---: remove this line, or make it exactly --- to end the frontmatter here.`,
    line.start + line.indent,
    line.end,
    context.text.length + 1,
  );
}

/** An alias whose anchor comes nowhere before it, at its range in the YAML text. */
export function unresolvedAliasMessage(text: string, source: string, range: [number, number]): string {
  const lineStart = text.lastIndexOf('\n', range[0] - 1) + 1;
  const prefix = text.slice(lineStart, range[0]).trimStart();
  return `*${source} repeats a value marked &${source}, but no value before it is marked so: quote it if you mean the text (${prefix}"*${source}"), or mark the value to repeat with &${source}.`;
}

/** An error the parser found only at the end of the input is shown on the last line written. */
function atEndOfInput(text: string, pos: [number, number]): [number, number] {
  const content = text.trimEnd();
  if (pos[0] < content.length) return pos;
  return [content.lastIndexOf('\n') + 1, content.length];
}

function quotedExample(text: string, line: Line, from: number, to: number): string {
  const value = text.slice(from, to);
  const quoted = value.includes('"') ? `'${value.replace(/'/g, "''")}'` : `"${value}"`;
  return `${text.slice(line.start + line.indent, from)}${quoted}`;
}

/** Where a plain value on this line ends: before a comment and trailing spaces. */
function valueEnd(line: Line, text: string, from: number): number {
  const rest = text.slice(from, line.end);
  const comment = rest.search(/\s#/);
  return from + (comment >= 0 ? rest.slice(0, comment) : rest).trimEnd().length;
}

function scalarsOf(doc: Document.Parsed): [number, number][] {
  const ranges: [number, number][] = [];
  const walk = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    const item = node as { range?: number[]; items?: unknown[]; key?: unknown; value?: unknown };
    if (item.range && !item.items) ranges.push([item.range[0]!, item.range[1]!]);
    for (const child of item.items ?? []) walk(child);
    walk(item.key);
    walk(item.value);
  };
  walk(doc.contents);
  return ranges;
}

/** The [ ] and { } collections as the parser's tokens see them (brackets in quotes or text are not counted). */
function flowCollections(text: string): { offset: number; closed: boolean }[] {
  const flows: { offset: number; closed: boolean }[] = [];
  const walk = (token: unknown): void => {
    if (!token || typeof token !== 'object') return;
    if (Array.isArray(token)) return token.forEach(walk);
    const flow = token as { type?: string; offset: number; start?: { source: string }; end?: { source: string }[] };
    if (flow.type === 'flow-collection') {
      const closer = flow.start?.source === '[' ? ']' : '}';
      flows.push({ offset: flow.offset, closed: Boolean(flow.end?.some((end) => end.source === closer)) });
    }
    for (const [name, value] of Object.entries(token)) if (name !== 'start' && name !== 'end') walk(value);
  };
  for (const token of new Parser().parse(text)) walk(token);
  return flows.sort((a, b) => a.offset - b.offset);
}

function splitLines(text: string): Line[] {
  const lines: Line[] = [];
  let start = 0;
  for (const raw of text.split('\n')) {
    const withoutCr = raw.replace(/\r$/, '');
    const indent = withoutCr.length - withoutCr.replace(/^[ \t]*/, '').length;
    const body = withoutCr.slice(indent);
    const key = KEY.exec(body)?.[1];
    const kind = !body
      ? 'blank'
      : body.startsWith('#')
        ? 'comment'
        : /^-(\s|$)/.test(body)
          ? 'item'
          : key
            ? 'key'
            : 'other';
    lines.push({ start, end: start + withoutCr.length, indent, body, kind, key });
    start += raw.length + 1;
  }
  return lines;
}

function lineOf(context: Context, offset: number): Line {
  const { lines } = context;
  for (let index = lines.length - 1; index >= 0; index--) if (lines[index]!.start <= offset) return lines[index]!;
  return lines[0]!;
}

function nextContent(context: Context, line: Line): Line | undefined {
  return context.lines.slice(context.lines.indexOf(line) + 1).find(isContent);
}

function isContent(line: Line): boolean {
  return line.kind !== 'blank' && line.kind !== 'comment';
}

function fileLine(context: Context, line: Line): number {
  return context.firstLine + context.lines.indexOf(line) + 1;
}
