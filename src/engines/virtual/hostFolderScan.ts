/**
 * Every path under the host folder, for just-bash's getAllPaths (which is synchronous): walked on
 * descriptors like core/files/hostFiles, never following a link, and cut at a fixed number of entries so
 * that a huge folder cannot stall the worker.
 */
import { closeSync, openSync, readdirSync } from 'node:fs';
import { DIRECTORY_FLAGS } from '../../core/files/hostFiles/hostFolder';

const MOST_PATHS = 50_000;

export function scanHostFolder(root: string): string[] {
  const paths: string[] = [];
  const visit = (fd: number, prefix: string) => {
    let entries;
    try {
      entries = readdirSync(`/proc/self/fd/${fd}`, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (paths.length >= MOST_PATHS) return;
      const path = `${prefix}/${entry.name}`;
      paths.push(path);
      if (!entry.isDirectory()) continue;
      let child: number;
      try {
        child = openSync(`/proc/self/fd/${fd}/${entry.name}`, DIRECTORY_FLAGS);
      } catch {
        continue;
      }
      try {
        visit(child, path);
      } finally {
        closeSync(child);
      }
    }
  };
  let fd: number;
  try {
    fd = openSync(root, DIRECTORY_FLAGS);
  } catch {
    return paths;
  }
  try {
    visit(fd, '');
  } finally {
    closeSync(fd);
  }
  return paths;
}
