/**
 * Secrets offered by name, through the built CLI and MCP server on a real Docker Engine:
 * - `--secrets-file PATH` gives the values (a file of the user's alone; one others can read, or a
 *   symbolic link, is refused before anything opens), and none of its values is ever printed;
 * - `--inside-secret NAME` puts the value itself in the sandbox, printed as [secret:NAME];
 * - `agent-sandbox tool` and `agent-sandbox mcp` offer `--secret` / `--inside-secret` to the model,
 *   which asks for them by name (sandbox_open's and sandbox_run's `secrets`): an unknown name is the
 *   call's error listing the offered ones, a missing value a `secret unavailable` result;
 * - curl in a sandbox (the host's own curl, copied with its libraries and loader: the images have
 *   none) goes through the proxy (HTTPS_PROXY) and trusts its session CA (CURL_CA_BUNDLE): the bound
 *   server gets the value, another allowed name the placeholder, a name off the allowlist nothing,
 *   and `agent-sandbox log` records each decision.
 * Network traffic goes only to the servers started here on 127.0.0.1 (boundServers.ts). The values
 * are canaries derived from a seed, printed below (AGENT_SANDBOX_TEST_SEED=... repeats a run).
 * Needs dist/ (node esbuild.mjs).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { GET, startRecordingServers, testCertificates, type RecordingServers } from './boundServers';
import { CLI, runCliText } from './cliRunner';
import { TEST_IMAGES, requireEngine } from './harness';
import { resultText, startMcp } from './mcpHarness';

const SEED = process.env.AGENT_SANDBOX_TEST_SEED || randomBytes(8).toString('hex');
/** A canary value for one use, the same for the same seed. */
const canary = (use: string) =>
  `${use}-canary-${createHash('sha256').update(`${SEED}/${use}`).digest('hex').slice(0, 24)}`;

/** TOKEN as a host variable; the secrets file's TOKEN (which wins over it); the inside secrets. */
const HOST_TOKEN = canary('host-token');
const FILE_TOKEN = canary('file-token');
const HOST_DB = canary('host-db');
const FILE_DB = canary('file-db');
/** In the secrets file, asked for by no sandbox: redacted all the same. */
const FILE_UNASKED = canary('file-unasked');
const ALL_VALUES = [HOST_TOKEN, FILE_TOKEN, HOST_DB, FILE_DB, FILE_UNASKED];

const BIND = 'TOKEN=api.bound.test:header:Authorization: Bearer {value}';
const MAP_BOUND = ['--map-host', 'api.bound.test=127.0.0.1'];
const PLACEHOLDER = /agent-sandbox-placeholder-[0-9a-f]{32}/;

/** No canary value in any of these texts. */
function assertNoValue(...texts: string[]): void {
  for (const text of texts)
    for (const value of ALL_VALUES) assert.ok(!text.includes(value), `a secret's value was printed: ${text}`);
}

/**
 * The host's curl with every library it loads and the loader itself, to run in a sandbox whatever its
 * own libraries are: `K/ld-linux-x86-64.so.2 --library-path K K/curl`.
 */
function curlKit(into: string): void {
  const curl = execFileSync('sh', ['-c', 'command -v curl'], { encoding: 'utf8' }).trim();
  assert.ok(curl, 'the test copies the host`s curl into the sandbox (the images have none): install curl');
  mkdirSync(into, { recursive: true });
  copyFileSync(curl, join(into, 'curl'));
  const libraries = execFileSync('ldd', [curl], { encoding: 'utf8' })
    .split('\n')
    .map((line) => /=>\s*(\/\S+)/.exec(line)?.[1] ?? /^\s*(\/\S*ld-linux\S*)/.exec(line)?.[1])
    .filter((path): path is string => Boolean(path));
  assert.ok(
    libraries.some((path) => basename(path).startsWith('ld-linux')),
    `no loader in ldd's list: ${libraries}`,
  );
  for (const path of libraries) copyFileSync(path, join(into, basename(path)));
  chmodSync(join(into, 'curl'), 0o755);
}

