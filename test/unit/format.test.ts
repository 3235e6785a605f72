import assert from 'node:assert/strict';
import { z } from 'zod';
import type { ExecResult, SessionInfo } from '../../src/core/engine/engine';
import { SandboxError } from '../../src/core/errors';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { formatDuration, formatError, formatExecResult, formatSession } from '../../src/core/tools/format';
import { formatClose } from '../../src/core/tools/specs/close';
import { execInputSchema } from '../../src/core/tools/specs/exec';
import { formatDelete } from '../../src/core/tools/specs/fsDelete';
import { formatList } from '../../src/core/tools/specs/fsList';
import { formatRead } from '../../src/core/tools/specs/fsRead';
import { formatWrite } from '../../src/core/tools/specs/fsWrite';
import { MiB } from '../../src/core/spec/units';

function execResult(overrides: Partial<ExecResult> = {}): ExecResult {
  return {
    outcome: 'ok',
    exitCode: 0,
    stdout: '',
    stderr: '',
    stdoutBytes: 0,
    stderrBytes: 0,
    stdoutTruncated: false,
    stderrTruncated: false,
    durationMs: 312,
    notices: [],
    ...overrides,
  };
}

const session = { sandboxId: 'default', engine: 'docker' };
const countTokens = async (text: string) => Math.ceil(text.length / 4);
const numberedLines = (count: number, prefix: string) =>
  Array.from({ length: count }, (_, i) => `${prefix} line ${i + 1}`).join('\n') + '\n';

