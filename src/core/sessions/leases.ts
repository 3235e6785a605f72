/**
 * Signs of life of the VS Code windows that own sessions, one small file per workspace folder in a
 * host-wide state folder, so that any window or the CLI can tell a reloading window (back within the
 * grace period) from one that is gone (its sessions are orphans).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';

const leaseSchema = z.object({
  folder: z.string(),
  pid: z.number(),
  /** Last sign of life, ms since the epoch. */
  seen: z.number(),
  /** The window closed (or reloaded) at `seen`. */
  released: z.boolean().default(false),
  /** The user asked to keep the sessions when VS Code closes. */
  keep: z.boolean().default(false),
});
export type Lease = z.output<typeof leaseSchema>;

export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.AGENT_SANDBOX_STATE_DIR) return env.AGENT_SANDBOX_STATE_DIR;
  return join(env.XDG_STATE_HOME || join(homedir(), '.local', 'state'), 'agent-sandbox');
}

export class WorkspaceLeases {
  constructor(readonly dir: string = join(defaultStateDir(), 'leases')) {}

  renew(folder: string, keep = false): void {
    this.write({ folder, pid: process.pid, seen: Date.now(), released: false, keep });
  }

  release(folder: string, keep: boolean): void {
    this.write({ folder, pid: process.pid, seen: Date.now(), released: true, keep });
  }

  read(folder: string): Lease | undefined {
    try {
      return leaseSchema.parse(JSON.parse(readFileSync(this.file(folder), 'utf8')));
    } catch {
      return undefined;
    }
  }

  private write(lease: Lease): void {
    mkdirSync(this.dir, { recursive: true });
    const target = this.file(lease.folder);
    const temp = `${target}.${process.pid}.tmp`;
    writeFileSync(temp, JSON.stringify(lease));
    renameSync(temp, target);
  }

  private file(folder: string): string {
    return join(this.dir, `${createHash('sha256').update(folder).digest('hex').slice(0, 24)}.json`);
  }
}
