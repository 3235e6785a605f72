/**
 * Reads one file for `agent-sandbox validate`. Only a regular file is read: it is opened with
 * O_NONBLOCK and checked with fstat first, so that a FIFO, socket or device named on the command
 * line is skipped with a message instead of blocking the command for good.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { formatSize, MiB } from '../core/spec/units';

/** Far beyond any real .prompt file; a bigger one is skipped rather than read into memory. */
const MAX_PROMPT_BYTES = 16 * MiB;

export type PromptFileRead = { text: string } | { skipped: string };

export async function readPromptFile(path: string): Promise<PromptFileRead> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stats = await handle.stat();
    if (stats.isDirectory()) return { skipped: 'it is a directory' };
    if (!stats.isFile())
      return {
        skipped: `it is not a regular file (${stats.isFIFO() ? 'a FIFO' : stats.isSocket() ? 'a socket' : 'a device'})`,
      };
    if (stats.size > MAX_PROMPT_BYTES)
      return { skipped: `it is ${formatSize(stats.size)}, over ${formatSize(MAX_PROMPT_BYTES)}` };
    return { text: await handle.readFile('utf8') };
  } finally {
    await handle.close();
  }
}
