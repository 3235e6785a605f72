/**
 * The virtual engine's way out for the `allowlist` network tier: the fetch that just-bash's curl (and
 * our wget) call, run in the sandbox's worker. Like the Docker engine's egress proxy, it matches
 * the name against the allowlist, resolves it itself and refuses internal addresses (DNS
 * rebinding), then connects to the address it checked (no second lookup; TLS still checks the
 * certificate against the name). Each redirect is a new decision. A refusal is the proxy's HTTP 403
 * whose body names the reason, and every decision is reported with its byte counts.
 */
import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import type { SecureFetch } from 'just-bash';
import { allowEntries } from '../../core/network/allowlist';
import { decisionOf, egressTarget, normalName, systemLookup, type EgressTarget } from '../../core/network/egressTarget';
import type { NetworkDecision } from '../../core/network/egressProxy';
import { REFUSAL_STATUS, refusalBody } from '../../core/network/refusal';
import { formatSize } from '../../core/spec/units';

type FetchOptions = NonNullable<Parameters<SecureFetch>[1]>;
type FetchResult = Awaited<ReturnType<SecureFetch>>;

/** What a sandbox's allowlist is, as its worker receives it. */
export interface AllowlistNetwork {
  /** The allowlist entries' texts (api.github.com, *.githubusercontent.com, localhost:3000). */
  allow: readonly string[];
  /** Names the user mapped to addresses themselves (like /etc/hosts). */
  hosts: Readonly<Record<string, string>>;
  /** Most bytes of one response body; a bigger one fails the request. */
  maxResponseBytes: number;
}

export interface AllowlistFetchOptions extends AllowlistNetwork {
  /** The longest one request may take, redirects included (the command's own time limit). */
  timeoutMs: number;
  /** Ends every request under way (the command was cancelled). */
  signal?: AbortSignal;
  /** Every address of a name (the system resolver when not given). */
  lookup?(host: string): Promise<string[]>;
  /** Certificates trusted in place of Node's own (tests). */
  ca?: readonly string[];
  /** Told of every decision when its request ends (or at once, for a refusal). */
  onDecision(decision: NetworkDecision): void;
}

/** Where `localhost:PORT` entries lead: this machine, which is where the virtual engine runs. */
const LOCAL_ADDRESS = '127.0.0.1';
const MOST_REDIRECTS = 20;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Headers that carry the user's credentials, not sent on to another origin after a redirect. */
const CREDENTIALS = ['authorization', 'cookie', 'proxy-authorization'];
/** Headers this fetch sets itself: the name that was decided, and the body it sends. */
const OWN_HEADERS = ['host', 'content-length', 'transfer-encoding', 'connection', 'proxy-connection'];

type Target = EgressTarget;

export function allowlistFetch(options: AllowlistFetchOptions): SecureFetch {
  const entries = allowEntries(options.allow);

  /** Decides, then resolves and checks: the one address the connection will use, or why not. */
  async function target(host: string, port: number, signal: AbortSignal): Promise<Target> {
    const lookup = options.lookup ?? systemLookup;
    const found = await egressTarget(entries, host, port, {
      hosts: options.hosts,
      localAddress: LOCAL_ADDRESS,
      lookup: (name) => abortable(lookup(name), signal),
    });
    signal.throwIfAborted();
    return found;
  }

  function record(host: string, port: number, target: Target, sent = 0, received = 0): void {
    options.onDecision(decisionOf(host, port, target, sent, received));
  }

  return async (url, init = {}) => {
    const timeoutMs = Math.min(init.timeoutMs ?? options.timeoutMs, options.timeoutMs);
    const signal = AbortSignal.any([
      AbortSignal.timeout(Math.max(1, timeoutMs)),
      ...(options.signal ? [options.signal] : []),
      ...(init.signal ? [init.signal] : []),
    ]);
    let current = httpUrl(url);
    let method = (init.method ?? 'GET').toUpperCase();
    let body = init.body;
    const headers = headerRecord(init.headers);
    const most = Math.min(init.maxRedirects ?? MOST_REDIRECTS, MOST_REDIRECTS);
    for (let redirects = 0; ; redirects++) {
      const host = current.hostname.replace(/^\[|\]$/g, '');
      const port = Number(current.port || (current.protocol === 'https:' ? 443 : 80));
      const checked = await target(host, port, signal);
      if ('refused' in checked) {
        record(host, port, checked);
        return refusal(current, checked.refused);
      }
      const data = body === undefined ? undefined : Buffer.from(body, 'utf8');
      let received = 0;
      let answer: FetchResult;
      try {
        answer = await send(
          { url: current, address: checked.address, method, headers, body: data, ca: options.ca },
          options.maxResponseBytes,
          signal,
          (bytes) => (received = bytes),
        );
      } catch (error) {
        record(host, port, checked, data?.length ?? 0, received);
        throw failure(error, host, port, signal, timeoutMs);
      }
      record(host, port, checked, data?.length ?? 0, received);
      const location = answer.headers['location'];
      if (init.followRedirects === false || !REDIRECTS.has(answer.status) || !location) return answer;
      if (redirects >= most) throw new Error(`Too many redirects (at most ${most})`);
      const next = httpUrl(new URL(location, current).href);
      if (next.origin !== current.origin) for (const name of CREDENTIALS) delete headers[name];
      // As browsers and curl -L do: a 303, and a 301 or 302 after a POST, go on as a GET without the body.
      if ((answer.status === 303 && method !== 'HEAD') || ([301, 302].includes(answer.status) && method === 'POST')) {
        method = 'GET';
        body = undefined;
        delete headers['content-type'];
      }
      current = next;
    }
  };
}

