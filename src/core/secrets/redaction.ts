/**
 * Keeps the secrets given to a sandbox out of what goes back to the model and the user: every
 * occurrence becomes `[secret:NAME]`. The one redactor of every output path (see knownSecrets.ts). Best effort against accidents (a program printing its
 * configuration, a debug dump), not against a program set on smuggling a value out.
 *
 * Caught, each also with line breaks (\n or \r\n) between any two characters, as `fold`, `base64`
 * (76 columns) or a PEM writer put them:
 * - the value itself, and its JSON-escaped and percent-encoded (URL) forms, including every character
 *   percent-encoded or any mix of encoded and plain characters;
 * - any of these with ANSI escape sequences, carriage returns, backspaces or zero-width characters
 *   between its characters (what a terminal shows as the value);
 * - its UTF-8 bytes in hex, either case, bytes optionally separated by a space, ":", ".", "-", "\x"
 *   or "%", or by a line break with indentation (`od -An -tx1`, `xxd -p`, `\x41\x42`, `41:42`);
 * - its UTF-8 bytes in base64, standard or url-safe, padded or not, at each of the three offsets
 *   (mod 3) it can have inside a longer base64 text: the characters that depend only on the value
 *   are matched exactly, and the one character at either edge that mixes value bits with unknown
 *   neighbouring bits is matched by the set of characters consistent with the value's bits;
 * - when output was cut at a size cap: a start of the value (4 characters or more) at the very end.
 * Not caught: any other transformation (reversed, rot13, xor, gzip, base32, decimal bytes, hex with
 * offset columns as in plain `xxd`, a value split between stdout and stderr, a value cut at a cap in
 * an encoded form, `fold` cutting a multi-byte UTF-8 character in half).
 */
import type { ExecResult, FileContent } from '../engine/engine';
import { byteForms, cutStart, formRegex, matchEnd, textForms, REGEX_UNITS, type Form } from './redactionForms';
import { originalRange, visibleView } from './redactionView';

/**
 * Values shorter than this are left alone: a 1-3 character value is guessed in a moment anyway, and
 * redacting "a" or "42" everywhere would shred the output (and its positions would tell the value).
 */
export const MIN_SECRET_LENGTH = 4;

interface Secret {
  names: string[];
  value: string;
  /** Built on first use: binary content is rare. */
  forms: { text?: CompiledForm[]; bytes?: CompiledForm[] };
}

interface CompiledForm {
  form: Form;
  regex: RegExp;
}

export interface Match {
  start: number;
  end: number;
  names: string[];
}

export class Redactor {
  private readonly secrets: Secret[] = [];

  /**
   * `secrets` maps each name (as the sandbox sees it) to its value; as pairs, one name may have
   * several values (two sessions' TOKEN), and a value several names.
   */
  constructor(secrets: Readonly<Record<string, string>> | Iterable<readonly [string, string]> = {}) {
    const names = new Map<string, string[]>();
    const pairs = Symbol.iterator in secrets ? secrets : Object.entries(secrets);
    for (const [name, value] of pairs) {
      if ([...value].length < MIN_SECRET_LENGTH) continue;
      const known = names.get(value) ?? [];
      if (!known.includes(name)) names.set(value, [...known, name]);
    }
    for (const [value, valueNames] of names) {
      this.secrets.push({ names: valueNames, value, forms: {} });
    }
  }

  /** Whether there is anything to redact. */
  get isEmpty(): boolean {
    return this.secrets.length === 0;
  }

  /** `cut`: the text was cut at a size cap, so a value may be only partly there at its very end. */
  redact(text: string, options: { cut?: boolean } = {}): string {
    let result = '';
    let at = 0;
    for (const match of this.ranges(text, options)) {
      result += `${text.slice(at, match.start)}${secretLabel(match.names)}`;
      at = match.end;
    }
    return at === 0 ? text : result + text.slice(at);
  }

  /** Where secrets are in the text, in order and not overlapping, with the names of each. */
  ranges(text: string, options: { cut?: boolean } = {}): Match[] {
    if (this.isEmpty || text === '') return [];
    const matches = this.find(text, 'text', options.cut ?? false);
    // A value with escape sequences, carriage returns or zero-width characters between its letters.
    const view = visibleView(text);
    if (view)
      for (const match of this.find(view.text, 'text', options.cut ?? false))
        matches.push({ ...originalRange(view, match.start, match.end), names: match.names });
    return merge(matches);
  }

  /**
   * How many characters an encoded form of the longest value can take (hex with separators, base64
   * broken into lines): what a stream holds back so that no value is cut between two chunks.
   */
  get longestForm(): number {
    const bytes = Math.max(0, ...this.secrets.map((secret) => Buffer.byteLength(secret.value, 'utf8')));
    return 8 * bytes + 64;
  }

