/**
 * Where a `.prompt` file's partials are, by Dotprompt's convention (its directory store): `{{> name}}`
 * is `_name.prompt` beside the file, `{{> common/header}}` is `common/_header.prompt`.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** Reads a partial by its name; undefined when there is no such file. */
export type PartialReader = (name: string) => Promise<string | undefined>;

const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

/**
 * The partial file's path relative to the prompt's folder, or undefined for a name that would leave
 * that folder (`..`, an absolute path): a prompt includes only files kept with it.
 */
export function partialFileName(name: string): string | undefined {
  const segments = name.split('/');
  if (!segments.every((segment) => SEGMENT.test(segment) && !/^\.+$/.test(segment))) return undefined;
  const base = segments.pop()!;
  return [...segments, `_${base}.prompt`].join('/');
}

/** Partials read from the folder of the `.prompt` file at `promptPath`. */
export function partialsBeside(promptPath: string): PartialReader {
  const folder = dirname(promptPath);
  return async (name) => {
    const file = partialFileName(name);
    if (!file) return undefined;
    try {
      return await readFile(join(folder, file), 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR') return undefined;
      throw error;
    }
  };
}
