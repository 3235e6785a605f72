/**
 * Shell scripts the file tools run inside the sandbox as its own unprivileged user, so the kernel's
 * permissions and the read-only mount apply, and a symlink can never lead a file tool outside
 * /workspace. Exit codes name the failure; `fileErrorFor` turns them into errors.
 */
import { displayName } from '../../core/results/displayName';
import { diskLimitError, isDiskFull } from '../../core/limits/diskLimit';
import { SandboxError } from '../../core/errors';
import type { Limits } from '../../core/spec/spec';
import { SAVED_OUTPUT_DIR } from '../../core/files/paths';

/** Exit codes the scripts use for their own findings, apart from what tar, find or rm may return. */
export const FILE_EXIT = {
  notFound: 102,
  outside: 103,
  isDirectory: 104,
  notRegular: 105,
  unreadable: 106,
  notDirectory: 107,
  isWorkspace: 108,
} as const;

const INSIDE = `case "$r" in /workspace|/workspace/*) ;; *) exit ${FILE_EXIT.outside};; esac`;
/** Reads also reach the output a session saved for the model (never the user's files: it is the sandbox's own /tmp). */
const READABLE = `case "$r" in /workspace|/workspace/*|${SAVED_OUTPUT_DIR}/*) ;; *) exit ${FILE_EXIT.outside};; esac`;

/** Args: the target directories and files. Stdin: a tar whose members are relative to /workspace. */
export const WRITE_SCRIPT = [
  'bad=$(realpath -m -- "$@" | grep -vE "^/workspace(/|$)") || true',
  `[ -z "$bad" ] || exit ${FILE_EXIT.outside}`,
  'exec tar -x -f - -C /workspace --no-same-owner',
].join('\n');

/** Args: path, most bytes, offset. Stdout: the size, a newline, then the content from the offset. */
export const READ_SCRIPT = [
  `r=$(realpath -e -- "$1" 2>/dev/null) || exit ${FILE_EXIT.notFound}`,
  READABLE,
  `[ -d "$r" ] && exit ${FILE_EXIT.isDirectory}`,
  `[ -f "$r" ] || exit ${FILE_EXIT.notRegular}`,
  `[ -r "$r" ] || exit ${FILE_EXIT.unreadable}`,
  'stat -c %s -- "$r" || exit 1',
  // dd in 1 MiB blocks: head's 8 KiB writes took twice as long to cross the engine's stream for 10 MiB.
  'exec dd if="$r" bs=1M skip="$3" count="$2" iflag=skip_bytes,count_bytes status=none',
].join('\n');

/** Args: directory, depth, most entries. Stdout: NUL-terminated "type size mtime path" records. */
export const LIST_SCRIPT = [
  `r=$(realpath -e -- "$1" 2>/dev/null) || exit ${FILE_EXIT.notFound}`,
  INSIDE,
  `[ -d "$r" ] || exit ${FILE_EXIT.notDirectory}`,
  `[ -r "$r" ] || exit ${FILE_EXIT.unreadable}`,
  'find "$r" -mindepth 1 -maxdepth "$2" -printf "%y %s %T@ %p\\0" 2>/dev/null | head -z -n "$3"',
].join('\n');

/** Args: path, "1" to delete directories recursively. */
export const DELETE_SCRIPT = [
  `d=$(realpath -e -- "$(dirname -- "$1")" 2>/dev/null) || exit ${FILE_EXIT.notFound}`,
  'r="$d"',
  INSIDE,
  't="$d/$(basename -- "$1")"',
  `[ "$t" = /workspace ] && exit ${FILE_EXIT.isWorkspace}`,
  `[ -e "$t" ] || [ -L "$t" ] || exit ${FILE_EXIT.notFound}`,
  `if [ -d "$t" ] && [ ! -L "$t" ]; then [ "$2" = 1 ] || exit ${FILE_EXIT.isDirectory}; exec rm -rf -- "$t"; fi`,
  'exec rm -f -- "$t"',
].join('\n');

