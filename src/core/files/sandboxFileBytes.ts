/**
 * The whole of a sandbox file, however large: read in parts of at most the sandbox's file-size
 * limit (one read returns no more), up to `maxBytes` in all. A copy session's changes are applied
 * whole, so a file over the limit of one read is read in several.
 */
import type { Sandbox } from '../engine/engine';
import { SandboxError } from '../errors';

export async function readWholeSandboxFile(
  sandbox: Sandbox,
  path: string,
  options: { maxBytes: number; signal?: AbortSignal },
): Promise<Buffer> {
  const part = sandbox.info.spec.limits.maxFileSizeBytes;
  const parts: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const read = await sandbox.readFile(path, { encoding: 'base64', maxBytes: part, offset }, options.signal);
    const data = Buffer.from(read.content, 'base64');
    parts.push(data);
    offset += data.length;
    if (read.size > options.maxBytes)
      throw new SandboxError(
        'file-too-large',
        `${path} is ${read.size} bytes, more than the ${options.maxBytes} bytes that may be taken from the sandbox at once.`,
        'Make it smaller in the sandbox, or copy it out another way.',
      );
    if (!read.truncated || data.length === 0 || offset >= read.size) break;
  }
  return Buffer.concat(parts);
}

/** How large a file of a copy session may be, on either side: the disk limit of its private /workspace. */
export function copyFileLimit(sandbox: Sandbox): number {
  return sandbox.info.spec.limits.diskBytes;
}
