/**
 * Places files in a started container as the sandbox user: one exec with one tar stream. The
 * archive API cannot do it: it does not see the tmpfs places (/workspace, $HOME, /tmp; see
 * writablePlaces.ts), and it writes as root, past the permissions and the mounts' own view.
 */
import type Docker from 'dockerode';
import { diskLimitError, isDiskFull } from '../../core/limits/diskLimit';
import type { ResolvedFile } from '../../core/engine/engine';
import { abortError } from '../../core/errors';
import type { Limits } from '../../core/spec/spec';
import { execInContainer } from './exec';
import { stagingError } from './oneShot';
import { tarBuffer, TarLayout, type TarEntry } from './tar';
import type { FolderCopy, PlannedEntry } from '../../core/files/folderCopy';
import { WORKSPACE_DIR } from '../../core/files/paths';

const PLACE_TIMEOUT_MS = 60_000;

export interface Placement {
  docker: Docker;
  container: Docker.Container;
  /** "uid:gid" of the sandbox user. */
  user: string;
  files: readonly ResolvedFile[];
  limits: Limits;
  signal?: AbortSignal;
}

export async function placeFiles(placement: Placement): Promise<void> {
  const { files, signal } = placement;
  if (files.length === 0) return;
  // Owners in the archive do not matter: --no-same-owner makes the sandbox user own what it unpacks; -p keeps the modes.
  const archive = tarBuffer(
    files.map((file) => ({
      name: file.path.slice(1),
      type: 'file',
      data: file.data,
      mode: file.mode ?? 0o644,
      uid: 0,
      gid: 0,
    })),
  );
  const outcome = await execInContainer({
    docker: placement.docker,
    container: placement.container,
    argv: ['tar', '-x', '-p', '--no-same-owner', '-f', '-', '-C', '/'],
    user: placement.user,
    cwd: '/',
    env: [],
    stdin: archive,
    stdoutCap: 64 * 1024,
    stderrCap: 64 * 1024,
    timeoutMs: PLACE_TIMEOUT_MS,
    signal,
  });
  if (outcome.cancelled && signal) throw abortError(signal);
  if (outcome.exitCode === 0) return;
  if (isDiskFull(outcome.stderr.text('stderr')))
    throw diskLimitError(files.length === 1 ? files[0]!.path : `${files.length} files`, 'place', placement.limits);
  throw stagingError({ ...outcome, stagingFailed: true });
}

export interface CopyPlacement {
  docker: Docker;
  container: Docker.Container;
  user: string;
  copy: FolderCopy;
  /** The archive laid out while the copy was read (copyLayout), when there is one. */
  layout?: TarLayout;
  limits: Limits;
  signal?: AbortSignal;
}

/** A copy's archive laid out before its files are read, so that each file is read straight into it (readFolderCopy). */
export function copyLayout(entries: readonly PlannedEntry[]): TarLayout {
  return new TarLayout(
    entries.map((entry) => ({
      name: entry.path,
      type: entry.kind,
      size: entry.kind === 'file' ? entry.size : 0,
      linkname: entry.linkTarget,
    })),
  );
}

/** Places a folder's copy in the private /workspace as the sandbox user: one exec, one tar stream, links kept as links. */
export async function placeCopy(placement: CopyPlacement): Promise<void> {
  const { copy, signal } = placement;
  if (copy.files.length === 0) return;
  const entries = copy.files.map((file): TarEntry =>
    file.kind === 'symlink'
      ? { name: file.path, type: 'symlink', linkname: file.linkTarget, mode: 0o777, uid: 0, gid: 0 }
      : { name: file.path, type: 'file', data: file.data, mode: file.mode, uid: 0, gid: 0 },
  );
  const outcome = await execInContainer({
    docker: placement.docker,
    container: placement.container,
    argv: ['tar', '-x', '-p', '--no-same-owner', '-f', '-', '-C', WORKSPACE_DIR],
    user: placement.user,
    cwd: '/',
    env: [],
    stdin: placement.layout?.finish(entries) ?? tarBuffer(entries),
    stdoutCap: 64 * 1024,
    stderrCap: 64 * 1024,
    timeoutMs: PLACE_TIMEOUT_MS,
    signal,
  });
  if (outcome.cancelled && signal) throw abortError(signal);
  if (outcome.exitCode === 0) return;
  if (isDiskFull(outcome.stderr.text('stderr')))
    throw diskLimitError(`${copy.files.length} files`, 'place', placement.limits);
  throw stagingError({ ...outcome, stagingFailed: true });
}
