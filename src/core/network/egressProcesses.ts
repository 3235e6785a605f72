/**
 * The host side of the allowlist tier, one detached process per sandbox (egressHost.ts), each in a
 * folder of its own under the host's state folder: `<state>/egress/<sandbox id>/` (0700) holds its
 * config, its pid, its decisions (decisionLog.ts) and `socket/`, the one folder an engine mounts into
 * the sandbox's relay. Started by the engine that opens the sandbox, from the CLI's own script (as
 * the folder keeper is), so it outlives a CLI command or a window; stopped when the sandbox is
 * removed, and ending by itself when its relay is gone. A sandbox's folder stays after it is
 * removed, so its decisions can still be read; folders of sandboxes long gone are pruned.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SandboxError, abortError } from '../errors';
import { defaultStateDir } from '../sessions/leases';
import { readDecisions, type DecisionQuery, type NetworkDecisionPage } from './decisionLog';
import { BOUND_VALUES_ENV, EGRESS_FILES, holderOf, type EgressConfig } from './egressFiles';
import { connectionsSettled } from './underWay';

const ID = /^[0-9a-f]{12,64}$/;
/** How long a proxy process may take to listen. */
const START_TIMEOUT_MS = 20_000;
/** How long a stopped proxy process may take to end. */
const STOP_TIMEOUT_MS = 3_000;
/** Folders of removed sandboxes are kept this long for their decisions, and at most this many. */
const KEEP_MS = 7 * 24 * 3600_000;
const KEEP_FOLDERS = 500;

export interface EgressCommand {
  /** The Node.js binary (in VS Code, the extension host's, run as Node with ELECTRON_RUN_AS_NODE). */
  nodePath: string;
  /**
   * The CLI's script (dist/cli.js), which has the hidden `egress-proxy` command; the proxy's own
   * bundle beside it (dist/egressProxy.js, much smaller) runs instead where it is there.
   */
  cliPath: string;
  env?: NodeJS.ProcessEnv;
  /** The folder of the sandboxes' folders; `<state>/egress` when not given. */
  root?: string;
}

export function egressRoot(stateDir: string = defaultStateDir()): string {
  return join(stateDir, 'egress');
}

export class EgressProxies {
  readonly root: string;

  constructor(private readonly command: EgressCommand) {
    this.root = command.root ?? egressRoot();
  }

  /** A sandbox's folder. */
  folder(sandboxId: string): string {
    if (!ID.test(sandboxId)) throw new Error(`not a sandbox id: ${sandboxId}`);
    return join(this.root, sandboxId);
  }

  /** Whether a proxy process serves the sandbox now. */
  isServing(sandboxId: string): boolean {
    return holderOf(join(this.folder(sandboxId), EGRESS_FILES.ready)) !== undefined;
  }

  /**
   * Starts the sandbox's proxy process unless one serves it already, and resolves once it listens,
   * with the folder of its sockets (to mount into the sandbox's relay).
   */
  async start(
    sandboxId: string,
    config: EgressConfig,
    signal?: AbortSignal,
    boundValues: Readonly<Record<string, string>> = {},
  ): Promise<string> {
    const dir = this.folder(sandboxId);
    const sockets = join(dir, EGRESS_FILES.sockets);
    mkdirSync(this.root, { recursive: true, mode: 0o700 });
    chmodSync(this.root, 0o700);
    this.prune(sandboxId);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
    if (this.isServing(sandboxId)) return sockets;
    const configFile = join(dir, EGRESS_FILES.config);
    writeFileSync(`${configFile}.tmp`, JSON.stringify(config), { mode: 0o600 });
    renameSync(`${configFile}.tmp`, configFile);
    const logFd = openSync(join(dir, EGRESS_FILES.log), 'w', 0o600);
    let exited = false;
    let child: ChildProcess;
    try {
      child = spawn(this.command.nodePath, [proxyScript(this.command.cliPath), 'egress-proxy', dir], {
        cwd: dir,
        detached: true,
        stdio: ['ignore', 'ignore', logFd],
        // Bound secrets' values go to the process alone, in its environment: never written to its folder.
        env: {
          ...(this.command.env ?? process.env),
          ELECTRON_RUN_AS_NODE: '1',
          ...(Object.keys(boundValues).length ? { [BOUND_VALUES_ENV]: JSON.stringify(boundValues) } : {}),
        },
      });
    } finally {
      closeSync(logFd);
    }
    child.once('exit', () => (exited = true));
    child.once('error', () => (exited = true));
    child.unref();
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (!this.isServing(sandboxId)) {
      if (signal?.aborted) {
        child.kill('SIGTERM');
        throw abortError(signal);
      }
      // It may have found another process serving the folder, which then becomes ready.
      const other = exited && holderOf(join(dir, EGRESS_FILES.lock)) === undefined;
      if (other || Date.now() > deadline) {
        child.kill('SIGKILL');
        const said = readTail(join(dir, EGRESS_FILES.log));
        throw new SandboxError(
          'engine-error',
          `The network allowlist's proxy could not start${said ? `: ${said}` : ''}.`,
          'Try again; if it persists, open the sandbox without the allowlist and report the problem.',
        );
      }
      await sleep(25);
    }
    return sockets;
  }

