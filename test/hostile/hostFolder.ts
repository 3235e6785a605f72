/** Host-side views of a workspace folder that a hostile test mounts read-write: who may write it, and what changed. */
import { createHash } from 'node:crypto';
import { chownSync, chmodSync, lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { SANDBOX_USER } from '../../src/engines/docker/containerConfig';

/** A fresh folder the sandbox user can write: the host user's own, or (when the suite runs as root) given to the sandbox's uid. */
export function writableFolder(prefix: string): string {
  const folder = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(folder, 0o755);
  giveToSandbox(folder);
  return folder;
}

/** Hands a path (and everything under it) to the uid the sandbox runs as; nothing to do when the suite is not root. */
export function giveToSandbox(path: string): void {
  if (process.getuid?.() !== 0) return;
  const walk = (at: string) => {
    const stat = lstatSync(at);
    if (!stat.isSymbolicLink()) chownSync(at, SANDBOX_USER.uid, SANDBOX_USER.gid);
    if (stat.isDirectory()) for (const name of readdirSync(at)) walk(join(at, name));
  };
  walk(path);
}

/** Every path under `dir` (relative, not following symlinks) whose mode carries S_ISUID or S_ISGID, with its mode. */
export function setuidPaths(dir: string): string[] {
  const found: string[] = [];
  const walk = (at: string) => {
    for (const name of readdirSync(at)) {
      const full = join(at, name);
      const stat = lstatSync(full);
      if (stat.mode & 0o6000) found.push(`${relative(dir, full)} (${(stat.mode & 0o7777).toString(8)})`);
      if (stat.isDirectory()) walk(full);
    }
  };
  walk(dir);
  return found;
}

/** Type, mode and bytes of `name` under `dir` and everything below it; "absent" when it does not exist. */
export function treeState(dir: string, name: string): string {
  const hash = createHash('sha256');
  const walk = (full: string) => {
    let stat;
    try {
      stat = lstatSync(full);
    } catch {
      hash.update(`${relative(dir, full)}\0absent\n`);
      return;
    }
    hash.update(`${relative(dir, full)}\0${stat.mode.toString(8)}\0${stat.ino}\0`);
    if (stat.isSymbolicLink()) hash.update(readlinkSync(full));
    else if (stat.isDirectory()) for (const entry of readdirSync(full).sort()) walk(join(full, entry));
    else hash.update(readFileSync(full));
    hash.update('\n');
  };
  walk(join(dir, name));
  return hash.digest('hex');
}
