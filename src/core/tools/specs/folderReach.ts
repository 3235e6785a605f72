/** The reach of the file tools: the mounted folder, and for writes the network that code in the sandbox can use. */
import type { ReachKind, TargetView } from '../reach';

/** Reading /workspace reads the user's folder when it is mounted (ro or rw). */
export function readsFolder(target: TargetView): Set<ReachKind> {
  return new Set(target.workspaceAccess === 'none' ? [] : ['folder-read']);
}

/**
 * Writing or deleting files changes the user's folder when it is mounted read-write; in a sandbox
 * with the network it also changes what code there may run with that network (a server that
 * reloads on change, a loop started by an earlier command), so the network (or its allowlist) counts too.
 */
export function writesFolder(target: TargetView): Set<ReachKind> {
  const reach = new Set<ReachKind>(target.workspaceAccess === 'rw' ? ['folder-read', 'folder-write'] : []);
  if (target.network) reach.add('network');
  else if (target.networkAllow.length) reach.add('allowlist');
  return reach;
}
