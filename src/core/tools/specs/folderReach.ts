/** The reach of the file tools: they run no code of the model's, so only the mounted folder counts. */
import type { ReachKind, TargetView } from '../reach';

/** Reading /workspace reads the user's folder when it is mounted (ro or rw). */
export function readsFolder(target: TargetView): Set<ReachKind> {
  return new Set(target.workspaceAccess === 'none' ? [] : ['folder-read']);
}

/** Writing or deleting under /workspace changes the user's folder when it is mounted read-write. */
export function writesFolder(target: TargetView): Set<ReachKind> {
  return new Set(target.workspaceAccess === 'rw' ? ['folder-read', 'folder-write'] : []);
}
