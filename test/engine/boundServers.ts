/**
 * The servers the bound-secret engine tests reach, all on 127.0.0.1: two HTTPS servers (their leaf,
 * for api.bound.test and other.test, signed by a CA made here with openssl; the egress proxy is told
 * to trust it with AGENT_SANDBOX_EGRESS_EXTRA_CA) and a plain HTTP one, each recording the headers
 * of every request. The sandboxes reach them under names the tests map themselves (--map-host).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/** A CA and one leaf for both names, made with openssl in `dir`. */
export function testCertificates(dir: string): { ca: string; key: string; cert: string } {
  const at = (name: string) => join(dir, name);
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  ssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=bound secrets test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/CN=api.bound.test');
  writeFileSync(
    at('leaf.ext'),
    'subjectAltName=DNS:api.bound.test,DNS:other.test\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n',
  );
  ssl(
    'x509',
    '-req',
    '-in',
    'leaf.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'leaf.pem',
    '-days',
    '2',
    '-extfile',
    'leaf.ext',
  );
  return { ca: at('ca.pem'), key: readFileSync(at('leaf.key'), 'utf8'), cert: readFileSync(at('leaf.pem'), 'utf8') };
}

/** Run in the sandbox: GET a URL with urllib (through the proxy variables), `Authorization: Bearer $TOKEN`. */
export const GET = String.raw`
import json, os, ssl, sys, urllib.error, urllib.request
url, verify = sys.argv[1], sys.argv[2] == 'verify'
context = ssl.create_default_context() if verify else ssl._create_unverified_context()
request = urllib.request.Request(url, headers={'Authorization': 'Bearer ' + os.environ['TOKEN']})
try:
    answer = urllib.request.urlopen(request, timeout=20, context=context)
    print(json.dumps({'status': answer.status, 'body': answer.read().decode()}))
except urllib.error.HTTPError as error:
    print(json.dumps({'status': error.code, 'body': error.read().decode()}))
except OSError as error:
    print(json.dumps({'error': str(error)}))
`;

export type ServerName = 'bound' | 'other' | 'plain';

export interface RecordingServers {
  /** Every request, oldest first: which server, and its headers. */
  readonly seen: { server: ServerName; headers: IncomingHttpHeaders }[];
  readonly ports: Record<ServerName, number>;
  close(): void;
}

/** The three servers, listening on 127.0.0.1 (ports chosen by the system); each answers "hello from NAME". */
export async function startRecordingServers(certs: { key: string; cert: string }): Promise<RecordingServers> {
  const seen: RecordingServers['seen'] = [];
  const ports: Record<ServerName, number> = { bound: 0, other: 0, plain: 0 };
  const servers: Server[] = [];
  const record =
    (server: ServerName) => (request: { headers: IncomingHttpHeaders }, response: { end(text: string): void }) => {
      seen.push({ server, headers: request.headers });
      response.end(`hello from ${server}`);
    };
  for (const [name, server] of [
    ['bound', createHttpsServer({ key: certs.key, cert: certs.cert }, record('bound'))],
    ['other', createHttpsServer({ key: certs.key, cert: certs.cert }, record('other'))],
    ['plain', createHttpServer(record('plain'))],
  ] as const) {
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    ports[name] = (server.address() as AddressInfo).port;
    servers.push(server);
  }
  return {
    seen,
    ports,
    close: () => {
      for (const server of servers) server.close();
    },
  };
}
