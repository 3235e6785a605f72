/**
 * Dotprompt with a Handlebars environment of its own, and Handlebars' errors told in the file's terms.
 *
 * Every Dotprompt instance shares one global Handlebars environment (`noConflict()` returns the same
 * object), so a partial one file registered was used by the next file that named the same partial,
 * whichever folder it came from. Each render gets a fresh environment instead.
 */
import { Dotprompt, type DotpromptOptions } from 'dotprompt';
import { partialFileName } from './renderPartials';

interface HandlebarsEnvironment {
  create(): HandlebarsEnvironment;
  helpers: Record<string, unknown>;
  registerHelper(name: string, helper: unknown): void;
  parse(template: string): unknown;
  /** Dotprompt walks templates with it to find partials; `create()` leaves it out. */
  Visitor?: unknown;
}

/** A Dotprompt whose helpers are its built-in ones and whose partials are only those this render resolves. */
export function isolatedDotprompt(options: DotpromptOptions): {
  dotprompt: Dotprompt;
  handlebars: HandlebarsEnvironment;
} {
  const dotprompt = new Dotprompt(options);
  const inside = dotprompt as unknown as { handlebars?: HandlebarsEnvironment; knownHelpers?: Record<string, boolean> };
  const shared = inside.handlebars;
  if (!shared || typeof shared.create !== 'function' || !inside.knownHelpers)
    throw new Error(
      'The dotprompt package changed: its Handlebars environment is not where src/core/prompt/renderTemplate.ts expects it.',
    );
  const own = shared.create();
  own.Visitor ??= shared.Visitor;
  for (const name of Object.keys(inside.knownHelpers))
    if (!(name in own.helpers)) own.registerHelper(name, shared.helpers[name]);
  inside.handlebars = own;
  return { dotprompt, handlebars: own };
}

/** Where a template problem is, counted in the template (1-based line, 0-based column), and what to do. */
export interface TemplateProblem {
  line: number;
  column: number;
  message: string;
}

const HELPERS = 'role, media, history, section, json, ifEquals, unlessEquals, and if, unless, each, with, lookup';

/** Handlebars' error, thrown while parsing, compiling or rendering `template`, as a problem of the file. */
export function templateProblem(error: unknown, template: string): TemplateProblem {
  const raw = error instanceof Error ? error.message : String(error);
  const located = error as { lineNumber?: unknown; column?: unknown };
  const line = typeof located.lineNumber === 'number' ? located.lineNumber : 1;
  const column = typeof located.column === 'number' ? located.column : 0;
  const message = raw.replace(/ - \d+:\d+$/, '');

  const parseError = /^Parse error on line (\d+):[\s\S]*\nExpecting (.*), got '([^']*)'$/.exec(raw);
  if (parseError) {
    if (parseError[3] === 'EOF')
      return {
        ...unclosedAt(template),
        message:
          'This is left open until the end of the template: close each {{#block}} with its {{/block}} (like {{#if x}} ... {{/if}}), and each {{ with }}.',
      };
    const tokens = parseError[2]!.split(', ').map((token) => token.replace(/'/g, ''));
    // Of what the parser would take, the ends of tags are what a person left out.
    const closers = tokens.filter((token) => token === 'CLOSE' || token === 'CLOSE_UNESCAPED');
    const expected = (closers.length ? closers : tokens).map(tokenText);
    return {
      line: Number(parseError[1]),
      column: 0,
      message: `Handlebars cannot read the template on this line: it found ${tokenText(parseError[3]!)} where it expected ${expected.join(' or ')}. Check that each {{ has its }} and each block its closing tag.`,
    };
  }
  const mismatch = /^(\S+) doesn't match (\S+)$/.exec(message);
  if (mismatch)
    return {
      line,
      column,
      message: `{{#${mismatch[1]}}} is closed by {{/${mismatch[2]}}}: close it with {{/${mismatch[1]}}}, after any block opened inside it is closed.`,
    };
  const unknownHelper = /unknown helper (\S+)/.exec(message);
  if (unknownHelper)
    return {
      line,
      column,
      message: `{{${unknownHelper[1]} ...}} calls a helper Dotprompt does not have (it has ${HELPERS}): an input value takes no arguments, like {{${unknownHelper[1]}}}.`,
    };
  const missingPartial = /^The partial (.+) could not be found$/.exec(message);
  if (missingPartial) {
    const name = missingPartial[1]!;
    const at = partialPosition(template, name);
    const file = partialFileName(name);
    return {
      ...at,
      message: file
        ? `{{> ${name}}} names a partial that is not there: Dotprompt reads it from ${file} beside this file; create that file or fix the name.`
        : `{{> ${name}}} names a partial outside this file's folder: partials are read only from the folder of the .prompt file and below.`,
    };
  }
  return { line, column, message: `The template cannot be rendered: ${message}` };
}

const TOKENS: Record<string, string> = {
  CLOSE: '}}',
  CLOSE_UNESCAPED: '}}}',
  CLOSE_RAW_BLOCK: '}}}}',
  OPEN: '{{',
  OPEN_BLOCK: '{{#',
  OPEN_ENDBLOCK: '{{/',
  OPEN_INVERSE: '{{^',
  OPEN_INVERSE_CHAIN: '{{else',
  INVERSE: '{{else}}',
  OPEN_PARTIAL: '{{>',
  OPEN_SEXPR: '(',
  CLOSE_SEXPR: ')',
  OPEN_BLOCK_PARAMS: 'as |',
  CLOSE_BLOCK_PARAMS: '|',
  ID: 'a name',
  STRING: 'a string',
  NUMBER: 'a number',
  BOOLEAN: 'true or false',
  UNDEFINED: 'undefined',
  NULL: 'null',
  DATA: '@name',
  EQUALS: '=',
  SEP: '. or /',
  CONTENT: 'text',
  EOF: 'the end of the template',
  INVALID: 'something it cannot read',
};

function tokenText(token: string): string {
  return TOKENS[token] ?? token.toLowerCase().replace(/_/g, ' ');
}

/** The innermost `{{#block}}` never closed, else the last `{{` without `}}`, else the end of the template. */
function unclosedAt(template: string): { line: number; column: number } {
  const open: number[] = [];
  for (const tag of template.matchAll(/\{\{~?\s*([#/^])\s*>?\s*([^\s}~]*)/g)) {
    if (tag[1] === '/') open.pop();
    else if (tag[1] === '#' || (tag[1] === '^' && tag[2])) open.push(tag.index);
  }
  const lastOpen = template.lastIndexOf('{{');
  const unclosedTag = lastOpen !== -1 && template.indexOf('}}', lastOpen) === -1 ? lastOpen : undefined;
  return positionIn(template, open.at(-1) ?? unclosedTag ?? template.length);
}

function positionIn(template: string, offset: number): { line: number; column: number } {
  const before = template.slice(0, offset);
  return { line: before.split('\n').length, column: offset - (before.lastIndexOf('\n') + 1) };
}

/** Where `{{> name` first appears in the template. */
export function partialPosition(template: string, name: string): { line: number; column: number } {
  const escaped = name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const match = new RegExp(`\\{\\{~?>\\s*${escaped}(?=[\\s}~])`).exec(template);
  return positionIn(template, match?.index ?? 0);
}
