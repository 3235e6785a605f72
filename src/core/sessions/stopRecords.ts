/**
 * Why Agent Sandbox itself stopped a session, kept in the host-wide state folder so that any process
 * (the window that opened it, a later CLI command, the folder keeper that stopped it) can say so.
 * One small file per container id; written before the kill, removed with the container.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { defaultStateDir } from './leases';

const recordSchema = z.object({ why: z.string(), at: z.string() });
export type StopRecord = z.output<typeof recordSchema>;

const ID = /^[0-9a-f]{12,64}$/;

export class StopRecords {
  constructor(readonly dir: string = join(defaultStateDir(), 'stops')) {}

  record(id: string, why: string): void {
    if (!ID.test(id)) return;
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const target = join(this.dir, id);
    const temp = `${target}.${process.pid}.tmp`;
    writeFileSync(temp, JSON.stringify({ why, at: new Date().toISOString() } satisfies StopRecord), { mode: 0o600 });
    renameSync(temp, target);
  }

  read(id: string): StopRecord | undefined {
    if (!ID.test(id)) return undefined;
    try {
      return recordSchema.parse(JSON.parse(readFileSync(join(this.dir, id), 'utf8')));
    } catch {
      return undefined;
    }
  }

  forget(id: string): void {
    if (ID.test(id)) rmSync(join(this.dir, id), { force: true });
  }
}
