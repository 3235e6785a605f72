/**
 * The encoded forms a secret value is looked for in, as sequences of units (each a set of
 * alternative strings) with line breaks allowed between units; see redaction.ts for what is caught.
 */

const LINE = '(?:\\r?\\n)?';
const BYTE_SEP = '(?:[ \\t]*\\r?\\n[ \\t]*|[ \\t:.-]|\\\\x|%)?';
const LINE_AT = /\r?\n/y;
const BYTE_SEP_AT = /[ \t]*\r?\n[ \t]*|[ \t:.-]|\\x|%/y;
const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
/** A regex finds the first units of a long form and a loop checks the rest: one regex for a 32 KiB value overflows the stack. */
export const REGEX_UNITS = 256;

export interface Form {
  units: string[][];
  /** Optional partial units at the edges (base64 at an offset) and optional "=" padding after. */
  lead?: string[];
  trail?: string[];
  /** Hex: bytes (every two units) may be separated by BYTE_SEP, not just by a line break. */
  byteSeparated?: boolean;
}

/** Where a walk through a form stopped: the text position and how many units matched. */
interface Walk {
  at: number;
  units: number;
}

/** The forms of a value in text. */
export function textForms(value: string): Form[] {
  const forms: Form[] = [literal([...value])];
  const json = JSON.stringify(value).slice(1, -1);
  if (json !== value) forms.push(literal([...json]));
  const url = encodeURIComponent(value);
  if (url !== value) forms.push(percentForm(url));
  forms.push(anyPercentForm(value));
  return [...forms, ...encodedForms(Buffer.from(value, 'utf8'))];
}

/** Each character either plain or percent-encoded (every byte as %XX, either case), as URL encoders that encode more than needed write it. */
function anyPercentForm(value: string, plain: (char: string) => string = (char) => char): Form {
  return {
    units: [...value].map((char) => {
      const encoded = [...Buffer.from(char, 'utf8')].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');
      return [...new Set([plain(char), encoded.toLowerCase(), encoded.toUpperCase()])];
    }),
  };
}

/** The same forms over raw bytes, read as latin1 so that one character is one byte. */
export function byteForms(value: string): Form[] {
  const latin1 = (text: string) => [...Buffer.from(text, 'utf8').toString('latin1')];
  const forms: Form[] = [literal(latin1(value))];
  const json = JSON.stringify(value).slice(1, -1);
  if (json !== value) forms.push(literal(latin1(json)));
  const url = encodeURIComponent(value);
  if (url !== value) forms.push(percentForm(url));
  forms.push(anyPercentForm(value, (char) => Buffer.from(char, 'utf8').toString('latin1')));
  return [...forms, ...encodedForms(Buffer.from(value, 'utf8'))];
}

function literal(chars: string[]): Form {
  // A line break inside the value may come back as \r\n from a terminal.
  return { units: chars.map((char) => (char === '\n' ? ['\n', '\r\n'] : [char])) };
}

function percentForm(url: string): Form {
  const units: string[][] = [];
  for (let i = 0; i < url.length; i++) {
    const char = url[i]!;
    const inEscape = url[i - 1] === '%' || url[i - 2] === '%';
    units.push(inEscape ? eitherCase(char) : [char]);
  }
  return { units };
}

function encodedForms(bytes: Buffer): Form[] {
  const hex: Form = { units: [...bytes.toString('hex')].map(eitherCase), byteSeparated: true };
  return [hex, ...[0, 1, 2].map((offset) => base64Form(bytes, offset))];
}

/** The base64 of `bytes` when `offset` (0-2) unknown bytes come before them in the encoded text. */
function base64Form(bytes: Buffer, offset: number): Form {
  const start = 8 * offset;
  const end = start + 8 * bytes.length;
  const bit = (position: number) => (bytes[(position - start) >> 3]! >> (7 - ((position - start) & 7))) & 1;
  // The characters a 6-bit group can be, given the bits of it that belong to the value.
  const sextet = (index: number): string[] => {
    const chars: string[] = [];
    for (let value = 0; value < 64; value++) {
      let fits = true;
      for (let b = 0; b < 6 && fits; b++) {
        const position = 6 * index + b;
        if (position >= start && position < end && ((value >> (5 - b)) & 1) !== bit(position)) fits = false;
      }
      if (fits) chars.push(...base64Chars(value));
    }
    return chars;
  };
  const first = Math.ceil(start / 6);
  const last = Math.floor(end / 6);
  const units: string[][] = [];
  for (let index = first; index < last; index++) units.push(sextet(index));
  return {
    units,
    ...(first * 6 > start ? { lead: sextet(first - 1) } : {}),
    ...(last * 6 < end ? { trail: sextet(last) } : {}),
  };
}

