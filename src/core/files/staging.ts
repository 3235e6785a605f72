/**
 * Moving files between the file store (or the workspace) and a sandbox without passing them through
 * the model: staging writes bytes into the sandbox, publishing reads a sandbox file into the store.
 */
import { createHash } from 'node:crypto';
import { posix } from 'node:path';
import type { Sandbox } from '../engine/engine';
import { SandboxError } from '../errors';
import type { FileStore, StoredFile } from './fileStore';
import { resolveWorkspacePath } from './paths';
import { formatSize } from '../spec/units';

export interface StagedFile {
  /** Where the bytes came from, in words: a store key or a workspace path. */
  source: string;
  /** Absolute path inside the sandbox. */
  path: string;
  size: number;
  sha256: string;
}

/** Writes the bytes into the sandbox at `path` (relative to /workspace); the sandbox's file size limit applies. */
export async function stageFile(
  sandbox: Sandbox,
  data: Uint8Array,
  path: string,
  source: string,
  signal?: AbortSignal,
): Promise<StagedFile> {
  const written = await sandbox.writeFiles(
    [{ path, content: Buffer.from(data).toString('base64'), encoding: 'base64' }],
    signal,
  );
  return {
    source,
    path: written.files[0]?.path ?? resolveWorkspacePath(path),
    size: data.length,
    sha256: sha256Of(data),
  };
}

/** Reads a sandbox file whole and stores it; a file over the store's or the sandbox's size limit is refused, never cut. */
export async function publishFile(
  sandbox: Sandbox,
  store: FileStore,
  path: string,
  options: { name?: string; signal?: AbortSignal } = {},
): Promise<{ file: StoredFile; data: Uint8Array; path: string }> {
  const sandboxLimit = sandbox.info.spec.limits.maxFileSizeBytes;
  const limit = Math.min(store.maxFileBytes, sandboxLimit);
  const read = await sandbox.readFile(path, { encoding: 'base64', maxBytes: limit }, options.signal);
  const data = Buffer.from(read.content, 'base64');
  if (read.truncated) {
    const which =
      limit === sandboxLimit
        ? `the sandbox's file size limit (limits.maxFileSizeBytes) is ${formatSize(limit)}`
        : `the file store takes files up to ${formatSize(limit)}`;
    throw new SandboxError(
      'file-too-large',
      `${read.path} is ${formatSize(read.size)}; ${which}, so it was not published.`,
      'Compress it (gzip) or split it (split -b) in the sandbox with sandbox_exec and publish the parts.',
    );
  }
  if (data.length !== read.size)
    throw new SandboxError(
      'engine-error',
      `${read.path} changed while it was read (${formatSize(read.size)} reported, ${formatSize(data.length)} read).`,
      'Wait until whatever writes it has finished, then publish it again.',
    );
  const file = await store.put(data, { name: options.name ?? posix.basename(read.path) });
  return { file, data, path: read.path };
}

export function sha256Of(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}
