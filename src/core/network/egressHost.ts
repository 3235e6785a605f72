/**
 * The host side of one allowlist sandbox, run as a small detached process (`agent-sandbox
 * egress-proxy DIR`, started by egressProcesses.ts) so that it outlives whoever opened the sandbox.
 * It serves the egress proxy on a unix socket that the sandbox's relay reaches (the only way out of
 * the sandbox), writes every decision to the sandbox's log, and ends when the relay is gone: the
 * relay holds a second socket, its lifeline, for as long as it lives, and it lives exactly as long
 * as the sandbox (the engine ties them).
 */
import { chmodSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { allowEntries, allowlistTextSchema, type AllowEntry } from './allowlist';
import { BOUND_VALUES_ENV, EGRESS_FILES, EXTRA_CA_ENV, egressConfigSchema, holderOf } from './egressFiles';
export {
  BOUND_VALUES_ENV,
  EGRESS_FILES,
  EXTRA_CA_ENV,
  egressConfigSchema,
  holderOf,
  type EgressConfig,
} from './egressFiles';
import { DecisionLog } from './decisionLog';
import { EgressProxy } from './egressProxy';
import type { BoundSecrets } from './interception';
import type { SecretWithValue } from './secretInjection';
import { UNDER_WAY_FILE, writeUnderWay } from './underWay';

const installSchema = z.object({ allow: allowlistTextSchema, until: z.number() });

export interface EgressHostTimings {
  /** How long to wait for the relay's first lifeline. */
  firstLifelineMs?: number;
  /** How long to wait for the relay to come back once its lifeline dropped. */
  lifelineGoneMs?: number;
}

/**
 * Runs the host side in `dir` until the relay is gone or `signal` aborts. A unix socket's path is
 * short (108 bytes), so the process works in the folder and passes '.'.
 */
export async function runEgressHost(dir: string, signal: AbortSignal, timings: EgressHostTimings = {}): Promise<void> {
  const at = (name: string) => join(dir, name);
  const config = egressConfigSchema.parse(JSON.parse(readFileSync(at(EGRESS_FILES.config), 'utf8')));
  const release = claim(at(EGRESS_FILES.lock));
  if (!release) return; // another living process serves this sandbox
  const base = allowEntries(config.allow);
  const log = new DecisionLog(dir);
  const install = installEntries(at(EGRESS_FILES.install));
  const bound = await boundSecrets(config.bound);
  rmSync(at(EGRESS_FILES.ca), { force: true });
  rmSync(at(UNDER_WAY_FILE), { force: true });
  if (bound) writeFileSync(at(EGRESS_FILES.ca), bound.ca.certPem, { mode: 0o600 });
  const proxy = new EgressProxy({
    bound,
    allowlist: () => [...base, ...install()],
    hosts: config.hosts,
    localAddress: config.localAddress,
    onDecision: (decision) => {
      try {
        log.append(decision);
      } catch {
        // The state folder is full or gone: the connection itself is not the log's to stop.
      }
    },
    // After each decision is logged: a tool call waits for its own connections (decisionNotes.ts).
    onUnderWay: (startedAt) => {
      try {
        writeUnderWay(dir, startedAt);
      } catch {
        // As for the log: a call then shows fewer of its decisions, never a connection stopped.
      }
    },
  });
  const sockets = [EGRESS_FILES.proxySocket, EGRESS_FILES.lifelineSocket];
  const lifelines = new Set<Socket>();
  let lastChange = Date.now();
  let everLinked = false;
  const lifeline = createServer((socket) => {
    lifelines.add(socket);
    everLinked = true;
    lastChange = Date.now();
    socket.on('error', () => undefined);
    socket.resume();
    socket.once('close', () => {
      lifelines.delete(socket);
      lastChange = Date.now();
    });
  });
  try {
    mkdirSync(at(EGRESS_FILES.sockets), { recursive: true, mode: 0o711 });
    chmodSync(at(EGRESS_FILES.sockets), 0o711);
    for (const socket of sockets) rmSync(at(socket), { force: true });
    await proxy.listen({ path: at(EGRESS_FILES.proxySocket) });
    await new Promise<void>((resolve, reject) => {
      lifeline.once('error', reject);
      lifeline.listen(at(EGRESS_FILES.lifelineSocket), () => resolve());
    });
    // The relay runs as another user than this one; the folders above keep everyone else out.
    for (const socket of sockets) chmodSync(at(socket), 0o666);
    writeFileSync(at(EGRESS_FILES.ready), String(process.pid), { mode: 0o600 });
    const firstMs = timings.firstLifelineMs ?? 120_000;
    const goneMs = timings.lifelineGoneMs ?? 5_000;
    while (!signal.aborted) {
      if (lifelines.size === 0 && Date.now() - lastChange > (everLinked ? goneMs : firstMs)) break;
      await sleep(500, undefined, { signal }).catch(() => undefined);
    }
  } finally {
    rmSync(at(EGRESS_FILES.ready), { force: true });
    rmSync(at(UNDER_WAY_FILE), { force: true });
    for (const socket of lifelines) socket.destroy();
    lifeline.close();
    await proxy.close().catch(() => undefined);
    for (const socket of sockets) rmSync(at(socket), { force: true });
    release();
  }
}

/**
 * The bound secrets with their values (a secret without a value is only noted: its placeholder is
 * never replaced) and a new CA for them; undefined when the sandbox has none.
 */
async function boundSecrets(secrets: z.output<typeof egressConfigSchema>['bound']): Promise<BoundSecrets | undefined> {
  if (!secrets.length) return undefined;
  let values: Record<string, unknown> = {};
  try {
    values = JSON.parse(process.env[BOUND_VALUES_ENV] ?? '{}') as Record<string, unknown>;
  } catch {
    // None given: placeholders are noted, never replaced.
  }
  delete process.env[BOUND_VALUES_ENV];
  const withValues: SecretWithValue[] = secrets.map((secret) => {
    const value = values[secret.name];
    return typeof value === 'string' ? { secret, value } : { secret };
  });
  const extraFile = process.env[EXTRA_CA_ENV];
  const extraCa = extraFile ? [readFileSync(extraFile, 'utf8')] : [];
  // node-forge loads only in a proxy process that intercepts: the extension and the CLI never need it.
  const { SessionCa } = await import('./sessionCa');
  return { secrets: withValues, ca: new SessionCa(), extraCa };
}

/** Takes the folder for this process: undefined when a living process holds it already. */
function claim(lock: string): (() => void) | undefined {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx', mode: 0o600 });
      return () => {
        if (holderOf(lock) === process.pid) rmSync(lock, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (holderOf(lock) !== undefined) return undefined;
      rmSync(lock, { force: true }); // its process died without letting go
    }
  }
  return undefined;
}

/** The names allowed for a package install under way, read again only when the file changes. */
function installEntries(file: string): () => AllowEntry[] {
  let seen = '';
  let entries: AllowEntry[] = [];
  let until = 0;
  return () => {
    let stamp: string;
    try {
      const stat = statSync(file);
      stamp = `${stat.mtimeMs}:${stat.size}`;
    } catch {
      return [];
    }
    if (stamp !== seen) {
      seen = stamp;
      try {
        const parsed = installSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
        entries = allowEntries(parsed.allow).map((entry) => ({ ...entry, text: `${entry.text} (package install)` }));
        until = parsed.until;
      } catch {
        entries = [];
      }
    }
    return Date.now() < until ? entries : [];
  };
}