/** Maps a file script's exit code and stderr to a precise error; `limits` name the disk limit a full place reached. */
export function fileErrorFor(
  rawPath: string,
  exitCode: number | null,
  stderr: string,
  action: string,
  limits?: Pick<Limits, 'diskBytes' | 'memoryBytes' | 'inodes'>,
): SandboxError {
  const path = displayName(rawPath);
  switch (exitCode) {
    case FILE_EXIT.notFound:
      return new SandboxError(
        'file-not-found',
        `${path} does not exist.`,
        'List the directory with sandbox_fs_list to see what is there.',
      );
    case FILE_EXIT.outside:
      return new SandboxError(
        'path-outside-workspace',
        `${path} leads outside /workspace (through a symbolic link).`,
        "File tools only reach /workspace. Use the link's target inside /workspace, or a command with sandbox_exec.",
      );
    case FILE_EXIT.isDirectory:
      return new SandboxError(
        'is-a-directory',
        `${path} is a directory.`,
        action === 'delete'
          ? 'Pass recursive: true to delete a directory and everything in it.'
          : 'List it with sandbox_fs_list, or give a file path.',
      );
    case FILE_EXIT.notRegular:
      return new SandboxError('not-a-file', `${path} is not a regular file.`, 'Read regular files only.');
    case FILE_EXIT.unreadable:
      return new SandboxError(
        'permission-denied',
        `Permission denied reading ${path}.`,
        'The sandbox user cannot read it; change its permissions with sandbox_exec (chmod) if it is yours.',
      );
    case FILE_EXIT.notDirectory:
      return new SandboxError(
        'invalid-input',
        `${path} is not a directory.`,
        'Read it with sandbox_fs_read, or list its parent directory.',
      );
    case FILE_EXIT.isWorkspace:
      return new SandboxError('invalid-input', 'Cannot delete /workspace itself.', 'Delete the files inside it.');
  }
  if (/Read-only file system/i.test(stderr)) {
    return new SandboxError(
      'read-only',
      `Cannot ${action} ${path}: the workspace is mounted read-only.`,
      'Ask the user for read-write workspace access (setting agentSandbox.workspaceAccess, or --workspace rw), or write under /tmp instead.',
    );
  }
  if (/Permission denied|Operation not permitted/i.test(stderr)) {
    return new SandboxError(
      'permission-denied',
      `Cannot ${action} ${path}: permission denied.`,
      'The sandbox user lacks permission there; write somewhere it owns, like a new folder in /workspace.',
    );
  }
  if (isDiskFull(stderr)) {
    if (limits) return diskLimitError(path, action, limits);
    return new SandboxError(
      'disk-limit',
      `Cannot ${action} ${path}: disk limit reached.`,
      'Delete files you no longer need, or write less.',
    );
  }
  const detail = stderr.trim().split('\n').slice(-3).join(' ').slice(0, 500);
  return new SandboxError(
    'engine-error',
    `Could not ${action} ${path} (exit code ${exitCode ?? 'unknown'})${detail ? `: ${detail}` : ''}.`,
    'Check the path and try again; if it persists, reopen the session.',
  );
}

/** The file operations a file helper runs, by number in its requests: their scripts are its arguments, in this order. */
export const FILE_OPS = { write: WRITE_SCRIPT, read: READ_SCRIPT, list: LIST_SCRIPT, delete: DELETE_SCRIPT } as const;
export type FileOp = keyof typeof FILE_OPS;
export const FILE_OP_NUMBER: Record<FileOp, number> = { write: 1, read: 2, list: 3, delete: 4 };

/**
 * A session's long-lived file helper (see fileHelper.ts): runs the scripts above, unchanged, one request
 * at a time, as the sandbox's user, and never code from a request. A request is one line
 * "<nonce> <op> <argument bytes> <input bytes>", then the arguments (single-quoted by the host), then the
 * input, which the script reads as its stdin and which is read to its end whatever the script does (dd
 * reads exactly that many bytes, in 1 MiB blocks). The reply is the script's stdout, "<nonce>o", its
 * stderr, "<nonce>e", its exit code and a newline. Any request it cannot parse ends it; so does the end
 * of its stdin (the host went away).
 */
export const FILE_HELPER_SCRIPT = [
  '# agent-sandbox file helper',
  'set -f',
  'W=$1 R=$2 L=$3 D=$4',
  'exec 5>&1',
  'while IFS=" " read -r n o a d; do',
  '  case "$n" in ""|*[!0-9a-f]*) exit 2;; esac',
  '  case "$a" in ""|*[!0-9]*) exit 2;; esac',
  '  case "$d" in ""|*[!0-9]*) exit 2;; esac',
  '  case "$o" in 1) s=$W;; 2) s=$R;; 3) s=$L;; 4) s=$D;; *) exit 2;; esac',
  '  q=$(head -c "$a") || exit 2',
  '  eval "set -- $q" || exit 2',
  '  e=$( { dd bs=1M count="$d" iflag=count_bytes,fullblock status=none | { sh -c "$s" sh "$@"; c=$?; cat >/dev/null; exit $c; }; } 2>&1 >&5 5>&-)',
  '  c=$?',
  '  printf "%so%s%se%d\\n" "$n" "$e" "$n" "$c"',
  'done',
].join('\n');
