/**
 * The protected paths of a read-write workspace (core/policy/protectedPaths.ts), held inside the
 * container by a read-only bind mount over each: writes there fail (EROFS), and a mountpoint cannot
 * be renamed, replaced or removed (EBUSY), nor hard-linked out (EXDEV). /workspace itself is a
 * mountpoint too, so no parent can be renamed either.
 *
 * A mount needs something to mount over. A protected name that does not exist gets an empty
 * directory made on the host before the container is created, recorded in a label, and removed
 * again when the last session that uses it is removed, if it is still empty. An empty `.git` does
 * not disturb git: repository discovery skips it and goes on to a parent repository.
 */
import type Docker from 'dockerode';
import { lstat, mkdir, readdir, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { SandboxError } from '../../core/errors';
import { WORKSPACE_DIR } from '../../core/files/paths';
import { PROTECTED_PATHS } from '../../core/policy/protectedPaths';
import { listContainers } from './engineCalls';
import { LABEL } from './labels';

export interface ProtectedEntry {
  name: string;
  kind: 'directory' | 'file';
  /** An empty directory made (or shared) for this session only, to be removed with it. */
  placeholder: boolean;
}

export interface WorkspaceProtection {
  entries: ProtectedEntry[];
  /** What changed on the host, for the session's notices. */
  notices: string[];
}

/** The read-only bind mounts over each protected entry, inside the workspace mount. */
export function protectedMountSettings(folder: string, entries: readonly ProtectedEntry[]): Docker.MountSettings[] {
  return entries.map((entry) => ({
    Type: 'bind',
    Source: join(folder, entry.name),
    Target: `${WORKSPACE_DIR}/${entry.name}`,
    ReadOnly: true,
  }));
}

/** The create request with the protected entries' mounts and the placeholder label added. */
export function withProtection(
  options: Docker.ContainerCreateOptions,
  folder: string,
  protection: WorkspaceProtection,
): Docker.ContainerCreateOptions {
  const placeholders = protection.entries.filter((entry) => entry.placeholder).map((entry) => entry.name);
  const host = options.HostConfig ?? {};
  return {
    ...options,
    Labels: {
      ...options.Labels,
      [LABEL.protected]: JSON.stringify(protection.entries.map((entry) => entry.name)),
      ...(placeholders.length ? { [LABEL.placeholders]: JSON.stringify(placeholders) } : {}),
    },
    HostConfig: { ...host, Mounts: [...(host.Mounts ?? []), ...protectedMountSettings(folder, protection.entries)] },
  };
}

/** A protected name is one entry directly under the folder: never a path, never "." or "..". */
export function checkProtectedName(name: string): string {
  if (!name || name === '.' || name === '..' || /[/\\\0]/.test(name)) {
    throw new SandboxError(
      'invalid-input',
      `"${name}" cannot be a protected path: it must be one name directly under the workspace folder.`,
      'Use names like .git or .vscode.',
    );
  }
  return name;
}

/**
 * Looks at each protected name under `folder` and makes a placeholder directory where there is none.
 * Only one component is ever made (mkdir does not follow a link in its last component), and what is
 * there afterwards is checked with lstat: a link, a socket or a device is refused, since a bind mount
 * would follow the link to wherever it points on the host.
 */
export async function prepareProtection(
  docker: Docker,
  folder: string,
  names: readonly string[] = PROTECTED_PATHS,
  signal?: AbortSignal,
): Promise<WorkspaceProtection> {
  const wanted = [...new Set(names.map(checkProtectedName))];
  if (wanted.length === 0) return { entries: [], notices: [] };
  const shared = await claimedPlaceholders(docker, folder, signal);
  const entries: ProtectedEntry[] = [];
  const made: string[] = [];
  try {
    for (const name of wanted) entries.push(await protectOne(folder, name, shared, made));
  } catch (error) {
    // Refused: the placeholders made so far go again, so that a refusal leaves the folder as it was.
    await Promise.all(made.map((name) => rmdir(join(folder, name)).catch(() => undefined)));
    throw error;
  }
  const notices = [
    `${entries.map((entry) => entry.name).join(', ')} in the workspace are read-only in the sandbox: editor and version-control configuration runs on the host.`,
  ];
  if (made.length)
    notices.push(
      `To keep the sandbox from creating ${made.join(', ')} in ${folder}, empty folders of that name were made there; they are removed when the session closes if they are still empty.`,
    );
  return { entries, notices };
}

async function protectOne(
  folder: string,
  name: string,
  shared: ReadonlySet<string>,
  made: string[],
): Promise<ProtectedEntry> {
  const path = join(folder, name);
  let createdNow = false;
  try {
    await mkdir(path, { mode: 0o755 });
    createdNow = true;
    made.push(name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw cannotProtect(name, folder, (error as Error).message);
  }
  const stat = await lstat(path);
  if (stat.isDirectory()) {
    // A placeholder another live session made is shared, so that the last one to go removes it.
    return {
      name,
      kind: 'directory',
      placeholder: createdNow || (shared.has(name) && (await readdir(path)).length === 0),
    };
  }
  if (stat.isFile()) return { name, kind: 'file', placeholder: false };
  throw cannotProtect(
    name,
    folder,
    stat.isSymbolicLink() ? 'it is a symbolic link' : 'it is not a regular file or directory',
  );
}

/** Removes the placeholders a removed container recorded, unless another container of the folder still uses them; returns the names removed. */
export async function releasePlaceholders(
  docker: Docker,
  labels: Record<string, string> | undefined,
): Promise<string[]> {
  const folder = labels?.[LABEL.workspace];
  const names = parseNames(labels?.[LABEL.placeholders]);
  if (!folder || names.length === 0) return [];
  const stillUsed = await claimedPlaceholders(docker, folder);
  const removed: string[] = [];
  for (const name of names) {
    if (stillUsed.has(name)) continue;
    try {
      // rmdir removes only an empty directory, and never follows a link: whatever the sandbox left stays.
      await rmdir(join(folder, checkProtectedName(name)));
      removed.push(name);
    } catch {
      // Not empty, gone, or no longer a directory: left as it is.
    }
  }
  return removed;
}

/** Placeholder names that containers of ours for this folder (any state) recorded. */
async function claimedPlaceholders(docker: Docker, folder: string, signal?: AbortSignal): Promise<Set<string>> {
  const containers = await listContainers(docker, [`${LABEL.managed}=1`, `${LABEL.workspace}=${folder}`], signal);
  return new Set(containers.flatMap((container) => parseNames(container.Labels[LABEL.placeholders])));
}

function parseNames(text: string | undefined): string[] {
  if (!text) return [];
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? value.filter((name): name is string => typeof name === 'string') : [];
  } catch {
    return [];
  }
}

function cannotProtect(name: string, folder: string, why: string): SandboxError {
  return new SandboxError(
    'permission-denied',
    `The sandbox cannot get read-write access to ${folder}: ${name} there cannot be protected (${why}).`,
    `Replace ${name} with a real folder or file, open the sandbox with read-only access, or lift the protection for this folder (setting agentSandbox.configWritesAllowedIn).`,
  );
}