/** One request to the address that was checked; the name stays the request's (Host, TLS name and certificate). */
interface Outgoing {
  url: URL;
  /** The address that was checked. */
  address: string;
  method: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
  ca: readonly string[] | undefined;
}

function send(
  { url, address, method, headers, body, ca }: Outgoing,
  maxBytes: number,
  signal: AbortSignal,
  onBytes: (received: number) => void,
): Promise<FetchResult> {
  return new Promise((resolve, reject) => {
    const outgoing: OutgoingHttpHeaders = { ...headers };
    if (body) outgoing['content-length'] = body.length;
    const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)({
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port || undefined,
      method,
      path: `${url.pathname}${url.search}`,
      headers: outgoing,
      // A connection of its own for every request: none made under another decision is reused.
      agent: false,
      lookup: pinnedLookup(url.hostname, address),
      signal,
      ...(ca ? { ca: [...ca] } : {}),
    });
    request.once('error', reject);
    request.once('response', (response: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let received = 0;
      response.on('data', (chunk: Buffer) => {
        received += chunk.length;
        onBytes(received);
        if (received > maxBytes) {
          response.destroy();
          request.destroy();
          reject(
            new Error(
              `The response is larger than ${formatSize(maxBytes)}, the most the virtual engine takes in one response`,
            ),
          );
          return;
        }
        chunks.push(chunk);
      });
      response.once('error', reject);
      response.once('end', () =>
        resolve({
          status: response.statusCode ?? 502,
          statusText: response.statusMessage ?? '',
          headers: flatHeaders(response),
          body: new Uint8Array(Buffer.concat(chunks)),
          url: url.href,
        }),
      );
    });
    request.end(body);
  });
}

/** The resolver of one connection: the name that was decided leads to the address that was checked, and nothing else resolves. */
function pinnedLookup(name: string, address: string): LookupFunction {
  const family = isIP(address);
  return ((hostname: string, lookupOptions: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (normalName(hostname.replace(/^\[|\]$/g, '')) !== normalName(name.replace(/^\[|\]$/g, '')))
      return callback(Object.assign(new Error(`${hostname} was not decided`), { code: 'ENOTFOUND' }));
    if (lookupOptions.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as unknown as LookupFunction;
}

/** The proxy's refusal, as the program gets it: HTTP 403 whose body names the reason. */
function refusal(url: URL, reason: string): FetchResult {
  const body = Buffer.from(refusalBody(reason), 'utf8');
  return {
    status: REFUSAL_STATUS,
    statusText: 'Forbidden',
    headers: { 'content-type': 'text/plain', 'content-length': String(body.length) },
    body: new Uint8Array(body),
    url: url.href,
  };
}

function httpUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`Network access denied: ${text} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error(`Network access denied: only http and https URLs are reached, not ${url.protocol}`);
  return url;
}

/** A failed request in curl's words, as far as they fit: a timeout or a cancellation says "aborted". */
function failure(error: unknown, host: string, port: number, signal: AbortSignal, timeoutMs: number): Error {
  if (signal.aborted)
    return new Error(
      errorName(signal.reason) === 'TimeoutError'
        ? `The request was aborted: it took longer than ${Math.ceil(timeoutMs / 1000)} s`
        : 'The request was aborted',
    );
  const code = (error as { code?: string }).code;
  if (code === 'ECONNREFUSED' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'ECONNRESET')
    return new Error(`Failed to connect to ${host} port ${port}: ${code}`);
  return error instanceof Error ? error : new Error(String(error));
}

function errorName(reason: unknown): string | undefined {
  return reason instanceof Error ? reason.name : undefined;
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Request headers as one record with lower-case names, without those this fetch sets itself. */
function headerRecord(headers: FetchOptions['headers']): Record<string, string> {
  const record: Record<string, string> = {};
  // A Headers of any realm (just-bash's curl passes one), or a plain record.
  const entries: [string, string][] = [];
  if (headers && typeof (headers as Headers).forEach === 'function')
    (headers as Headers).forEach((value, name) => entries.push([name, value]));
  else entries.push(...Object.entries((headers ?? {}) as Record<string, string>));
  for (const [name, value] of entries) {
    const lower = name.toLowerCase();
    if (!OWN_HEADERS.includes(lower)) record[lower] = value;
  }
  return record;
}

function flatHeaders(response: IncomingMessage): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers))
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  return flat;
}