  /** For binary data: the value's bytes (and its text encodings) are overwritten with "*", keeping every offset. */
  redactBytes(data: Uint8Array, options: { cut?: boolean } = {}): Uint8Array {
    if (this.isEmpty || data.length === 0) return data;
    const matches = this.find(
      Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('latin1'),
      'bytes',
      options.cut ?? false,
    );
    if (matches.length === 0) return data;
    const copy = Uint8Array.from(data);
    for (const match of matches) copy.fill(0x2a, match.start, match.end);
    return copy;
  }

  private find(text: string, mode: 'text' | 'bytes', cut: boolean): Match[] {
    const matches: Match[] = [];
    for (const secret of this.secrets) {
      const compiled = (secret.forms[mode] ??= (mode === 'text' ? textForms : byteForms)(secret.value).map((form) => ({
        form,
        regex: formRegex(form),
      })));
      for (const { form, regex } of compiled) {
        regex.lastIndex = 0;
        for (let found = regex.exec(text); found; found = regex.exec(text)) {
          const end = matchEnd(text, found, form);
          if (end !== undefined) matches.push({ start: found.index, end, names: secret.names });
          // Overlapping occurrences too, so that none is left half shown; for a long value, whose check is
          // costly, only after a mismatch (a long value that overlaps itself is rare).
          regex.lastIndex = end !== undefined && form.units.length > REGEX_UNITS ? end : found.index + 1;
        }
        const start = cut ? cutStart(text, form, MIN_SECRET_LENGTH) : undefined;
        if (start !== undefined) matches.push({ start, end: text.length, names: secret.names });
      }
    }
    return matches;
  }
}

/** What a secret's value is replaced with: `[secret:NAME]`, or `[secret:A,B]` for a value several names hold. */
export function secretLabel(names: readonly string[]): string {
  return `[secret:${names.join(',')}]`;
}

export function redactText(text: string, redactor: Redactor): string {
  return redactor.redact(text);
}

/** stdout, stderr, the hint and notices; a stream cut at its cap is redacted before its truncation marker. */
export function redactExecResult(result: ExecResult, redactor: Redactor): ExecResult {
  if (redactor.isEmpty) return result;
  const { hint, ...rest } = result;
  return {
    ...rest,
    stdout: redactStream(result.stdout, result.stdoutTruncated, 'stdout', redactor),
    stderr: redactStream(result.stderr, result.stderrTruncated, 'stderr', redactor),
    ...(hint === undefined ? {} : { hint: redactor.redact(hint) }),
    notices: result.notices.map((notice) => redactor.redact(notice)),
  };
}

/**
 * Text content is redacted as text. Base64 content that is valid UTF-8 is redacted as text and
 * encoded again; other binary content keeps its bytes, except a value found in them, overwritten.
 */
export function redactFileContent(content: FileContent, redactor: Redactor): FileContent {
  if (redactor.isEmpty) return content;
  if (content.encoding === 'utf8')
    return { ...content, content: redactor.redact(content.content, { cut: content.truncated }) };
  const bytes = Buffer.from(content.content, 'base64');
  let text: string | undefined;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    text = undefined;
  }
  const redacted =
    text === undefined
      ? Buffer.from(redactor.redactBytes(bytes, { cut: content.truncated }))
      : Buffer.from(redactor.redact(text, { cut: content.truncated }), 'utf8');
  return redacted.equals(bytes) ? content : { ...content, content: redacted.toString('base64') };
}

function redactStream(text: string, truncated: boolean, stream: string, redactor: Redactor): string {
  const marker = truncated ? text.lastIndexOf(`\n[${stream} truncated: `) : -1;
  if (marker < 0) return redactor.redact(text);
  return redactor.redact(text.slice(0, marker), { cut: true }) + text.slice(marker);
}

/** Overlapping matches become one, named after the match that covers all of it, or else after every secret in it. */
function merge(matches: Match[]): Match[] {
  matches.sort((a, b) => a.start - b.start || b.end - a.end);
  const groups: Match[][] = [];
  let end = -1;
  for (const match of matches) {
    if (match.start < end) groups[groups.length - 1]!.push(match);
    else groups.push([match]);
    end = Math.max(end, match.end);
  }
  return groups.map((group) => {
    const start = group[0]!.start;
    const stop = Math.max(...group.map((match) => match.end));
    const whole = group.find((match) => match.start === start && match.end === stop);
    return { start, end: stop, names: whole ? whole.names : [...new Set(group.flatMap((match) => match.names))] };
  });
}
