/**
 * The activity of a workspace folder on disk, for audit: one JSON line per tool call, from every
 * program that calls the tools for that folder (VS Code, `agent-sandbox tool`, `agent-sandbox mcp`),
 * in the host's state folder. `agent-sandbox log` and the panel's export read it back, beside the
 * network decisions of the folder's sandboxes. Bounded: past a size the file becomes the one older
 * generation kept, and a read takes only the end of each.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, mkdirSync, openSync, readSync, closeSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { ActivityEntry } from './activityLog';
import { defaultStateDir } from './leases';

const ROTATE_AT_BYTES = 2 * 1024 * 1024;
const READ_TAIL_BYTES = 1024 * 1024;

const entrySchema = z.object({
  tool: z.string(),
  summary: z.string(),
  exitCode: z.number().nullable(),
  ok: z.boolean(),
  durationMs: z.number(),
  at: z.string(),
  sandboxId: z.string().optional(),
  folder: z.string(),
  client: z.string().optional(),
});

/** A tool call as kept on disk: the activity entry, the folder, and which program made it. */
export type FiledActivity = z.output<typeof entrySchema>;

export function activityDir(stateDir: string = defaultStateDir()): string {
  return join(stateDir, 'activity');
}

export class ActivityFile {
  private readonly file: string;

  constructor(
    readonly folder: string,
    private readonly client: string,
    readonly dir: string = activityDir(),
    /** Applied to each entry's text before it is written: the secrets' redactor. */
    private readonly redact: (text: string) => string = (text) => text,
  ) {
    this.file = join(dir, `${createHash('sha256').update(folder).digest('hex').slice(0, 16)}.jsonl`);
  }

  /** Appends one call; a folder that cannot be written costs the call nothing. */
  append(entry: ActivityEntry): void {
    try {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      try {
        if (statSync(this.file).size >= ROTATE_AT_BYTES) renameSync(this.file, `${this.file}.1`);
      } catch {
        // No file yet.
      }
      const filed: FiledActivity = {
        ...entry,
        summary: this.redact(entry.summary),
        ...(entry.sandboxId === undefined ? {} : { sandboxId: this.redact(entry.sandboxId) }),
        folder: this.folder,
        client: this.client,
      };
      appendFileSync(this.file, `${JSON.stringify(filed)}\n`, { mode: 0o600 });
    } catch {
      // The audit file is a record, not a gate.
    }
  }

  /** The calls kept for this folder, oldest first (the end of each generation at most). */
  read(): FiledActivity[] {
    return [...tail(`${this.file}.1`), ...tail(this.file)].filter((entry) => entry.folder === this.folder);
  }
}

function tail(file: string): FiledActivity[] {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return [];
  }
  try {
    const size = statSync(file).size;
    const start = Math.max(0, size - READ_TAIL_BYTES);
    const buffer = Buffer.alloc(size - start);
    const read = readSync(fd, buffer, 0, buffer.length, start);
    let text = buffer.subarray(0, read).toString('utf8');
    if (start > 0) text = text.slice(text.indexOf('\n') + 1);
    return text.split('\n').flatMap((line) => {
      if (!line) return [];
      try {
        const parsed = entrySchema.safeParse(JSON.parse(line));
        return parsed.success ? [parsed.data] : [];
      } catch {
        return [];
      }
    });
  } finally {
    closeSync(fd);
  }
}
