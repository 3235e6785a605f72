/**
 * What the egress proxy does with the placeholders of bound secrets (core/secrets/bound.ts) in one
 * HTTP request: in a request it intercepted for a domain the secret is bound to, whose Host is that
 * domain, the placeholder in the bound header becomes the value (in basic auth, the password). A
 * placeholder anywhere else (another header, the URL, another domain, a plain HTTP request) is left
 * as it is and noted, so the attempt shows in the decision log ("TOKEN sent toward other.example:
 * not replaced"). Never notes the value.
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

export function injectSecrets(request: InjectionRequest, secrets: readonly SecretWithValue[]): Injection {
  const rawHeaders = [...request.rawHeaders];
  const notes = new Set<string>();
  const host = normalName(request.host);
  const hostHeader = headerValue(rawHeaders, 'host');
  const hostOfRequest = hostHeader ? normalName(hostHeader.replace(/:\d+$/, '').replace(/^\[|\]$/g, '')) : host;
  for (const { secret, value } of secrets) {
    const bound = request.intercepted && secret.domains.includes(host) && hostOfRequest === host;
    const { placeholder, name } = secret;
    if (request.url.includes(placeholder)) notes.add(`${name} in a URL toward ${hostOfRequest}: not replaced`);
    for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
      const header = rawHeaders[index]!.toLowerCase();
      const text = rawHeaders[index + 1]!;
      const basic = secret.how.kind === 'basic' && header === 'authorization' ? basicParts(text) : undefined;
      if (basic && basic.password === placeholder) {
        if (bound && value === undefined) notes.add(`${name} for ${host}: not replaced, the proxy has no value`);
        else if (bound && secret.how.kind === 'basic' && basic.user === secret.how.user) {
          rawHeaders[index + 1] = `Basic ${Buffer.from(`${basic.user}:${value}`).toString('base64')}`;
          notes.add(`${name} added for ${host}`);
        } else notes.add(`${name} sent toward ${hostOfRequest}: not replaced`);
        continue;
      }
      if (!text.includes(placeholder)) continue;
      const how = secret.how.kind === 'header' && header === secret.how.header.toLowerCase() ? secret.how : undefined;
      if (!bound || !how) notes.add(`${name} sent toward ${hostOfRequest}: not replaced`);
      else if (value === undefined) notes.add(`${name} for ${host}: not replaced, the proxy has no value`);
      // The header as its template says, with the placeholder where the value goes: nothing else is filled in.
      else if (text !== how.template.split('{value}').join(placeholder))
        notes.add(`${name} toward ${host} not in the form ${how.header}: ${how.template}: not replaced`);
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

function headerValue(rawHeaders: readonly string[], name: string): string | undefined {
  for (let index = 0; index + 1 < rawHeaders.length; index += 2)
    if (rawHeaders[index]!.toLowerCase() === name) return rawHeaders[index + 1];
  return undefined;
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
