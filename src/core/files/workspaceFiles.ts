/**
 * The user's workspace folder on the host, for staging from it and publishing into it. A sandbox may
 * change the folder at any moment, so every access goes through hostFiles/, which opens each name on
 * the way without following links and checks what it opened, not the path.
 */
import { readHostFile } from './hostFiles/readHostFile';
import { writeHostFile, type WriteHostFileOptions } from './hostFiles/writeHostFile';

/** Reads a regular file of the workspace folder, at most `maxBytes`. */
export function readWorkspaceFile(folder: string, path: string, maxBytes: number): Promise<Uint8Array> {
  return readHostFile(folder, path, maxBytes);
}

/**
 * Writes a file into the workspace folder atomically, creating parent folders. An existing file is
 * replaced only with `overwrite`; protected editor and VCS paths are refused (PROTECTED_PATHS by default).
 */
export function writeWorkspaceFile(
  folder: string,
  path: string,
  data: Uint8Array,
  options: WriteHostFileOptions = {},
): Promise<string> {
  return writeHostFile(folder, path, data, options);
}
