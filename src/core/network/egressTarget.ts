/**
 * Where one allowlisted connection may go, decided the same way on every engine (the Docker proxy,
 * the virtual engine's fetch): the name against the allowlist, `localhost:PORT` entries to this
 * machine, the user's own host mappings as given, every other name resolved here and refused when
 * any of its addresses is internal (so a name rebound to 127.0.0.1 or a metadata address is
 * refused); the connection then goes to the one address checked.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { decide, type AllowEntry } from './allowlist';
import { isInternalAddress } from './addressPolicy';
import type { NetworkDecision } from './egressProxy';

export type EgressTarget = { address: string; rule: string } | { refused: string };

export interface EgressTargetOptions {
  /** Names the user mapped to addresses (exempt from the internal-address refusal: the user chose them). */
  hosts?: Readonly<Record<string, string>>;
  /** Where `localhost:PORT` entries lead: this machine. */
  localAddress: string;
  /** Every address of a name (the system resolver when not given). */
  lookup?(host: string): Promise<string[]>;
}

export const systemLookup = async (host: string): Promise<string[]> =>
  (await dnsLookup(host, { all: true, verbatim: true })).map((entry) => entry.address);

/** A name as the allowlist and the user's mappings compare it: lower case, without a final dot. */
export function normalName(host: string): string {
  return host.toLowerCase().replace(/\.$/, '');
}

/** Decides, then resolves and checks: the one address the connection will use, or why not. */
export async function egressTarget(
  entries: readonly AllowEntry[],
  host: string,
  port: number,
  options: EgressTargetOptions,
): Promise<EgressTarget> {
  const decision = decide(entries, host, port);
  if (!decision.allowed) return { refused: decision.reason };
  if (decision.local) return { address: options.localAddress, rule: decision.rule };
  const name = normalName(host);
  const mapped = options.hosts && Object.hasOwn(options.hosts, name) ? options.hosts[name] : undefined;
  if (mapped) return { address: mapped, rule: decision.rule };
  let addresses: string[];
  try {
    addresses = await (options.lookup ?? systemLookup)(name);
  } catch {
    return { refused: `${host} could not be resolved` };
  }
  if (addresses.length === 0) return { refused: `${host} could not be resolved` };
  const internal = addresses.find(isInternalAddress);
  if (internal)
    return { refused: `${host} resolves to ${internal}, an internal address that the allowlist never reaches` };
  return { address: addresses[0]!, rule: decision.rule };
}

/** The record of one decision, when its connection ended (or at once, for a refusal). */
export function decisionOf(host: string, port: number, target: EgressTarget, sent = 0, received = 0): NetworkDecision {
  return {
    host,
    port,
    allowed: 'address' in target,
    ...('address' in target ? { rule: target.rule, address: target.address } : { reason: target.refused }),
    bytesSent: sent,
    bytesReceived: received,
    at: new Date().toISOString(),
  };
}