describe('tool result text', () => {
  describe('formatExecResult', () => {
    it('starts with the exit code, duration, engine and sandbox, then the output', async () => {
      const text = await formatExecResult(execResult({ stdout: 'hello\n', stdoutBytes: 6 }), session);
      assert.equal(text, 'exit code 0 · 0.3 s · docker · sandbox default\nstdout:\nhello');
    });

    it('shows both streams, notices and the hint on failure', async () => {
      const result = execResult({
        outcome: 'error',
        exitCode: 2,
        stdout: 'partial\n',
        stderr: 'Traceback...\nValueError: bad\n',
        hint: 'The command exited with code 2. Read stderr, fix the cause and run it again.',
        notices: ['python:3.12-slim was not pulled; a local image was used.'],
      });
      const text = await formatExecResult(result, { engine: 'docker', image: 'python:3.12-slim' });
      assert.equal(
        text,
        [
          'failed · exit code 2 · 0.3 s · docker · one-off sandbox · python:3.12-slim',
          'Note: python:3.12-slim was not pulled; a local image was used.',
          'Next: The command exited with code 2. Read stderr, fix the cause and run it again.',
          'stdout:',
          'partial',
          'stderr:',
          'Traceback...\nValueError: bad',
        ].join('\n'),
      );
    });

    it('says when there was no output and omits empty streams', async () => {
      assert.equal(
        await formatExecResult(execResult(), session),
        'exit code 0 · 0.3 s · docker · sandbox default\n(no output)',
      );
      const onlyStderr = await formatExecResult(execResult({ stderr: 'warn\n' }), session);
      assert.ok(!onlyStderr.includes('stdout:') && onlyStderr.endsWith('stderr:\nwarn'));
    });

    it('names timeouts, out-of-memory kills and signals, and notes engine truncation', async () => {
      const timeout = await formatExecResult(
        execResult({ outcome: 'timeout', exitCode: 137, durationMs: 120_004, hint: 'raise the timeout' }),
        session,
      );
      assert.match(
        timeout,
        /^timed out · exit code 137 · 2 min 0 s · docker · sandbox default\nNext: raise the timeout\n\(no output\)$/,
      );
      const oom = await formatExecResult(execResult({ outcome: 'oom', exitCode: 137, durationMs: 2500 }), session);
      assert.match(oom, /^out of memory · exit code 137 · 2\.5 s/);
      const segv = await formatExecResult(
        execResult({ outcome: 'signal', exitCode: 139, signal: 'SIGSEGV', durationMs: 40 }),
        session,
      );
      assert.match(segv, /^killed by SIGSEGV · exit code 139 · 40 ms/);
      const cancelled = await formatExecResult(execResult({ outcome: 'cancelled', exitCode: null }), session);
      assert.match(cancelled, /^cancelled · 0\.3 s/);
      const truncated = await formatExecResult(
        execResult({ stdout: 'aaaa\n[stdout truncated: …]', stdoutBytes: 5 * MiB, stdoutTruncated: true }),
        session,
      );
      assert.match(truncated.split('\n')[0]!, /stdout truncated \(5 MiB in all\)$/);
    });

    it('returns the full text when it fits the budget', async () => {
      const result = execResult({ stdout: numberedLines(10, 'out') });
      const full = await formatExecResult(result, session);
      assert.equal(
        await formatExecResult(result, session, { maxChars: 10_000, tokenBudget: 5_000, countTokens }),
        full,
      );
    });

    it('keeps the head and tail of long output within a token budget, with the status line and the hint', async () => {
      const result = execResult({
        outcome: 'error',
        exitCode: 1,
        stdout: numberedLines(5000, 'out'),
        stderr: numberedLines(3000, 'err'),
        hint: 'Read stderr, fix the cause and run it again.',
      });
      let calls = 0;
      const text = await formatExecResult(result, session, {
        tokenBudget: 1000,
        countTokens: async (t) => (calls++, countTokens(t)),
      });
      assert.ok((await countTokens(text)) <= 1000, `${await countTokens(text)} tokens`);
      assert.ok(calls <= 7, `${calls} countTokens calls`);
      const lines = text.split('\n');
      assert.equal(
        lines[0],
        'failed · exit code 1 · 0.3 s · docker · sandbox default · output shortened to fit the context',
      );
      assert.equal(lines[1], 'Next: Read stderr, fix the cause and run it again.');
      for (const expected of ['out line 1', 'out line 5000', 'err line 1', 'err line 3000'])
        assert.ok(lines.includes(expected), expected);
      assert.match(
        text,
        /stdout:\nout line 1\n[\s\S]*\[… [\d,]+ characters \([\d,]+ lines\) of stdout cut to fit the context; redirect the full output to a file and read it in parts with sandbox_fs_read \(offset, max_bytes\) …\]\n[\s\S]*out line 5000\nstderr:/,
      );
      assert.match(text, /of stderr cut to fit the context/);
      // Used well: most of the budget goes to output.
      assert.ok(text.length > 3000, `${text.length} characters`);
    });

    it('cuts only the long stream when the other is short, and honours maxChars', async () => {
      const result = execResult({ stdout: 'x'.repeat(50_000), stderr: 'short warning\n' });
      const text = await formatExecResult(result, session, { maxChars: 2000 });
      assert.ok(text.length <= 2000 && text.length > 1500, `${text.length}`);
      assert.ok(text.endsWith('stderr:\nshort warning'));
      assert.match(text, /\[… [\d,]+ characters \(1 line\) of stdout cut/);
    });

    it('never splits a character made of two UTF-16 units', async () => {
      const result = execResult({ stdout: `a${'😀'.repeat(5000)}` });
      for (let maxChars = 1000; maxChars < 1010; maxChars++) {
        const text = await formatExecResult(result, session, { maxChars });
        assert.match(text, /😀\n\[… /);
        assert.ok(
          !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text),
          `maxChars ${maxChars}`,
        );
      }
    });

    it('keeps the status line and the hint even when nothing else fits', async () => {
      const result = execResult({ outcome: 'error', exitCode: 1, stdout: 'y'.repeat(10_000), hint: 'Fix it.' });
      const text = await formatExecResult(result, session, { tokenBudget: 10 });
      const lines = text.split('\n');
      assert.match(lines[0]!, /^failed · exit code 1/);
      assert.ok(lines.slice(0, 4).includes('Next: Fix it.'), text);
      assert.ok(!text.includes('yyyy'));
    });

    it('estimates 4 characters a token when no countTokens is given', async () => {
      const text = await formatExecResult(execResult({ stdout: 'z'.repeat(40_000) }), session, { tokenBudget: 500 });
      assert.ok(text.length <= 2000, `${text.length}`);
    });
  });

  describe('formatSession', () => {
    const info: SessionInfo = {
      id: '4f1c2d3e4f5a6b7c',
      name: 'default',
      engine: 'docker',
      mode: 'code',
      runtime: 'python',
      image: 'python:3.12-slim',
      spec: resolveSpec(),
      workspaceAccess: 'ro',
      workspaceFolder: '/home/me/project',
      scope: { kind: 'workspace' },
      network: false,
      createdAt: '2025-01-02T03:04:05.000Z',
      state: 'running',
      notices: ['Network was asked for but the user does not allow it.'],
    };

    it('gives the sandbox_id, runtime, image, limits, workspace access, network and notices', () => {
      assert.equal(
        formatSession(info, true),
        [
          'Opened new sandbox "default": pass sandbox_id "default" to the other sandbox tools, or omit sandbox_id.',
          'runtime python · image python:3.12-slim · engine docker · running',
          'limits: 512 MiB memory (no swap), 1 CPU, 256 processes, 120 s per call, stdout 1 MiB and stderr 1 MiB per call, files up to 10 MiB, 1000 files per operation, disk 256 MiB and 100,000 files per writable place (/tmp, $HOME, a private /workspace; kept in memory, so they count toward the memory)',
          'workspace access: ro (the workspace folder /home/me/project is mounted read-only at /workspace; /tmp and $HOME are writable)',
          'network: off (installing packages from the internet will fail)',
          'Note: Network was asked for but the user does not allow it.',
        ].join('\n'),
      );
    });

    it('uses the session name as sandbox_id and says when it was reused', () => {
      const text = formatSession(
        { ...info, name: 'build', workspaceAccess: 'none', network: true, notices: [] },
        false,
      );
      assert.match(text, /^Using open sandbox "build": pass sandbox_id "build" to the other sandbox tools\.\n/);
      assert.match(text, /workspace access: none \(\/workspace is private to the sandbox\)\nnetwork: on$/);
      assert.match(
        formatSession({ ...info, workspaceAccess: 'rw' }, false),
        /rw \(the workspace folder \/home\/me\/project is mounted read-write at \/workspace: changes there change the user's files\)/,
      );
    });
  });

  describe('file results', () => {
    it('formatWrite lists the files written', () => {
      assert.equal(
        formatWrite({
          files: [
            { path: '/workspace/a.py', bytes: 300 },
            { path: '/workspace/data/b.csv', bytes: 2048 },
          ],
        }),
        'Wrote 2 files (2.3 KiB):\n/workspace/a.py  300 bytes\n/workspace/data/b.csv  2 KiB',
      );
      const many = formatWrite({
        files: Array.from({ length: 150 }, (_, i) => ({ path: `/workspace/f${i}`, bytes: 1 })),
      });
      assert.ok(many.endsWith('… and 50 more'));
    });

    it('formatRead shows the content, its encoding and where the next part starts', async () => {
      assert.equal(
        await formatRead({ path: '/workspace/a.txt', content: 'hi\n', encoding: 'utf8', size: 3, truncated: false }),
        '/workspace/a.txt · 3 bytes · utf8\nhi\n',
      );
      const cutText = await formatRead({
        path: '/workspace/big.log',
        content: 'x'.repeat(1024),
        encoding: 'utf8',
        size: 4 * MiB,
        truncated: true,
      });
      assert.match(
        cutText,
        /^\/workspace\/big\.log · 4 MiB · utf8\nShown: 1 KiB \(bytes 0 to 1,024\) of 4 MiB\. Read the next part with sandbox_fs_read offset 1024, .*\nx{1024}$/,
      );
      const part = await formatRead({
        path: '/workspace/big.log',
        content: 'z'.repeat(10),
        encoding: 'utf8',
        size: 4 * MiB,
        offset: 1024,
        truncated: true,
      });
      assert.match(
        part,
        /^\/workspace\/big\.log · 4 MiB · utf8 · from byte 1,024\nShown: 10 bytes \(bytes 1,024 to 1,034\)/,
      );
      assert.match(
        await formatRead({ path: '/workspace/e', content: '', encoding: 'utf8', size: 0, truncated: false }),
        /\(empty file\)$/,
      );
    });

    it('formatRead describes a binary file (type, size, hex preview) instead of returning its bytes', async () => {
      const png = Buffer.concat([Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'), Buffer.alloc(3000, 7)]);
      const text = await formatRead({
        path: '/workspace/p.png',
        content: png.toString('base64'),
        encoding: 'base64',
        size: 5 * MiB,
        truncated: true,
      });
      assert.match(text, /^\/workspace\/p\.png · 5 MiB · PNG image, not text\n/);
      assert.match(text, /encoding "base64"/);
      assert.match(
        text,
        /\n00000000 {2}89 50 4e 47 0d 0a 1a 0a 00 00 00 0d 49 48 44 52 {2}\.PNG\.\.\.\.\.\.\.\.IHDR\n/,
      );
      assert.ok(text.length < 2_000, `${text.length} characters`);
      // Asked for base64, the bytes come back (within the budget, whole groups of four).
      const bytes = await formatRead(
        {
          path: '/workspace/b.bin',
          content: 'QUJD'.repeat(50_000),
          encoding: 'base64',
          size: 150_000,
          truncated: false,
        },
        { maxChars: 1_000 },
        false,
      );
      const shown = bytes.split('\n').at(-1)!;
      assert.ok(shown.length <= 1_000 && shown.length % 4 === 0, 'whole base64 groups');
    });

    it('formatRead keeps the head of a file within the budget and says where to read on', async () => {
      const content = 'y'.repeat(200_000);
      const text = await formatRead(
        { path: '/workspace/one.line', content, encoding: 'utf8', size: 5 * MiB, truncated: true },
        { maxChars: 48_000, tokenBudget: 2_000 },
      );
      assert.ok(text.length <= 8_000, `${text.length} characters`);
      const next = /offset (\d+)/.exec(text)?.[1];
      assert.match(
        text,
        /^\/workspace\/one\.line · 5 MiB · utf8\nShown: [\d.]+ KiB \(bytes 0 to [\d,]+\) of 5 MiB, cut to fit the context\./,
      );
      assert.equal(Number(next), text.split('\n').at(-1)!.length, 'the next offset is right after what was shown');
      assert.equal(
        await formatRead(
          { path: '/workspace/e', content: '', encoding: 'utf8', size: 0, truncated: false },
          { maxChars: 10 },
        ),
        '/workspace/e · 0 bytes · utf8\n(empty file)',
      );
    });

    it('formatList gives one aligned line per entry, relative to the listed directory', async () => {
      const text = await formatList(
        {
          entries: [
            { path: '/workspace/src', type: 'directory', size: 4096, mtime: '2025-01-02T03:04:05.123Z' },
            { path: '/workspace/src/main.py', type: 'file', size: 1536, mtime: '2025-01-02T03:04:06Z' },
            { path: '/workspace/link', type: 'symlink', size: 7, mtime: '2025-01-02T03:04:07Z' },
          ],
          truncated: false,
        },
        '/workspace/',
      );
      assert.equal(
        text,
        [
          '/workspace: 3 entries (type, size, modified UTC, path)',
          'dir   -        2025-01-02 03:04:05  src/',
          'file  1.5 KiB  2025-01-02 03:04:06  src/main.py',
          'link  7 bytes  2025-01-02 03:04:07  link',
        ].join('\n'),
      );
      assert.equal(await formatList({ entries: [], truncated: false }), '/workspace is empty.');
      const truncated = await formatList(
        { entries: [{ path: '/workspace/data/a', type: 'file', size: 1, mtime: 'bad' }], truncated: true },
        '/workspace/data',
      );
      assert.match(truncated, /^\/workspace\/data: 1 entry \(the listing stopped at the file count cap\)/);
      assert.match(truncated, /List a subdirectory or use a smaller depth/);
    });

    it('formatList keeps a long listing within the budget, headline first, and says how many are not shown', async () => {
      const entries = Array.from({ length: 1000 }, (_, i) => ({
        path: `/workspace/deep/${'n'.repeat(80)}-${i}.txt`,
        type: 'file' as const,
        size: i,
        mtime: '2025-01-02T03:04:05Z',
      }));
      const text = await formatList({ entries, truncated: true }, '/workspace', {
        maxChars: 48_000,
        tokenBudget: 4_000,
      });
      assert.ok(text.length <= 16_000, `${text.length} characters`);
      const shown = text.split('\n').filter((line) => line.startsWith('file')).length;
      assert.ok(shown > 10 && shown < 1000, `${shown} entries shown`);
      assert.match(text.split('\n')[1]!, new RegExp(`^Only the first ${shown} of 1,000 entries are shown`));
    });

    it('formatDelete and formatClose say what happened', () => {
      assert.equal(formatDelete({ path: '/workspace/x', deleted: true }), 'Deleted /workspace/x.');
      assert.equal(
        formatDelete({ path: '/workspace/x', deleted: false }),
        'Nothing to delete: /workspace/x does not exist.',
      );
      assert.match(formatClose('build'), /^Closed sandbox "build"/);
      assert.equal(formatClose('build', false), 'No sandbox "build" was open; nothing to close.');
    });
  });

  describe('formatError', () => {
    it('adds the hint of a SandboxError as Next', () => {
      const error = new SandboxError(
        'file-not-found',
        'No file /workspace/a.py.',
        'List the directory with sandbox_fs_list.',
      );
      assert.equal(formatError(error), 'No file /workspace/a.py.\nNext: List the directory with sandbox_fs_list.');
      assert.equal(formatError(new SandboxError('aborted', 'Cancelled.')), 'Cancelled.');
    });

    it('gives other errors their message', () => {
      assert.equal(formatError(new Error('boom')), 'boom');
      assert.equal(formatError('plain'), 'plain');
    });

    it('lists invalid input fields from zod', () => {
      const parsed = execInputSchema.safeParse({ command: 'ls', cmd: ['ls'] });
      assert.equal(parsed.success, false);
      const text = formatError(parsed.error);
      assert.match(text, /^The input is not valid:\n.*give exactly one of command/s);
      assert.match(text, /\nNext: fix these fields and call the tool again\.$/);
      assert.ok(z.ZodError);
    });
  });

  it('formatDuration uses the unit a person would', () => {
    assert.deepEqual([45, 312, 9_950, 42_400, 125_000].map(formatDuration), [
      '45 ms',
      '0.3 s',
      '9.9 s',
      '42 s',
      '2 min 5 s',
    ]);
  });
});
