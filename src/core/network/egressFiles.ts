/**
 * The folder an allowlist sandbox's host-side proxy process works in, as both sides know it: its
 * files, its configuration, the pid file. Kept apart from the process itself (egressHost.ts) so that
 * what starts the process (egressProcesses.ts, in the extension and the CLI) does not load the proxy.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { boundSecretSchema } from '../secrets/bound';
import { allowlistTextSchema, networkHostsSchema } from './allowlist';

/** The files of a sandbox's folder, relative to it (the process works in the folder, so socket paths stay short). */
export const EGRESS_FILES = {
  config: 'config.json',
  /** Names allowed while packages install, with when that ends (see egressProcesses.ts allowDuringInstall). */
  install: 'install.json',
  /** The process's pid, written once it holds the folder (exclusive). */
  lock: 'pid',
  /** The same pid, written once both sockets listen. */
  ready: 'ready',
  /** The folder mounted into the relay: only the two sockets. */
  sockets: 'socket',
  proxySocket: 'socket/proxy.sock',
  lifelineSocket: 'socket/life.sock',
  log: 'proxy.log',
  /** The session CA's certificate, when the sandbox has bound secrets (its key stays in the process). */
  ca: 'ca.pem',
} as const;

/** The values of the bound secrets, as JSON {NAME: value}, in the proxy process's environment only (never on disk). */
export const BOUND_VALUES_ENV = 'AGENT_SANDBOX_BOUND_VALUES';
/** A file of extra authorities (PEM) trusted for the real servers behind bound domains: for tests with their own CA. */
export const EXTRA_CA_ENV = 'AGENT_SANDBOX_EGRESS_EXTRA_CA';

export const egressConfigSchema = z.object({
  allow: allowlistTextSchema.min(1),
  hosts: networkHostsSchema.default({}),
  /** Where `localhost:PORT` entries lead. */
  localAddress: z.string().default('localhost'),
  /** Bound secrets without their values (see BOUND_VALUES_ENV). */
  bound: z.array(boundSecretSchema).max(50).default([]),
});
export type EgressConfig = z.input<typeof egressConfigSchema>;

/** The living process a pid file names, if any. */
export function holderOf(file: string): number | undefined {
  let pid: number;
  try {
    pid = Number(readFileSync(file, 'utf8').trim());
  } catch {
    return undefined;
  }
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM' ? pid : undefined;
  }
}