function base64Chars(value: number): string[] {
  const standard = BASE64[value]!;
  return value === 62 ? [standard, '-'] : value === 63 ? [standard, '_'] : [standard];
}

function eitherCase(char: string): string[] {
  const lower = char.toLowerCase();
  const upper = char.toUpperCase();
  return lower === upper ? [char] : [lower, upper];
}

/** The form's regex; for a long form, only of its first REGEX_UNITS units. */
export function formRegex(form: Form): RegExp {
  return new RegExp(formSource(form), 'g');
}

function formSource(form: Form): string {
  const units = form.units.slice(0, REGEX_UNITS);
  let source = units.map((unit, i) => (i === 0 ? '' : separatorSource(form, i)) + unitSource(unit)).join('');
  if (form.lead) source = `(?:${unitSource(form.lead)}${LINE})?${source}`;
  if (form.trail && units.length === form.units.length)
    source += `(?:${LINE}${unitSource(form.trail)}(?:${LINE}=){0,2})?`;
  return source;
}

/** Where a match of the form's regex ends, checking the rest of a long form; undefined when the rest differs. */
export function matchEnd(text: string, found: RegExpExecArray, form: Form): number | undefined {
  const at = found.index + found[0].length;
  if (form.units.length <= REGEX_UNITS) return at;
  const walk = walkForm(text, at, form, REGEX_UNITS);
  if (walk.units < form.units.length) return undefined;
  if (!form.trail) return walk.at;
  const afterLine = (position: number) => {
    LINE_AT.lastIndex = position;
    return LINE_AT.test(text) ? LINE_AT.lastIndex : position;
  };
  const trailAt = afterLine(walk.at);
  if (!form.trail.includes(text[trailAt] ?? '')) return walk.at;
  let end = trailAt + 1;
  for (let pad = 0; pad < 2 && text[afterLine(end)] === '='; pad++) end = afterLine(end) + 1;
  return end;
}

/** Matches units from `unit` on, starting at `at` (just after unit - 1), with the separators the form allows between them. */
function walkForm(text: string, at: number, form: Form, unit: number): Walk {
  while (unit < form.units.length && at < text.length) {
    const alternatives = form.units[unit]!;
    const skipped = unit > 0 ? skipSeparator(text, at, form, unit) : at;
    const next =
      alternatives.find((alternative) => text.startsWith(alternative, skipped)) ??
      (skipped === at ? undefined : alternatives.find((alternative) => text.startsWith(alternative, at)));
    if (next === undefined) break;
    at = (text.startsWith(next, skipped) ? skipped : at) + next.length;
    unit++;
  }
  return { at, units: unit };
}

function separatorSource(form: Form, index: number): string {
  return form.byteSeparated && index % 2 === 0 ? BYTE_SEP : LINE;
}

function unitSource(unit: string[]): string {
  if (unit.every((alternative) => alternative.length === 1)) {
    return unit.length === 1 ? escape(unit[0]!) : `[${unit.map(escape).join('')}]`;
  }
  return `(?:${unit.map(escape).join('|')})`;
}

function escape(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    out += /[A-Za-z0-9_]/.test(char) ? char : `\\u${text.charCodeAt(i).toString(16).padStart(4, '0')}`;
  }
  return out;
}

/**
 * Where the text ends with a start of the form (at least `least` units, not all of them), as left
 * when output was cut at a cap; the leftmost such start is the longest one.
 */
export function cutStart(text: string, form: Form, least: number): number | undefined {
  const need = Math.min(least, form.units.length - 1);
  if (need < 1) return undefined;
  const longest = form.units.reduce((sum, unit) => sum + Math.max(...unit.map((alternative) => alternative.length)), 0);
  for (let start = Math.max(0, text.length - 4 * longest - 8); start < text.length; start++) {
    if (!form.units[0]!.some((alternative) => text.startsWith(alternative, start))) continue;
    const walk = walkForm(text, start, form, 0);
    if (
      walk.units >= need &&
      walk.units < form.units.length &&
      skipSeparator(text, walk.at, form, walk.units) >= text.length
    )
      return start;
  }
  return undefined;
}

function skipSeparator(text: string, at: number, form: Form, unit: number): number {
  const separator = form.byteSeparated && unit % 2 === 0 ? BYTE_SEP_AT : LINE_AT;
  separator.lastIndex = at;
  return separator.test(text) ? separator.lastIndex : at;
}
