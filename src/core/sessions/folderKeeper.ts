/**
 * The folder keeper: a small detached process per read-write session that watches the session's
 * workspace folder for as long as the session runs, whoever opened it. Without it, a CLI session is
 * watched only while a command runs, and a window's sessions only while the window lives, so a
 * background process in the sandbox could fill the disk in between. One keeper per session, held by
 * a lock file with its pid in the host-wide state folder; it ends when the session stops.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultStateDir } from './leases';
import { processAlive } from './processAlive';

const ID = /^[0-9a-f]{12,64}$/;

export function keepersDir(stateDir: string = defaultStateDir()): string {
  return join(stateDir, 'keepers');
}

function holder(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 && processAlive(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a living keeper holds the session. */
export function isKept(sessionId: string, dir: string = keepersDir()): boolean {
  return ID.test(sessionId) && holder(join(dir, sessionId)) !== undefined;
}

/**
 * Takes the session for this process: true when it holds it now, false when a living keeper does.
 * Returns the function that lets it go.
 */
export function claimKeeper(sessionId: string, dir: string = keepersDir()): (() => void) | undefined {
  if (!ID.test(sessionId)) return undefined;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, sessionId);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx', mode: 0o600 });
      return () => {
        if (holder(file) === process.pid) rmSync(file, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (holder(file) !== undefined) return undefined;
      // A keeper that died without letting go: its file goes, by rename, so two claimants cannot both win.
      const stale = `${file}.stale.${process.pid}`;
      try {
        renameSync(file, stale);
        rmSync(stale, { force: true });
      } catch {
        // Another claimant moved it first; the next attempt tells who won.
      }
    }
  }
  return undefined;
}

export interface KeeperCommand {
  /** The Node.js binary (in VS Code, the extension host's, run as Node with ELECTRON_RUN_AS_NODE). */
  nodePath: string;
  /** The CLI's script (dist/cli.js). */
  cliPath: string;
  /** Extra arguments, such as the engine address. */
  args?: readonly string[];
  env?: NodeJS.ProcessEnv;
  dir?: string;
}

/** Starts a keeper for a session unless a living one holds it already. */
export function folderKeeperLauncher(command: KeeperCommand): { keep(sessionId: string): void } {
  return {
    keep(sessionId: string): void {
      if (!ID.test(sessionId) || isKept(sessionId, command.dir)) return;
      const child = spawn(command.nodePath, [command.cliPath, 'keep-folder', sessionId, ...(command.args ?? [])], {
        detached: true,
        stdio: 'ignore',
        env: { ...(command.env ?? process.env), ELECTRON_RUN_AS_NODE: '1' },
      });
      child.on('error', () => undefined);
      child.unref();
    },
  };
}
