/**
 * The host key check of an ssh:// engine, as OpenSSH makes it: the key the server presents must be
 * listed for that host in ~/.ssh/known_hosts or /etc/ssh/ssh_known_hosts (plain, `[host]:port`,
 * hashed `|1|salt|hash` and wildcard patterns; `@revoked` keys refused; `@cert-authority` lines are
 * not used). ssh2, which dockerode uses for ssh://, accepts any host key unless given a verifier: a
 * machine in the middle could otherwise pose as the engine and run every sandbox.
 */
import { createHmac } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export function knownHostsFiles(env: NodeJS.ProcessEnv = process.env): string[] {
  return [join(env.HOME || homedir(), '.ssh', 'known_hosts'), '/etc/ssh/ssh_known_hosts'];
}

/** The name a known_hosts line uses for a host: `host` on port 22, `[host]:port` otherwise. */
function hostKeyName(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}

function patternMatches(pattern: string, name: string): boolean {
  if (pattern.startsWith('|1|')) {
    const [, , salt, hash] = pattern.split('|');
    if (!salt || !hash) return false;
    return createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest('base64') === hash;
  }
  const regex = new RegExp(
    `^${pattern
      .toLowerCase()
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  );
  return regex.test(name.toLowerCase());
}

/** Whether a line's host field names this host (a negated pattern that matches rules it out). */
function hostsMatch(field: string, name: string): boolean {
  let matched = false;
  for (const pattern of field.split(',')) {
    if (pattern.startsWith('!')) {
      if (patternMatches(pattern.slice(1), name)) return false;
    } else if (patternMatches(pattern, name)) matched = true;
  }
  return matched;
}

export interface KnownKeys {
  /** Base64 key blobs listed for the host. */
  keys: Set<string>;
  revoked: Set<string>;
}

export function knownKeys(host: string, port: number, files: readonly string[]): KnownKeys {
  const name = hostKeyName(host, port);
  const found: KnownKeys = { keys: new Set(), revoked: new Set() };
  for (const file of files) {
    if (!existsSync(file)) continue;
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const raw of text.split('\n')) {
      const line = raw.trim();
      if (!line || line.startsWith('#')) continue;
      const fields = line.split(/\s+/);
      const marker = fields[0]!.startsWith('@') ? fields.shift() : undefined;
      const [hosts, , key] = fields;
      if (!hosts || !key || !hostsMatch(hosts, name)) continue;
      if (marker === '@revoked') found.revoked.add(key);
      else if (marker === undefined) found.keys.add(key);
    }
  }
  return found;
}

/** Why the host's key is refused, or undefined when it is known and not revoked. */
export function hostKeyProblem(host: string, port: number, key: Buffer, files: readonly string[]): string | undefined {
  const known = knownKeys(host, port, files);
  const blob = key.toString('base64');
  if (known.revoked.has(blob)) return `the host key of ${hostKeyName(host, port)} is marked @revoked`;
  if (known.keys.has(blob)) return undefined;
  return known.keys.size
    ? `the host key of ${hostKeyName(host, port)} is not the one ${files[0]} lists for it (it may have been reinstalled, or another machine answers)`
    : `the host key of ${hostKeyName(host, port)} is not in ${files.join(' or ')}`;
}

/**
 * An ssh2 hostVerifier for the engine's host: true for a known key; otherwise false, with the
 * reason kept for the error (`problem()`).
 */
export function engineHostVerifier(host: string, port: number, env: NodeJS.ProcessEnv = process.env) {
  let problem: string | undefined;
  return {
    verify: (key: Buffer): boolean => {
      problem = hostKeyProblem(host, port, key, knownHostsFiles(env));
      return problem === undefined;
    },
    problem: () => problem,
  };
}