describe('secrets offered by name: --secrets-file, --inside-secret, tool and mcp (real engine)', function () {
  const work = mkdtempSync(join(tmpdir(), 'agent-sandbox-secret-catalog-'));
  const folder = join(work, 'folder');
  const state = join(work, 'state');
  const secretsFile = join(work, 'secrets');
  let servers: RecordingServers | undefined;
  let env: NodeJS.ProcessEnv;
  const seen = () => servers!.seen;
  const ports = () => servers!.ports;
  const cli = (args: string[], more: NodeJS.ProcessEnv = {}) =>
    runCliText([args[0]!, '--folder', folder, ...args.slice(1)], { env: { ...env, ...more }, stdin: '' });
  const exec = async (session: string, command: string, ...flags: string[]) => {
    const run = await cli(['exec', '--session', session, ...flags, '--', 'sh', '-c', command]);
    assert.equal(run.code, 0, run.stderr);
    return run;
  };
  const sessions = async (): Promise<string[]> => {
    const listed = await cli(['ls', '--json']);
    assert.equal(listed.code, 0, listed.stderr);
    return (JSON.parse(listed.stdout) as { sessions: { name: string }[] }).sessions.map((session) => session.name);
  };

  before(async function () {
    await requireEngine(this);
    assert.ok(existsSync(CLI), `build the CLI first (node esbuild.mjs): ${CLI}`);
    process.stdout.write(`      seed: AGENT_SANDBOX_TEST_SEED=${SEED} (canaries: ${ALL_VALUES.join(' ')})\n`);
    mkdirSync(folder);
    mkdirSync(state);
    const certs = testCertificates(work);
    servers = await startRecordingServers(certs);
    writeFileSync(
      secretsFile,
      `# the test's secrets\nTOKEN=${FILE_TOKEN}\n\nDB_PASSWORD=${FILE_DB}\nUNASKED=${FILE_UNASKED}\n`,
      { mode: 0o600 },
    );
    chmodSync(secretsFile, 0o600); // whatever the umask
    env = {
      AGENT_SANDBOX_IMAGE_PYTHON: TEST_IMAGES.python,
      AGENT_SANDBOX_IMAGE_NODE: TEST_IMAGES.node,
      AGENT_SANDBOX_IMAGE_BASH: TEST_IMAGES.bash,
      AGENT_SANDBOX_IMAGE_LINUX: TEST_IMAGES.linux,
      AGENT_SANDBOX_POOL_SIZE: '0',
      AGENT_SANDBOX_STATE_DIR: state,
      AGENT_SANDBOX_EGRESS_EXTRA_CA: certs.ca,
      // Only what a test gives: none of the secrets' names comes from the runner's environment.
      TOKEN: undefined,
      DB_PASSWORD: undefined,
      UNASKED: undefined,
      UNSET_SECRET: undefined,
    };
  });

  after(async () => {
    if (env) await cli(['close', '--all']);
    servers?.close();
    rmSync(work, { recursive: true, force: true });
  });

  describe('--secrets-file', () => {
    it('a file of mode 0600 gives the value: the bound server on 127.0.0.1 gets it (over the host variable)', async () => {
      const opened = await cli(
        [
          'open',
          '--session',
          'file',
          '--runtime',
          'python',
          '--secret',
          BIND,
          ...MAP_BOUND,
          '--secrets-file',
          secretsFile,
        ],
        { TOKEN: HOST_TOKEN },
      );
      assert.equal(opened.code, 0, opened.stderr);
      assert.match(opened.stdout + opened.stderr, /Bound secret TOKEN: the sandbox holds a placeholder/);
      assertNoValue(opened.stdout, opened.stderr);
      assert.equal((await exec('file', 'echo "$TOKEN"')).stdout, '[secret:TOKEN]\n');
      await exec('file', `cat > $HOME/get.py <<'EOF'\n${GET}\nEOF`);
      const got = await exec('file', `python3 $HOME/get.py https://api.bound.test:${ports().bound}/ verify`);
      assert.deepEqual(JSON.parse(got.stdout), { status: 200, body: 'hello from bound' });
      const last = seen().at(-1)!;
      assert.equal(last.server, 'bound');
      assert.equal(last.headers.authorization, `Bearer ${FILE_TOKEN}`, 'the file`s value, not the host variable`s');
    });

    it('a file others can read or write is refused (exit 2, chmod 600 PATH), and nothing is opened', async () => {
      for (const mode of [0o644, 0o640, 0o602]) {
        const open = join(work, `secrets-${mode.toString(8)}`);
        writeFileSync(open, `DB_PASSWORD=${FILE_DB}\n`);
        chmodSync(open, mode);
        for (const command of [
          ['open', '--session', 'refused', '--runtime', 'bash'],
          ['run', '--runtime', 'bash', '--code', 'echo ran'],
        ]) {
          const refused = await cli([...command, '--inside-secret', 'DB_PASSWORD', '--secrets-file', open]);
          assert.equal(refused.code, 2, `${mode.toString(8)}: ${refused.stderr}`);
          assert.ok(refused.stderr.includes(`chmod 600 ${open}`), refused.stderr);
          assert.match(refused.stderr, new RegExp(`mode ${mode.toString(8)}\\b`));
          assert.equal(refused.stdout, '');
          assertNoValue(refused.stderr);
        }
      }
      assert.ok(!(await sessions()).includes('refused'), 'a session was opened with a refused secrets file');
    });

    it('a symbolic link to a secrets file is refused, naming the link', async () => {
      const link = join(work, 'secrets-link');
      symlinkSync(secretsFile, link);
      const refused = await cli([
        'open',
        '--session',
        'linked',
        '--runtime',
        'bash',
        '--inside-secret',
        'DB_PASSWORD',
        '--secrets-file',
        link,
      ]);
      assert.equal(refused.code, 2, refused.stderr);
      assert.match(refused.stderr, /--secrets-file .*secrets-link is a symbolic link: give the file itself/);
      assertNoValue(refused.stderr);
      assert.ok(!(await sessions()).includes('linked'));
    });

    it('its values are never printed, even by the sandbox: [secret:NAME], unless --show-secrets', async () => {
      const code = `printenv DB_PASSWORD; echo "<$DB_PASSWORD>" >&2; echo "unasked ${FILE_UNASKED}"`;
      const flags = ['--runtime', 'bash', '--inside-secret', 'DB_PASSWORD', '--secrets-file', secretsFile];
      const run = await cli(['run', ...flags, '--code', code]);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, '[secret:DB_PASSWORD]\nunasked [secret:UNASKED]\n');
      assert.match(run.stderr, /<\[secret:DB_PASSWORD\]>/);
      assertNoValue(run.stdout, run.stderr);
      const json = await cli(['run', '--json', ...flags, '--code', code]);
      assert.equal(JSON.parse(json.stdout).stdout, '[secret:DB_PASSWORD]\nunasked [secret:UNASKED]\n');
      assertNoValue(json.stdout, json.stderr);
      const shown = await cli(['run', '--show-secrets', ...flags, '--code', 'printenv DB_PASSWORD']);
      assert.equal(shown.stdout, `${FILE_DB}\n`, 'the file`s value is in the sandbox');
    });
  });

  describe('--inside-secret', () => {
    it('the value is in the sandbox`s environment, printed as [secret:NAME] (shown with --show-secrets); open says so', async () => {
      const opened = await cli(['open', '--session', 'inside', '--runtime', 'bash', '--inside-secret', 'DB_PASSWORD'], {
        DB_PASSWORD: HOST_DB,
      });
      assert.equal(opened.code, 0, opened.stderr);
      assert.match(
        opened.stdout + opened.stderr,
        /Inside secret DB_PASSWORD: its value is in the sandbox's environment/,
      );
      assertNoValue(opened.stdout, opened.stderr);
      // From a shell without the variable: the session's own secrets are redacted all the same.
      const printed = await exec('inside', 'printenv DB_PASSWORD');
      assert.equal(printed.stdout, '[secret:DB_PASSWORD]\n');
      const withIt = await cli(['exec', '--session', 'inside', '--', 'printenv', 'DB_PASSWORD'], {
        DB_PASSWORD: HOST_DB,
      });
      assert.equal(withIt.stdout, '[secret:DB_PASSWORD]\n', withIt.stderr);
      const shown = await exec('inside', 'printenv DB_PASSWORD', '--show-secrets');
      assert.equal(shown.stdout, `${HOST_DB}\n`);
    });
  });

  describe('agent-sandbox tool offers the secrets; the model asks by name', () => {
    const offer = ['--secret', BIND, ...MAP_BOUND, '--inside-secret', 'UNSET_SECRET'];
    const tool = (name: string, input: unknown, ...flags: string[]) =>
      cli(['tool', name, JSON.stringify(input), ...offer, ...flags], { TOKEN: HOST_TOKEN });

    it('sandbox_open with secrets ["TOKEN"] holds the placeholder; sandbox_exec reaches the bound server with the value', async () => {
      const opened = await tool('sandbox_open', { session: 'by-tool', runtime: 'python', secrets: ['TOKEN'] });
      assert.equal(opened.code, 0, opened.stderr + opened.stdout);
      assert.match(opened.stdout, /network: only api\.bound\.test/);
      assert.ok((await sessions()).includes('by-tool'));
      const echoed = await tool('sandbox_exec', { sandbox_id: 'by-tool', command: 'echo "<$TOKEN>"' });
      assert.equal(echoed.code, 0, echoed.stderr + echoed.stdout);
      assert.match(echoed.stdout, /<\[secret:TOKEN\]>/);
      const shown = await tool('sandbox_exec', { sandbox_id: 'by-tool', command: 'echo "<$TOKEN>"' }, '--show-secrets');
      assert.match(shown.stdout, new RegExp(`<${PLACEHOLDER.source}>`), 'the sandbox holds the placeholder');
      await tool('sandbox_exec', { sandbox_id: 'by-tool', command: `cat > $HOME/get.py <<'EOF'\n${GET}\nEOF` });
      const got = await tool('sandbox_exec', {
        sandbox_id: 'by-tool',
        command: `python3 $HOME/get.py https://api.bound.test:${ports().bound}/ verify`,
      });
      assert.equal(got.code, 0, got.stderr + got.stdout);
      assert.match(got.stdout, /"body": "hello from bound"/);
      assert.equal(seen().at(-1)!.headers.authorization, `Bearer ${HOST_TOKEN}`);
      for (const run of [opened, echoed, got]) {
        assertNoValue(run.stdout, run.stderr);
        assert.doesNotMatch(run.stdout + run.stderr, PLACEHOLDER);
      }
    });

    it('a name not offered is the call`s error (exit 1), listing the offered ones; nothing opens', async () => {
      const asked = await tool('sandbox_open', { session: 'nope', secrets: ['NOPE'] });
      assert.equal(asked.code, 1, asked.stderr + asked.stdout);
      assert.match(
        asked.stdout + asked.stderr,
        /There is no secret named "NOPE"\. The secrets offered are TOKEN, UNSET_SECRET\./,
      );
      assert.ok(!(await sessions()).includes('nope'));
    });

    it('a name offered without a value is "failed · secret unavailable", and opens no sandbox', async () => {
      const opened = await tool('sandbox_open', { session: 'unset', runtime: 'bash', secrets: ['UNSET_SECRET'] });
      assert.equal(opened.code, 1, opened.stderr + opened.stdout);
      const said = opened.stdout + opened.stderr;
      assert.match(said, /failed · secret unavailable/);
      assert.match(said, /The secret UNSET_SECRET has no value, so no sandbox was opened with it/);
      assert.match(said, /Set the host variable UNSET_SECRET, or put a line UNSET_SECRET=VALUE/);
      assert.ok(!(await sessions()).includes('unset'));
      const run = await tool('sandbox_run', { runtime: 'bash', code: 'echo ran', secrets: ['UNSET_SECRET'] });
      assert.equal(run.code, 1, run.stderr + run.stdout);
      assert.match(run.stdout + run.stderr, /failed · secret unavailable/);
      assert.doesNotMatch(run.stdout, /ran/);
    });
  });

  describe('agent-sandbox mcp offers the secrets', () => {
    /** `agent-sandbox mcp --secret TOKEN=...`, TOKEN set on the host. */
    const offeringMcp = () => {
      const serverEnv: Record<string, string> = {};
      for (const [name, value] of Object.entries({ ...env, TOKEN: HOST_TOKEN }))
        if (value !== undefined) serverEnv[name] = value;
      return startMcp(folder, ['--secret', BIND, ...MAP_BOUND], { env: serverEnv });
    };

    it('its instructions name them; sandbox_run with secrets reaches the bound server with the value, shown as [secret:TOKEN]', async () => {
      const server = await offeringMcp();
      try {
        const instructions = server.client.getInstructions() ?? '';
        assert.match(
          instructions,
          /Secrets offered to sandboxes .*: TOKEN → api\.bound\.test \(Authorization header\)/,
        );
        const code = [
          'import os, urllib.request as u',
          "print('<' + os.environ['TOKEN'] + '>')",
          `request = u.Request('https://api.bound.test:${ports().bound}/', headers={'Authorization': 'Bearer ' + os.environ['TOKEN']})`,
          'print(u.urlopen(request, timeout=20).read().decode())',
        ].join('\n');
        const run = resultText(
          await server.client.callTool({
            name: 'sandbox_run',
            arguments: { runtime: 'python', code, secrets: ['TOKEN'] },
          }),
        );
        assert.match(run, /<\[secret:TOKEN\]>/);
        assert.match(run, /hello from bound/);
        assert.equal(seen().at(-1)!.headers.authorization, `Bearer ${HOST_TOKEN}`);
        const unknown = await server.client
          .callTool({ name: 'sandbox_run', arguments: { runtime: 'python', code: 'print(1)', secrets: ['NOPE'] } })
          .then(resultText, (error: Error) => error.message);
        assert.match(unknown, /There is no secret named "NOPE"\. The secrets offered are TOKEN\./);
        for (const text of [run, unknown, server.stderr()]) {
          assertNoValue(text);
          assert.doesNotMatch(text, PLACEHOLDER);
        }
      } finally {
        await server.close();
        await server.exited;
      }
    });

    it('sandbox_open with secrets gives the session the placeholder; sandbox_exec shows it as [secret:TOKEN]', async () => {
      const server = await offeringMcp();
      try {
        const opened = resultText(
          await server.client.callTool({
            name: 'sandbox_open',
            arguments: { session: 'by-mcp', runtime: 'python', secrets: ['TOKEN'] },
          }),
        );
        assert.match(opened, /network: only api\.bound\.test/, opened);
        const exec = resultText(
          await server.client.callTool({
            name: 'sandbox_exec',
            arguments: {
              sandbox_id: 'by-mcp',
              command: `echo "<$TOKEN>"; python3 -c "import urllib.request as u; print(u.urlopen(u.Request('https://api.bound.test:${ports().bound}/', headers={'Authorization': 'Bearer $TOKEN'}), timeout=20).read().decode())"`,
            },
          }),
        );
        assert.match(exec, /<\[secret:TOKEN\]>/);
        assert.match(exec, /hello from bound/);
        assert.equal(seen().at(-1)!.headers.authorization, `Bearer ${HOST_TOKEN}`);
        for (const text of [opened, exec, server.stderr()]) {
          assertNoValue(text);
          assert.doesNotMatch(text, PLACEHOLDER);
        }
      } finally {
        await server.close();
        await server.exited;
      }
    });
  });

  describe('curl in a sandbox', () => {
    const kit = '/workspace/kit';
    const curl = async (url: string, ...options: string[]) =>
      (
        await exec(
          'curl',
          `K=${kit}; "$K"/ld-linux-x86-64.so.2 --library-path "$K" "$K"/curl -sS --max-time 20 -H "Authorization: Bearer $TOKEN" ${options.join(' ')} ${url} 2>&1; echo " exit=$?"`,
        )
      ).stdout;

    before(async () => {
      curlKit(join(folder, 'kit'));
      const opened = await cli(
        [
          'open',
          '--session',
          'curl',
          '--runtime',
          'bash',
          '--workspace',
          'ro',
          '--secret',
          BIND,
          ...MAP_BOUND,
          '--map-host',
          'other.test=127.0.0.1',
          '--allow-domain',
          'other.test',
          '--map-host',
          'refused.test=127.0.0.1',
        ],
        { TOKEN: HOST_TOKEN },
      );
      assert.equal(opened.code, 0, opened.stderr);
    });

    it('to the bound name (HTTPS_PROXY, the session CA by CURL_CA_BUNDLE): the request arrives with the real value', async () => {
      assert.equal(await curl(`https://api.bound.test:${ports().bound}/`), 'hello from bound exit=0\n');
      const last = seen().at(-1)!;
      assert.equal(last.server, 'bound');
      assert.equal(last.headers.authorization, `Bearer ${HOST_TOKEN}`);
    });

    it('to another allowed name it arrives with the placeholder; a name off the allowlist is refused; the log records each', async () => {
      const placeholder = (await exec('curl', 'printf %s "$TOKEN"', '--show-secrets')).stdout;
      assert.match(placeholder, new RegExp(`^${PLACEHOLDER.source}$`));
      // other.test is not intercepted: TLS goes through to the server, whose CA the sandbox does not know (-k).
      assert.equal(await curl(`https://other.test:${ports().other}/`, '-k'), 'hello from other exit=0\n');
      assert.equal(seen().at(-1)!.headers.authorization, `Bearer ${placeholder}`);
      assert.equal(await curl(`http://other.test:${ports().plain}/`), 'hello from plain exit=0\n');
      assert.equal(seen().at(-1)!.headers.authorization, `Bearer ${placeholder}`);
      const before = seen().length;
      const refused = await curl(`https://refused.test:${ports().bound}/`);
      assert.match(refused, /CONNECT tunnel failed, response 403/);
      assert.match(refused, / exit=56\n$/);
      assert.equal(seen().length, before, 'a refused name reached a server');

      // `agent-sandbox log` has each connection's decision with what the proxy did with the bound secret,
      // as the egress proxy's decision log (in the state folder) has it.
      const log = await cli(['log']);
      assert.equal(log.code, 0, log.stderr);
      const network = log.stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((record) => record.kind === 'network' && record.sandboxId === 'curl');
      const about = (host: string) => network.filter((record) => record.host === host);
      assert.ok(about('api.bound.test').length >= 1 && about('api.bound.test').every((record) => record.allowed));
      assert.ok(about('other.test').length >= 2 && about('other.test').every((record) => record.allowed));
      assert.deepEqual(
        about('refused.test').map((record) => record.allowed),
        [false],
        JSON.stringify(network),
      );
      assert.ok(about('refused.test')[0]!.reason, 'the refusal says why');
      assert.ok(
        about('api.bound.test').some(
          (record) => JSON.stringify(record.secrets) === '["TOKEN added for api.bound.test"]',
        ),
        JSON.stringify(about('api.bound.test')),
      );
      assert.ok(
        about('other.test').some((record) =>
          /TOKEN [^"]*toward other\.test[^"]*: not replaced/.test(JSON.stringify(record.secrets)),
        ),
        JSON.stringify(about('other.test')),
      );
      const decisions = readdirSync(join(state, 'egress'))
        .map((id) => join(state, 'egress', id, 'decisions.jsonl'))
        .filter((file) => existsSync(file))
        .map((file) => readFileSync(file, 'utf8'))
        .join('');
      assert.match(decisions, /"host":"api\.bound\.test".*"secrets":\["TOKEN added for api\.bound\.test"\]/);
      // curl's plain HTTP request through the proxy is in absolute form ("TOKEN toward other.test in a request in absolute form: not replaced").
      assert.match(decisions, /"host":"other\.test".*"secrets":\["TOKEN [^"]*toward other\.test[^"]*: not replaced"\]/);
      assertNoValue(log.stdout, decisions);
      assert.ok(!log.stdout.includes(placeholder) && !decisions.includes(placeholder), 'a log holds the placeholder');
    });
  });
});
