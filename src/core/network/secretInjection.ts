/**
 * What the egress proxy does with the placeholders of bound secrets (core/secrets/bound.ts) in one
 * HTTP request: in a request it intercepted for a domain the secret is bound to, whose one Host is
 * that domain and whose target is a path, the placeholder in the bound header becomes the value (in
 * basic auth, the password). A placeholder anywhere else (another header, the URL, another domain,
 * a plain HTTP request) is left as it is and noted, so the attempt shows in the decision log ("TOKEN
 * sent toward other.example: not replaced"). Never notes the value.
 *
 * What a server behind a shared address (a CDN, a reverse proxy) routes by must name the bound
 * domain too, or the value would reach another of its sites: so no value for a target in absolute
 * form (`GET https://other.example/`, which wins over Host: RFC 9112 3.2.2), for two Host headers
 * (servers differ on which counts) or an empty one. Nor for TRACE, whose answer repeats the request
 * to the sandbox.
 */
import type { BoundSecret } from '../secrets/bound';
import { normalName } from './egressTarget';

export interface SecretWithValue {
  secret: BoundSecret;
  /** Absent when the proxy process was started again without it (values are never kept): never replaced then. */
  value?: string;
}

export interface InjectionRequest {
  /** The name the connection was for: the CONNECT's host, or a plain request's URL host. */
  host: string;
  /** The request's method (a TRACE is never given a value). */
  method?: string;
  /** Whether the proxy terminated TLS for this name (only for names a secret is bound to). */
  intercepted: boolean;
  url: string;
  /** As Node gives them: name, value, name, value... */
  rawHeaders: readonly string[];
}

export interface Injection {
  rawHeaders: string[];
  /** What happened to placeholders, for the decision log. */
  notes: string[];
}

/** What an HTTP header's value may hold (as Node sends it): a value with a line break would end the header. */
const HEADER_TEXT = /^[\t\x20-\x7e\x80-\xff]*$/;
const unsendable = (name: string, host: string) =>
  `${name} for ${host}: not replaced, its value holds a line break or another character a header cannot carry`;

export function injectSecrets(request: InjectionRequest, secrets: readonly SecretWithValue[]): Injection {
  const rawHeaders = [...request.rawHeaders];
  const notes = new Set<string>();
  const host = normalName(request.host);
  const { named, problem } = addressee(request, host);
  const toward = named || 'an empty Host';
  for (const { secret, value } of secrets) {
    const bound = request.intercepted && secret.domains.includes(host) && named === host && !problem;
    const { placeholder, name } = secret;
    const refused =
      named === host && problem
        ? `${name} toward ${host} ${problem}: not replaced`
        : `${name} sent toward ${toward}: not replaced`;
    if (request.url.includes(placeholder)) notes.add(`${name} in a URL toward ${toward}: not replaced`);
    for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
      const header = rawHeaders[index]!.toLowerCase();
      const text = rawHeaders[index + 1]!;
      const basic = secret.how.kind === 'basic' && header === 'authorization' ? basicParts(text) : undefined;
      if (basic && basic.password === placeholder) {
        if (bound && value === undefined) notes.add(`${name} for ${host}: not replaced, the proxy has no value`);
        else if (bound && secret.how.kind === 'basic' && basic.user === secret.how.user) {
          rawHeaders[index + 1] = `Basic ${Buffer.from(`${basic.user}:${value}`).toString('base64')}`;
          notes.add(`${name} added for ${host}`);
        } else notes.add(refused);
        continue;
      }
      if (!text.includes(placeholder)) continue;
      const how = secret.how.kind === 'header' && header === secret.how.header.toLowerCase() ? secret.how : undefined;
      if (!bound || !how) notes.add(refused);
      else if (value === undefined) notes.add(`${name} for ${host}: not replaced, the proxy has no value`);
      // The header as its template says, with the placeholder where the value goes: nothing else is filled in.
      else if (text !== how.template.split('{value}').join(placeholder))
        notes.add(`${name} toward ${host} not in the form ${how.header}: ${how.template}: not replaced`);
      else if (!HEADER_TEXT.test(how.template.split('{value}').join(value))) notes.add(unsendable(name, host));
      else {
        rawHeaders[index + 1] = how.template.split('{value}').join(value);
        notes.add(`${name} added for ${host}`);
      }
    }
  }
  return { rawHeaders, notes: [...notes] };
}

