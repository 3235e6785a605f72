/**
 * What a terminal shows of a text: without ANSI escape sequences, carriage returns, backspaces and
 * zero-width characters. A secret printed with such characters between its letters looks whole on
 * screen (and to a model that ignores them), so the redactor also looks for it in this view and maps
 * what it finds back to the original text. Linear in the text's length.
 */

// CSI (ESC [ ... final, or the 8-bit CSI), OSC (ESC ] ... BEL or ST), other two-character escapes,
// lone CR and BS, and the invisible format characters (zero-width space/joiners, word joiner, BOM,
// soft hyphen, bidirectional marks and isolates).
const IGNORABLE =
  /\x1b\[[0-?]*[ -/]*[@-~]|\x9b[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]|\r(?!\n)|[\b\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;
const ANY_IGNORABLE = /[\x1b\x9b\r\b\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/;

export interface TextView {
  text: string;
  /** For each character of `text`, its index in the original. */
  origin: Int32Array;
}

/** The view without ignorable characters; undefined when the text has none (the common case). */
export function visibleView(text: string): TextView | undefined {
  if (!ANY_IGNORABLE.test(text)) return undefined;
  let visible = '';
  const origin: number[] = [];
  let at = 0;
  const keep = (end: number) => {
    visible += text.slice(at, end);
    for (let i = at; i < end; i++) origin.push(i);
  };
  IGNORABLE.lastIndex = 0;
  for (let found = IGNORABLE.exec(text); found; found = IGNORABLE.exec(text)) {
    keep(found.index);
    at = found.index + found[0].length;
  }
  keep(text.length);
  return { text: visible, origin: Int32Array.from(origin) };
}

/** The original range [start, end) behind a range of the view. */
export function originalRange(view: TextView, start: number, end: number): { start: number; end: number } {
  return { start: view.origin[start]!, end: view.origin[end - 1]! + 1 };
}
