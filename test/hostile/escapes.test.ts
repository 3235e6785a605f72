// A call that times out takes everything it started with it: also processes that cleared their
// environment (env -i), left the session (setsid) or were orphaned by a double fork. Processes from
// earlier calls, which the agent meant to keep, stay.
import assert from 'node:assert/strict';
import { requireEngine } from '../engine/harness';
import { observe } from './report';
import { toolbox, type ToolPath } from './toolbox';

/** Command lines of the session's processes, read from /proc (the images have no ps). */
const PROCESSES = 'for f in /proc/[0-9]*/cmdline; do tr "\\0" " " < "$f" 2>/dev/null; echo; done';

for (const via of ['tools', 'cli'] as ToolPath[])
  describe(`processes that try to outlive a timed-out call (${via})`, function () {
    let box: ReturnType<typeof toolbox>;
    before(async function () {
      await requireEngine(this);
      box = toolbox({ via });
      await box.call('sandbox_open', { session: 'escapes', runtime: 'bash' });
    });
    after(async () => box?.dispose());

    it('env -i, setsid and a double fork are all killed at the timeout; a server from an earlier call stays', async () => {
      const kept = await box.call('sandbox_exec', {
        sandbox_id: 'escapes',
        command: 'nohup sleep 3001 >/dev/null 2>&1 & echo started',
      });
      assert.ok(kept.ok, kept.text);
      const answer = await box.call('sandbox_exec', {
        sandbox_id: 'escapes',
        timeout_seconds: 3,
        // Output sent elsewhere, so the call's output stream ends and nothing but the tree itself tells what belongs to the call.
        command:
          "env -i sleep 3002 >/dev/null 2>&1 & setsid sh -c 'exec env -i sleep 3003' >/dev/null 2>&1 & sh -c '(env -i sleep 3004 >/dev/null 2>&1 &) ; true'; sleep 3005",
      });
      assert.match(answer.text, /timed out|killed after 3 s/i);
      const left = await box.call('sandbox_exec', { sandbox_id: 'escapes', command: PROCESSES });
      assert.ok(left.ok && /exit code 0/.test(left.text), `the session is still usable: ${left.text}`);
      const survivors = ['3002', '3003', '3004', '3005'].filter((n) => new RegExp(`sleep ${n}\\b`).test(left.text));
      const serverKept = /sleep 3001\b/.test(left.text);
      observe(
        `processes (${via})`,
        'a timed-out call whose children escape with env -i, setsid and a double fork',
        'all of them killed; a background process from an earlier call kept',
        survivors.length
          ? `still running: sleep ${survivors.join(', sleep ')}`
          : `none left; earlier server ${serverKept ? 'kept' : 'gone'}`,
        survivors.length === 0 && serverKept,
      );
      assert.deepEqual(survivors, [], left.text);
      assert.ok(serverKept, 'the server started by an earlier call still runs');
      assert.match(answer.text, /Stopped with the call: \d+ processes/);
    });

    it('processes that change pid in a loop (fork, parent exits) are killed at the timeout too', async () => {
      // Each hopper forks and exits in a tight loop, so its pid changes faster than /proc can be read; it stops by itself after 20 s.
      const hopper =
        "import os, sys, time\nend = time.time() + 20\nwhile time.time() < end:\n    if os.fork():\n        os._exit(0)\n    if int(time.time() * 4) % 2 == 0:\n        open(sys.argv[1], 'a').write('x')\n";
      await box.call('sandbox_fs_write', { sandbox_id: 'escapes', files: [{ path: 'hopper.py', content: hopper }] });
      const answer = await box.call('sandbox_exec', {
        sandbox_id: 'escapes',
        timeout_seconds: 3,
        command: 'for i in 1 2 3 4; do python3 hopper.py /tmp/mark$i; done; sleep 100',
      });
      assert.match(answer.text, /timed out|killed after 3 s/i);
      const before = await box.call('sandbox_exec', {
        sandbox_id: 'escapes',
        command: 'cat /tmp/mark* 2>/dev/null | wc -c',
      });
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const after = await box.call('sandbox_exec', {
        sandbox_id: 'escapes',
        command: 'cat /tmp/mark* 2>/dev/null | wc -c; ' + PROCESSES,
      });
      const grew =
        Number(/\d+/.exec(after.text.split('stdout:\n')[1] ?? '')?.[0]) -
        Number(/\d+/.exec(before.text.split('stdout:\n')[1] ?? '')?.[0]);
      const alive = (after.text.match(/hopper\.py/g) ?? []).length;
      observe(
        `processes (${via})`,
        'hoppers that fork and exit in a loop, in a timed-out call',
        'all killed: their marks stop growing',
        alive || grew > 0 ? `still running: ${alive} hoppers, marks grew by ${grew}` : 'none left, marks still',
        alive === 0 && grew <= 0,
      );
      assert.ok(alive === 0 && grew <= 0, `hoppers alive: ${alive}, marks grew by ${grew}: ${after.text}`);
    });
  });
