/**
 * A tool's text as the parts of a result. Copilot's agent loop writes any text part longer than
 * 8,192 characters to a file and shows the model only a pointer to it; so no part is longer than
 * PART_CHARS, and the first one, which every tool starts with its headline (outcome, exit code or
 * error, sizes, what to call next), is always seen.
 */
export const PART_CHARS = 8_000;

/** The text in parts of at most PART_CHARS characters, cut at line breaks when one is in the last quarter. */
export function resultParts(text: string): string[] {
  if (text.length <= PART_CHARS) return [text];
  const parts: string[] = [];
  let at = 0;
  while (at < text.length) {
    let end = Math.min(at + PART_CHARS, text.length);
    if (end < text.length) {
      const newline = text.lastIndexOf('\n', end - 1);
      if (newline >= at + PART_CHARS * 0.75) end = newline + 1;
      const code = text.charCodeAt(end);
      if (code >= 0xdc00 && code <= 0xdfff) end--;
    }
    parts.push(text.slice(at, end));
    at = end;
  }
  return parts;
}
