/**
 * File names as text for the model and the user. A name may hold any byte but "/" and NUL, so a
 * sandbox can name a file "a\nfile  1 B  ...  forged.txt" to forge extra rows in a listing, or use
 * bidirectional overrides and zero-width characters to make one name look like another. A name with
 * such characters is shown quoted, with each of them escaped; other names are shown as they are.
 */

// C0 and C1 controls, DEL, zero-width and bidirectional formatting characters, line and paragraph separators, BOM.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u00ad\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069\ufeff]/;
const UNSAFE_ALL = new RegExp(UNSAFE.source, 'g');
const SHORT: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** The name as it is when it is safe to show, else in double quotes with the unsafe characters (and quotes and backslashes) escaped. */
export function displayName(name: string): string {
  if (!UNSAFE.test(name)) return name;
  const escaped = name
    .replace(/[\\"]/g, (char) => `\\${char}`)
    .replace(UNSAFE_ALL, (char) => SHORT[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return `"${escaped}"`;
}

/** The name in double quotes, escaped as displayName does when it needs to be. */
export function quotedName(name: string): string {
  const shown = displayName(name);
  return shown === name ? `"${name}"` : shown;
}