/** Raw headers as the object http.request takes, without the hop-by-hop ones. */
export function headersObject(
  rawHeaders: readonly string[],
  drop: readonly string[],
): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
    const name = rawHeaders[index]!.toLowerCase();
    if (drop.includes(name)) continue;
    const value = rawHeaders[index + 1]!;
    const had = headers[name];
    headers[name] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
  }
  return headers;
}

/**
 * The name a request is for as a server would route it: its target's host in absolute form, else its
 * Host's name, else (no Host: the proxy then sends one) the connection's. `problem` says why it may
 * not get a value even when that name is the bound one.
 */
function addressee(request: InjectionRequest, host: string): { named: string; problem?: string } {
  const hosts = headerValues(request.rawHeaders, 'host');
  const absolute = !request.url.startsWith('/') && request.url !== '*';
  let named = hosts.length ? nameOf(hosts[0]!) : host;
  if (absolute) {
    try {
      named = nameOf(new URL(request.url).host);
    } catch {
      named = 'an unreadable target';
    }
  }
  const method = request.method?.toUpperCase() ?? '';
  const problem =
    method === 'TRACE' || method === 'TRACK'
      ? `in a ${method} request`
      : hosts.length > 1
        ? `with ${hosts.length} Host headers`
        : absolute && request.intercepted
          ? 'in a request in absolute form'
          : undefined;
  // Truncated: a Host is the sandbox's to write, and the log keeps the note.
  return { named: named.slice(0, 253), problem };
}

/** A Host's name: lower case, without its port, brackets or final dot. */
function nameOf(hostHeader: string): string {
  return normalName(
    hostHeader
      .trim()
      .replace(/:\d*$/, '')
      .replace(/^\[|\]$/g, ''),
  );
}

function headerValues(rawHeaders: readonly string[], name: string): string[] {
  const values: string[] = [];
  for (let index = 0; index + 1 < rawHeaders.length; index += 2)
    if (rawHeaders[index]!.toLowerCase() === name) values.push(rawHeaders[index + 1]!);
  return values;
}

function basicParts(text: string): { user: string; password: string } | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(text);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/**
 * Watches a request's body for placeholders (never replaced there): `note` is told once per secret
 * found, also when one is cut between two chunks.
 */
export function bodyWatcher(
  secrets: readonly SecretWithValue[],
  host: string,
  note: (text: string) => void,
): (chunk: Buffer) => void {
  const placeholders = secrets.map(({ secret }) => ({ name: secret.name, bytes: Buffer.from(secret.placeholder) }));
  const keep = Math.max(0, ...placeholders.map(({ bytes }) => bytes.length - 1));
  const found = new Set<string>();
  let tail = Buffer.alloc(0);
  return (chunk) => {
    if (found.size === placeholders.length) return;
    // Only the seam is copied: the end of the last chunk with the start of this one.
    const seam = tail.length ? Buffer.concat([tail, chunk.subarray(0, keep)]) : undefined;
    for (const { name, bytes } of placeholders) {
      if (found.has(name) || !(chunk.includes(bytes) || seam?.includes(bytes))) continue;
      found.add(name);
      note(`${name} in a body toward ${host}: not replaced`);
    }
    tail = Buffer.from(
      chunk.length >= keep ? chunk.subarray(chunk.length - keep) : Buffer.concat([tail, chunk]).subarray(-keep),
    );
  };
}
