/**
 * Editor and version-control configuration at the top of a workspace folder: code there runs on the
 * host the next time the user builds, commits or reloads (git hooks and config, VS Code settings and
 * tasks, CI workflows, dev container definitions). A sandbox with read-write access may not create,
 * change, rename or remove these paths unless the user lifted the protection for that folder in a
 * user or machine setting (`agentSandbox.configWritesAllowedIn`).
 */
import { posix } from 'node:path';

/** Names directly under the workspace folder that a sandbox may not change, whether they exist or not. */
export const PROTECTED_PATHS = ['.git', '.vscode', '.github', '.devcontainer'] as const;

/**
 * Which protected names apply to `folder`: all of them, unless `allowedIn` (absolute folder paths
 * from user or machine settings only) lists the folder.
 */
export function protectedPathsFor(folder: string | undefined, allowedIn: readonly string[] = []): readonly string[] {
  if (folder === undefined) return PROTECTED_PATHS;
  const normalized = normalizeFolder(folder);
  return allowedIn.some((entry) => normalizeFolder(entry) === normalized) ? [] : PROTECTED_PATHS;
}

/**
 * Whether a path relative to the workspace folder (posix separators, no leading slash) is, or is
 * under, one of `protectedNames`. Compared case-insensitively, since the folder may live on a
 * case-insensitive file system where ".Git" is ".git".
 */
export function isProtectedPath(relativePath: string, protectedNames: readonly string[] = PROTECTED_PATHS): boolean {
  const first = posix.normalize(relativePath.replace(/^\/+/, '')).split('/')[0]?.toLowerCase() ?? '';
  return protectedNames.some((name) => name.toLowerCase() === first);
}

function normalizeFolder(folder: string): string {
  const trimmed = folder.length > 1 ? folder.replace(/[\\/]+$/, '') : folder;
  return trimmed;
}