  /**
   * Stops the sandbox's proxy process, so that nothing reaches out on its behalf any more, and
   * removes its sockets; its decisions stay.
   */
  async stop(sandboxId: string): Promise<void> {
    const dir = this.folder(sandboxId);
    const pid = holderOf(join(dir, EGRESS_FILES.lock));
    if (pid !== undefined && isProxyProcess(pid, dir)) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // Gone already.
      }
      // Until it has ended (a child of this process is reaped by Node's loop meanwhile), then by force.
      const deadline = Date.now() + STOP_TIMEOUT_MS;
      while (running(pid) && Date.now() < deadline) await sleep(20);
      if (running(pid)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Gone just now.
        }
        rmSync(join(dir, EGRESS_FILES.lock), { force: true });
      }
    }
    for (const name of [EGRESS_FILES.sockets, EGRESS_FILES.install, EGRESS_FILES.ready])
      rmSync(join(dir, name), { recursive: true, force: true });
  }

  /**
   * Allows more names for a while (the package index while packages install, before any code of the
   * sandbox runs); the function returned takes them away again.
   */
  allowDuringInstall(sandboxId: string, names: readonly string[], forMs: number): () => void {
    const file = join(this.folder(sandboxId), EGRESS_FILES.install);
    writeFileSync(`${file}.tmp`, JSON.stringify({ allow: names, until: Date.now() + forMs }), { mode: 0o600 });
    renameSync(`${file}.tmp`, file);
    return () => rmSync(file, { force: true });
  }

  /** The session CA's certificate of a sandbox with bound secrets, once its proxy process serves it. */
  caCertificate(sandboxId: string): string | undefined {
    try {
      return readFileSync(join(this.folder(sandboxId), EGRESS_FILES.ca), 'utf8');
    } catch {
      return undefined;
    }
  }

  /**
   * The sandbox's newest decisions after `after` (see decisionLog.ts), once the connections begun
   * since `since` (when given) have ended; none for a sandbox without a log.
   */
  async decisions(sandboxId: string, options: DecisionQuery = {}): Promise<NetworkDecisionPage> {
    const dir = this.folder(sandboxId);
    if (options.since !== undefined) await connectionsSettled(dir, options.since, () => this.isServing(sandboxId));
    return readDecisions(dir, options);
  }

  /** Removes the folders of sandboxes gone for a week, and the oldest beyond KEEP_FOLDERS. */
  private prune(keep: string): void {
    let names: string[];
    try {
      names = readdirSync(this.root).filter((name) => ID.test(name) && name !== keep);
    } catch {
      return;
    }
    const idle = names
      .map((name) => ({ name, dir: join(this.root, name) }))
      .filter(({ dir }) => holderOf(join(dir, EGRESS_FILES.lock)) === undefined)
      .map((entry) => ({ ...entry, at: lastWritten(entry.dir) }))
      .sort((a, b) => b.at - a.at);
    const now = Date.now();
    idle.forEach((entry, index) => {
      if (index >= KEEP_FOLDERS || now - entry.at > KEEP_MS) rmSync(entry.dir, { recursive: true, force: true });
    });
  }
}

/** The proxy's own bundle beside the CLI's script, else the CLI's script (both take `egress-proxy DIR`). */
function proxyScript(cliPath: string): string {
  const own = join(dirname(cliPath), 'egressProxy.js');
  return existsSync(own) ? own : cliPath;
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function lastWritten(dir: string): number {
  let latest = 0;
  for (const name of ['.', 'decisions.jsonl']) {
    try {
      latest = Math.max(latest, statSync(join(dir, name)).mtimeMs);
    } catch {
      // Not there.
    }
  }
  return latest;
}

/** Whether a pid is this sandbox's proxy process (not a process that got the pid after it), where Linux can tell. */
function isProxyProcess(pid: number, dir: string): boolean {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return argv.includes('egress-proxy') && argv.includes(dir);
  } catch {
    return process.platform !== 'linux';
  }
}

function readTail(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').slice(-3).join(' ').slice(0, 500);
  } catch {
    return '';
  }
}
