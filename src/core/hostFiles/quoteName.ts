/** Names echoed in errors and listings: quoted, with control and invisible characters escaped, so that a name cannot forge lines. */

/** Characters JSON.stringify leaves as they are but a terminal or a model may read as something else. */
const INVISIBLE = /[\u007f-\u009f\u00ad\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]/g;

export function quoteName(name: string): string {
  return JSON.stringify(name).replace(INVISIBLE, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
