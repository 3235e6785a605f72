/**
 * Bound secrets through the built CLI on a real Docker Engine: `open --secret TOKEN=api.bound.test:…`
 * gives the sandbox a placeholder, and its egress proxy puts the value (a fresh random canary,
 * printed below) only into the Authorization header of HTTPS requests to api.bound.test. Traffic
 * stays on this machine: two HTTPS servers on 127.0.0.1 with the test's own CA (made with openssl;
 * the proxy is told to trust it with AGENT_SANDBOX_EGRESS_EXTRA_CA) and a plain HTTP one, reached
 * under names the test maps itself (--map-host), as the allowlist tests do. Needs dist/ (node esbuild.mjs).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GET, startRecordingServers, testCertificates, type RecordingServers } from './boundServers';
import { CLI, runCliText } from './cliRunner';
import { TEST_IMAGES, requireEngine } from './harness';

const VALUE = `bound-canary-${randomBytes(12).toString('hex')}`;

describe('bound secrets through the CLI (real engine)', function () {
  const work = mkdtempSync(join(tmpdir(), 'agent-sandbox-bound-'));
  const folder = join(work, 'folder');
  const state = join(work, 'state');
  let servers: RecordingServers | undefined;
  /** The requests the servers saw, and their ports (once `before` started them). */
  const seen = () => servers!.seen;
  const ports = () => servers!.ports;
  let env: NodeJS.ProcessEnv;
  const cli = (args: string[], more: NodeJS.ProcessEnv = {}) =>
    runCliText([args[0]!, '--folder', folder, ...args.slice(1)], { env: { ...env, ...more }, stdin: '' });
  const exec = async (command: string, ...flags: string[]) => {
    const run = await cli(['exec', '--session', 'bound', ...flags, '--', 'sh', '-c', command]);
    assert.equal(run.code, 0, run.stderr);
    return run.stdout;
  };
  const get = async (url: string, verify = true) =>
    JSON.parse(await exec(`python3 $HOME/get.py ${url} ${verify ? 'verify' : 'no'}`)) as Record<string, unknown>;
  const decisions = () =>
    readdirSync(join(state, 'egress')).flatMap((id) => {
      const file = join(state, 'egress', id, 'decisions.jsonl');
      return existsSync(file) ? readFileSync(file, 'utf8') : '';
    });

  before(async function () {
    await requireEngine(this);
    assert.ok(existsSync(CLI), `build the CLI first (node esbuild.mjs): ${CLI}`);
    process.stdout.write(`      canary value of TOKEN (random): ${VALUE}\n`);
    execFileSync('mkdir', ['-p', folder, state]);
    const certs = testCertificates(work);
    servers = await startRecordingServers(certs);
    env = {
      AGENT_SANDBOX_IMAGE_PYTHON: TEST_IMAGES.python,
      AGENT_SANDBOX_IMAGE_NODE: TEST_IMAGES.node,
      AGENT_SANDBOX_POOL_SIZE: '0',
      AGENT_SANDBOX_STATE_DIR: state,
      AGENT_SANDBOX_EGRESS_EXTRA_CA: certs.ca,
      TOKEN: VALUE,
    };
  });

  after(async () => {
    if (env) await cli(['close', '--all']);
    servers?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('refuses a bad binding with its shape, and an unset variable by name', async () => {
    const bad = await cli(['open', '--session', 'bad', '--secret', 'TOKEN=api.bound.test']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /NAME=DOMAIN\[,DOMAIN\.\.\.\]:HOW/);
    const unset = await cli(['open', '--session', 'bad', '--secret', 'NOT_SET_ANYWHERE=api.bound.test:basic:me']);
    assert.equal(unset.code, 2, unset.stderr);
    assert.match(unset.stderr, /The secret NOT_SET_ANYWHERE has no value, so no sandbox was opened with it/);
    assert.match(unset.stderr, /Set the host variable NOT_SET_ANYWHERE, or put a line NOT_SET_ANYWHERE=VALUE/);
  });

  it('open says what the binding does; the sandbox holds a placeholder, shown as [secret:TOKEN]', async () => {
    const opened = await cli([
      'open',
      '--session',
      'bound',
      '--runtime',
      'python',
      '--secret',
      'TOKEN=api.bound.test:header:Authorization: Bearer {value}',
      '--map-host',
      'api.bound.test=127.0.0.1',
      '--map-host',
      'other.test=127.0.0.1',
      '--allow-domain',
      'other.test',
    ]);
    assert.equal(opened.code, 0, opened.stderr);
    const said = opened.stdout + opened.stderr;
    assert.match(
      said,
      /Bound secret TOKEN: the sandbox holds a placeholder; .* api\.bound\.test, which the allowlist now includes/,
    );
    assert.ok(!said.includes(VALUE));
    assert.equal(await exec('echo "$TOKEN"'), '[secret:TOKEN]\n');
    assert.match(await exec('echo "$TOKEN"', '--show-secrets'), /^agent-sandbox-placeholder-[0-9a-f]{32}\n$/);
    await exec(`cat > $HOME/get.py <<'EOF'\n${GET}\nEOF`);
  });

  it('an HTTPS request to the bound domain (python urllib, verifying) arrives with the real value', async () => {
    const answer = await get(`https://api.bound.test:${ports().bound}/`);
    assert.deepEqual(answer, { status: 200, body: 'hello from bound' });
    const last = seen().at(-1)!;
    assert.equal(last.server, 'bound');
    assert.equal(last.headers.authorization, `Bearer ${VALUE}`);
    assert.match(decisions().join(''), /"secrets":\["TOKEN added for api\.bound\.test"\]/);
  });

  it('the same request to another name arrives with the placeholder; by plain HTTP the attempt is logged', async () => {
    const placeholder = (await exec('printf %s "$TOKEN"', '--show-secrets')).trim();
    // other.test is not intercepted: its TLS goes through to the server (whose CA the sandbox does not know).
    assert.deepEqual(await get(`https://other.test:${ports().other}/`, false), {
      status: 200,
      body: 'hello from other',
    });
    assert.equal(seen().at(-1)!.headers.authorization, `Bearer ${placeholder}`);
    assert.deepEqual(await get(`http://other.test:${ports().plain}/`), { status: 200, body: 'hello from plain' });
    assert.equal(seen().at(-1)!.headers.authorization, `Bearer ${placeholder}`);
    assert.match(decisions().join(''), /"secrets":\["TOKEN sent toward other\.test: not replaced"\]/);
    assert.ok(!decisions().join('').includes(VALUE));
  });

  it('run --secret does the same in a one-off sandbox, and prints the placeholder as [secret:TOKEN]', async () => {
    const code = `import os, urllib.request as u\nprint(os.environ['TOKEN'])\nprint(u.urlopen(u.Request('https://api.bound.test:${ports().bound}/', headers={'Authorization': 'Bearer ' + os.environ['TOKEN']}), timeout=20).read().decode())`;
    const run = await cli([
      'run',
      '--runtime',
      'python',
      '--secret',
      'TOKEN=api.bound.test:header:Authorization: Bearer {value}',
      '--map-host',
      'api.bound.test=127.0.0.1',
      '--code',
      code,
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, '[secret:TOKEN]\nhello from bound\n');
    assert.equal(seen().at(-1)!.headers.authorization, `Bearer ${VALUE}`);
  });

  it('Node.js trusts the session CA through NODE_EXTRA_CA_CERTS (a CONNECT of its own: Node 18`s fetch ignores the proxy)', async () => {
    const code = [
      "const http = require('http'), tls = require('tls');",
      `const host = 'api.bound.test', port = ${ports().bound};`,
      'const proxy = new URL(process.env.HTTPS_PROXY);',
      "http.request({ host: proxy.hostname, port: proxy.port, method: 'CONNECT', path: `${host}:${port}` }).on('connect', (answer, socket) => {",
      '  const secure = tls.connect({ socket, servername: host }, () =>',
      '    secure.write(`GET / HTTP/1.1\\r\\nHost: ${host}\\r\\nAuthorization: Bearer ${process.env.TOKEN}\\r\\nConnection: close\\r\\n\\r\\n`));',
      "  let text = ''; secure.on('data', (data) => (text += data));",
      "  secure.on('end', () => console.log(text.split('\\r\\n\\r\\n')[1]));",
      "  secure.on('error', (error) => console.log('error: ' + error.message));",
      '}).end();',
    ].join('\n');
    const run = await cli([
      'run',
      '--runtime',
      'node',
      '--secret',
      'TOKEN=api.bound.test:header:Authorization: Bearer {value}',
      '--map-host',
      'api.bound.test=127.0.0.1',
      '--code',
      code,
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'hello from bound\n');
    assert.equal(seen().at(-1)!.headers.authorization, `Bearer ${VALUE}`);
  });

  it('the value is nowhere in the sandbox: not in any readable environment, /tmp, /workspace, $HOME or env', async () => {
    const dump = await exec(
      'for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do cat "$f" 2>/dev/null; echo; done; env; find /tmp /workspace "$HOME" -type f -size -5M -exec cat {} + 2>/dev/null; true',
      '--show-secrets',
    );
    assert.ok(dump.includes('agent-sandbox-placeholder-'), 'the dump holds the placeholder (it read the environment)');
    assert.ok(dump.includes('BEGIN CERTIFICATE'), 'the dump holds the CA bundle');
    assert.ok(!dump.includes(VALUE), 'the value is in the sandbox');
    assert.ok(!dump.includes('PRIVATE KEY'), 'a private key is in the sandbox');
    // Nor in what the engine keeps of the sandbox (its environment, its labels with the spec).
    const ids = execFileSync('docker', ['ps', '-q'], { encoding: 'utf8' }).split('\n').filter(Boolean);
    assert.ok(ids.length > 0);
    const inspected = execFileSync('docker', ['inspect', ...ids], { encoding: 'utf8' });
    assert.ok(inspected.includes('agent-sandbox-placeholder-'));
    assert.ok(!inspected.includes(VALUE), 'the value is in the container`s configuration');
  });
});
