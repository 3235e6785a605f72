/**
 * Where a `.prompt` file's YAML frontmatter is: between a first line `---` and the next line `---`,
 * as Dotprompt reads it. A file that does not start with `---` has no frontmatter, only a body.
 */
export interface FrontmatterBlock {
  /** The opening fence line, without its line break. */
  openStart: number;
  openEnd: number;
  /** The YAML text between the fences. */
  start: number;
  end: number;
  /** The closing fence line, when there is one. */
  close?: { start: number; end: number };
  /** Where the Handlebars body begins. */
  bodyStart: number;
}

const FENCE = /^---[ \t]*\r?$/;

export function findFrontmatter(text: string): FrontmatterBlock | undefined {
  const openStart = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const firstBreak = text.indexOf('\n', openStart);
  const firstLine = text.slice(openStart, firstBreak === -1 ? text.length : firstBreak);
  if (!FENCE.test(firstLine)) return undefined;
  const openEnd = openStart + firstLine.replace(/\r$/, '').length;
  const start = firstBreak === -1 ? text.length : firstBreak + 1;
  let lineStart = start;
  while (lineStart < text.length) {
    const lineBreak = text.indexOf('\n', lineStart);
    const lineEnd = lineBreak === -1 ? text.length : lineBreak;
    const line = text.slice(lineStart, lineEnd);
    if (FENCE.test(line)) {
      return {
        openStart,
        openEnd,
        start,
        end: lineStart,
        close: { start: lineStart, end: lineStart + line.replace(/\r$/, '').length },
        bodyStart: lineBreak === -1 ? text.length : lineBreak + 1,
      };
    }
    lineStart = lineEnd + 1;
  }
  return { openStart, openEnd, start, end: text.length, bodyStart: text.length };
}
