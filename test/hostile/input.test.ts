// Bad input through the tools and the CLI: every answer names what is wrong and what to do, and nothing is lost.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCliText } from '../engine/cliRunner';
import { requireEngine, TEST_IMAGES } from '../engine/harness';
import { observe } from './report';
import { firstLine, toolbox } from './toolbox';

function cli(args: string[]) {
  return runCliText(args, {
    env: { AGENT_SANDBOX_IMAGE_PYTHON: TEST_IMAGES.python, AGENT_SANDBOX_IMAGE_BASH: TEST_IMAGES.bash },
  });
}

describe('bad input', function () {
  let box: ReturnType<typeof toolbox>;
  before(async function () {
    await requireEngine(this);
    box = toolbox();
  });
  after(async () => box?.dispose());

  it('wrong types, missing fields and huge strings name the field', async () => {
    const cases: [string, object, RegExp][] = [
      ['sandbox_exec', { command: 42 }, /command: Invalid input: expected string, received number/],
      ['sandbox_exec', {}, /give exactly one of command/],
      ['sandbox_fs_read', {}, /path: Invalid input/],
      ['sandbox_run', { code: 'x'.repeat(2 * 1024 * 1024) }, /code: Too big/],
      ['sandbox_fs_write', { files: [{ path: 'a', content: 'x', mode: 'rwx' }] }, /Unrecognized key/],
      ['sandbox_open', { scope: 'agent' }, /agent: scope "agent" needs agent/],
      ['sandbox_exec', { command: 'true', timeout_seconds: -5 }, /timeout_seconds: Too small/],
    ];
    for (const [tool, input, expected] of cases) {
      const answer = await box.call(tool as never, input);
      assert.equal(answer.ok, false);
      assert.match(answer.text, expected);
      assert.match(answer.text, /Next: fix these fields/);
    }
    observe(
      'input',
      'wrong types, missing fields, a 2 MiB code string, unknown keys (7 cases)',
      'refused; the answer names each bad field and says to fix it',
      cases.length + ' of ' + cases.length + ' refused with the field named',
    );
  });

  it('unknown and closed sessions', async () => {
    const unknown = await box.call('sandbox_exec', { sandbox_id: 'nobody-opened-this', command: 'true' });
    assert.match(unknown.text, /No sandbox "nobody-opened-this" is open[\s\S]*sandbox_open/);
    await box.call('sandbox_open', { session: 'short-lived', runtime: 'bash' });
    await box.call('sandbox_close', { sandbox_id: 'short-lived' });
    const closed = await box.call('sandbox_fs_list', { sandbox_id: 'short-lived' });
    assert.match(closed.text, /No sandbox "short-lived" is open/);
    observe(
      'input',
      'a call on an unknown session id / on a closed session',
      'refused, with how to open one',
      firstLine(unknown.text),
    );
  });

  it('concurrent calls on one session', async () => {
    await box.call('sandbox_open', { session: 'busy', runtime: 'bash' });
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        box.call('sandbox_exec', { sandbox_id: 'busy', command: `echo call-${i} > /tmp/c${i}; cat /tmp/c${i}` }),
      ),
    );
    answers.forEach((answer, i) => assert.match(answer.text, new RegExp(`call-${i}\\b`)));
    const writes = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        box.call('sandbox_fs_write', { sandbox_id: 'busy', files: [{ path: `p/${i}.txt`, content: String(i) }] }),
      ),
    );
    assert.ok(writes.every((answer) => answer.ok));
    assert.equal(
      (await box.call('sandbox_fs_list', { sandbox_id: 'busy', path: 'p' })).text.match(/\.txt/g)?.length,
      10,
    );
    observe(
      'input',
      '20 concurrent execs and 10 concurrent writes on one session',
      'each answered with its own output; nothing lost',
      '20 of 20 execs and 10 of 10 files correct',
    );
  });

  it('a session closed while a call runs', async () => {
    await box.call('sandbox_open', { session: 'pulled', runtime: 'bash' });
    const running = box.call('sandbox_exec', { sandbox_id: 'pulled', command: 'sleep 30; echo finished' });
    await new Promise((resolve) => setTimeout(resolve, 700));
    await box.call('sandbox_close', { sandbox_id: 'pulled' });
    const answer = await running;
    assert.doesNotMatch(answer.text, /finished/);
    assert.match(answer.text, /was closed while this call ran/);
    observe(
      'input',
      'sandbox_close while a sleep 30 runs in that session',
      'the running call ends before its sleep does, and says so',
      `${firstLine(answer.text)}; no "finished"`,
    );
  });

  it('the CLI: bad flags, unknown sessions, no engine', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-cli-bad-'));
    const flag = await cli(['run', '--memmory', '1g', '--code', 'print(1)']);
    assert.equal(flag.code, 2);
    assert.match(flag.stderr, /Unknown option '--memmory'/);
    const session = await cli(['exec', '--folder', folder, '--session', 'ghost', '--', 'true']);
    assert.equal(session.code, 125);
    assert.match(session.stderr, /No session named "ghost"/);
    const memory = await cli(['run', '--memory', 'lots', '--code', 'print(1)']);
    assert.equal(memory.code, 2);
    const json = await cli(['exec', '--json', '--folder', folder, '--session', 'ghost', '--', 'true']);
    assert.equal(JSON.parse(json.stdout).error.reason, 'session-not-found');
    observe(
      'input',
      'CLI: misspelled flag, bad size, unknown session (text and --json)',
      'exit 2 for usage, 125 for the sandbox, with the reason',
      `${flag.stderr.split('\n')[0]} / ${session.stderr.split('\n')[0]}`,
    );
  });
});
