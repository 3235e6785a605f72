/**
 * The files `agent-sandbox validate` checks: files as given, folders searched for *.prompt, and globs
 * (`*`, `**`, `?`, `{a,b}`) expanded here with node:fs, as Node 20 has no fs.glob.
 */
import { readdirSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { usageError } from './args';

const SKIPPED_FOLDERS = new Set(['node_modules', '.git']);
const GLOB_CHARS = /[*?[{]/;

/** The files meant by the command line's arguments, each as it would be written from the current folder. */
export function expandPromptArguments(patterns: readonly string[], cwd: string): string[] {
  const files: string[] = [];
  for (const pattern of patterns) {
    const found = GLOB_CHARS.test(pattern) ? expandGlob(pattern, cwd) : expandPath(pattern, cwd);
    if (found.length === 0)
      throw usageError(GLOB_CHARS.test(pattern) ? `No file matches ${pattern}.` : `No .prompt files in ${pattern}.`);
    files.push(...found);
  }
  return [...new Set(files)];
}

function expandPath(path: string, cwd: string): string[] {
  let stats;
  try {
    stats = statSync(resolve(cwd, path));
  } catch {
    throw usageError(`${path} does not exist.`);
  }
  if (!stats.isDirectory()) return [path];
  return walk(cwd, path).filter((file) => file.endsWith('.prompt'));
}

function expandGlob(pattern: string, cwd: string): string[] {
  const segments = pattern.split('/');
  const firstGlob = segments.findIndex((segment) => GLOB_CHARS.test(segment));
  const base = segments.slice(0, firstGlob).join('/') || (pattern.startsWith('/') ? '/' : '');
  const matcher = globToRegExp(pattern);
  return walk(cwd, base).filter((file) => matcher.test(file));
}

/** Every file under a folder, sorted, as `folder/sub/file`; `node_modules` and `.git` are left out. */
function walk(cwd: string, folder: string): string[] {
  const files: string[] = [];
  const visit = (relative: string) => {
    let entries;
    try {
      entries = readdirSync(resolve(cwd, relative || '.'), { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const path = relative
        ? relative.endsWith('/')
          ? `${relative}${entry.name}`
          : `${relative}/${entry.name}`
        : entry.name;
      if (entry.isDirectory() && !SKIPPED_FOLDERS.has(entry.name)) visit(path);
      else if (entry.isFile()) files.push(path);
    }
  };
  visit(folder.replace(/^\.\/$/, '.'));
  return files.map((file) => file.replace(/^\.\//, ''));
}

/** A glob as a regular expression over `/`-separated paths: `**` spans folders, `*` and `?` do not. */
export function globToRegExp(pattern: string): RegExp {
  let source = '';
  const glob = pattern.replace(/^\.\//, '');
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i]!;
    if (char === '*' && glob[i + 1] === '*') {
      const slash = glob[i + 2] === '/';
      source += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else if (char === '{') {
      const close = glob.indexOf('}', i);
      if (close === -1) source += '\\{';
      else {
        source += `(?:${glob
          .slice(i + 1, close)
          .split(',')
          .map(escape)
          .join('|')})`;
        i = close;
      }
    } else source += escape(char);
  }
  return new RegExp(`^${source}$`);
}

function escape(text: string): string {
  return text.replace(/[.+^$()|[\]\\{}*?]/g, '\\$&');
}
