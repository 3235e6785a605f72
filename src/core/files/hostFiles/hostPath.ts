/**
 * A path relative to a host folder, taken apart lexically before anything touches the disk: each
 * name is then opened on its own, so '..', empty names and NUL bytes are refused here, never resolved.
 */
import { isProtectedPath } from '../../policy/protectedPaths';
import { HostFileError } from './hostFileError';
import { quotedName as quoteName } from '../../results/displayName';

/** The names of a relative path, in order; './' is dropped, anything that could leave the folder throws. */
export function pathNames(path: string): string[] {
  const shown = quoteName(path);
  if (path.includes('\0'))
    throw new HostFileError(
      'EINVAL',
      'invalid-input',
      `The path ${shown} contains a NUL character.`,
      'Remove the NUL byte from the path.',
    );
  if (path.startsWith('/'))
    throw new HostFileError(
      'EINVAL',
      'invalid-input',
      `The path ${shown} is absolute.`,
      'Give a path relative to the workspace folder, like "data/input.csv".',
    );
  const names: string[] = [];
  for (const name of path.split('/')) {
    if (name === '.') continue;
    if (name === '..')
      throw new HostFileError(
        'EACCES',
        'path-outside-workspace',
        `The path ${shown} contains "..", which could lead outside the workspace folder.`,
        'Give a path that goes only down from the workspace folder, like "data/input.csv".',
      );
    if (name === '')
      throw new HostFileError(
        'EINVAL',
        'invalid-input',
        `The path ${shown} has an empty name in it (a doubled or trailing "/").`,
        'Give a path like "data/input.csv", without "//" or a trailing "/".',
      );
    names.push(name);
  }
  if (names.length === 0)
    throw new HostFileError(
      'EISDIR',
      'is-a-directory',
      `The path ${shown} names the workspace folder itself.`,
      'Give the path of a file inside it, like "data/input.csv".',
    );
  return names;
}

/** Whether `path` only goes down from a folder, name by name: no NUL, not absolute, no '.', '..' or empty name. */
export function isPlainRelativePath(path: string): boolean {
  if (path === '' || path.includes('\0') || path.startsWith('/')) return false;
  return path.split('/').every((name) => name !== '' && name !== '.' && name !== '..');
}

/**
 * Throws unless writing `names` is allowed: editor and version-control configuration at the top of
 * the folder runs on the host, so it is refused unless the user lifted that for this folder.
 */
export function refuseProtected(names: readonly string[], protectedPaths: readonly string[], action = 'Writing'): void {
  if (names.length === 0 || !isProtectedPath(names.join('/'), protectedPaths)) return;
  throw new HostFileError(
    'EPERM',
    'permission-denied',
    `${action} ${quoteName(names.join('/'))} is refused: ${quoteName(names[0]!)} holds editor or version-control configuration, which runs code on the host.`,
    'Use another path. Only the user can allow this, for this folder, with the setting agentSandbox.configWritesAllowedIn (user or machine settings).',
  );
}
