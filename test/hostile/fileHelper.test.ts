// The session's file helper against the sandbox's own code, which runs as the same user: it can stop
// or kill the helper, take its requests, and write anything into its stdin and stdout. Whatever it
// does, the file tools must return the file's real bytes (the call then runs as one exec) or a clear
// error, never hang, and never keep more than their caps.
import assert from 'node:assert/strict';
import { requireEngine } from '../engine/harness';
import { withSeed, type Seeded } from '../seed';
import { observe } from './report';
import { toolbox } from './toolbox';

/** The helper's pid: the oldest process whose command line carries the helper script's first line. */
const HELPER_PID =
  'h=$(for p in /proc/[0-9]*; do [ "$(tr "\\0" " " < $p/cmdline 2>/dev/null | head -c 33)" = "sh -c # agent-sandbox file helper" ] && echo ${p#/proc/}; done | sort -n | head -1)';

/** Stops the helper, then (in the background) takes the next request off its stdin and answers with `forge`, given $n (the nonce). */
function impersonate(forge: string): string {
  return [
    HELPER_PID,
    '[ -n "$h" ] || { echo no helper; exit 1; }',
    'kill -STOP "$h"',
    `( exec 3</proc/$h/fd/0; IFS=" " read -r n o a d <&3; head -c $((a + d)) <&3 >/dev/null; ${forge} ) >/dev/null 2>&1 </dev/null &`,
    'echo "stopped $h"',
  ].join('\n');
}

const HELPERS_LEFT = `n=0; for p in /proc/[0-9]*; do [ "$(cut -d' ' -f3 $p/stat 2>/dev/null)" = Z ] && continue; [ "$(tr "\\0" " " < $p/cmdline 2>/dev/null | head -c 33)" = "sh -c # agent-sandbox file helper" ] && n=$((n+1)); done; echo "helpers=$n"`;

/** A whole-file read's content: what follows its headline line. */
function content(text: string): string {
  return text.slice(text.indexOf('\n') + 1);
}

function bytes(seeded: Seeded, length: number): Buffer {
  return Buffer.from(Array.from({ length }, () => seeded.below(256)));
}

describe('file helper', function () {
  before(async function () {
    await requireEngine(this);
  });

  /** A session with the helper running (one file call made), the file's bytes, and its base64. */
  async function session(seeded: Seeded) {
    const box = toolbox();
    const data = bytes(seeded, 16 * 1024 + seeded.below(1024));
    await box.call('sandbox_open', { runtime: 'bash' });
    const written = await box.call('sandbox_fs_write', {
      files: [{ path: 'real.bin', content: data.toString('base64'), encoding: 'base64' }],
    });
    assert.ok(written.ok, written.text);
    return { box, data, base64: data.toString('base64') };
  }

  async function readsBack(box: ReturnType<typeof toolbox>, base64: string): Promise<string> {
    const read = await box.call('sandbox_fs_read', { path: 'real.bin', encoding: 'base64', max_bytes: 1 << 16 });
    assert.ok(read.ok, read.text);
    // Exactly the file's bytes after the headline: an ending alone would pass bytes forged in front
    // of them whenever their length is a multiple of 3 (base64 stays aligned).
    assert.equal(content(read.text), base64, `the read returned other bytes: ${read.text.slice(0, 300)}`);
    return read.text;
  }

  /** After an attack: writes and reads still work, and at most one helper is left. */
  async function recovers(box: ReturnType<typeof toolbox>, seeded: Seeded): Promise<string> {
    const again = bytes(seeded, 1000).toString('base64');
    const write = await box.call('sandbox_fs_write', {
      files: [{ path: 'after.bin', content: again, encoding: 'base64' }],
    });
    assert.ok(write.ok, write.text);
    const read = await box.call('sandbox_fs_read', { path: 'after.bin', encoding: 'base64' });
    assert.equal(content(read.text), again, read.text.slice(0, 300));
    const left = await box.call('sandbox_exec', { command: HELPERS_LEFT });
    const count = Number(/helpers=(\d+)/.exec(left.text)?.[1]);
    assert.ok(count <= 1, `helpers left in the sandbox: ${left.text}`);
    return `helpers left: ${count}`;
  }

  it('a reply forged with the real nonce and a huge exit code: the call runs as one exec and reads the real bytes', () =>
    withSeed(async (seeded) => {
      const { box, base64 } = await session(seeded);
      try {
        const attack = await box.call('sandbox_exec', {
          command: impersonate('printf "%sodata%se99999999999999999999\\n" "$n" "$n" > /proc/$h/fd/1'),
        });
        assert.match(attack.text, /stopped \d+/);
        await readsBack(box, base64);
        const after = await recovers(box, seeded);
        observe(
          'file helper',
          'sandbox code stops the helper, takes its request and answers with the nonce and exit code 99999999999999999999',
          'reply refused, helper killed, the read runs as one exec and returns the real bytes',
          `real bytes returned; ${after}`,
        );
      } finally {
        await box.dispose();
      }
    }));

  it('an endless forged reply: refused at its cap, the real bytes are read, nothing grows without bound', () =>
    withSeed(async (seeded) => {
      const { box, base64 } = await session(seeded);
      try {
        const attack = await box.call('sandbox_exec', { command: impersonate('cat /dev/zero > /proc/$h/fd/1') });
        assert.match(attack.text, /stopped \d+/);
        await readsBack(box, base64);
        const after = await recovers(box, seeded);
        observe(
          'file helper',
          'sandbox code answers a read with endless zeros through the helper stdout',
          'reply refused once past its cap (max_bytes + 32), the read runs as one exec',
          `real bytes returned; ${after}`,
        );
      } finally {
        await box.dispose();
      }
    }));

  it('a helper that never answers (stopped): the call runs as one exec after the silence limit', () =>
    withSeed(async (seeded) => {
      const { box, base64 } = await session(seeded);
      try {
        const attack = await box.call('sandbox_exec', {
          command: `${HELPER_PID}\nkill -STOP "$h" && echo "stopped $h"`,
        });
        assert.match(attack.text, /stopped \d+/);
        await readsBack(box, base64);
        const after = await recovers(box, seeded);
        observe(
          'file helper',
          'sandbox code stops the helper (SIGSTOP) before a read',
          'after 10 s of silence the helper is killed and the read runs as one exec',
          `real bytes returned; ${after}`,
        );
      } finally {
        await box.dispose();
      }
    }));

  it('a helper killed by the sandbox: the next call starts another one and returns the real bytes', () =>
    withSeed(async (seeded) => {
      const { box, base64 } = await session(seeded);
      try {
        const attack = await box.call('sandbox_exec', {
          command: `${HELPER_PID}\nkill -KILL "$h" && echo "killed $h"`,
        });
        const killed = /killed (\d+)/.exec(attack.text)?.[1];
        assert.ok(killed, attack.text);
        await readsBack(box, base64);
        await readsBack(box, base64);
        const now = await box.call('sandbox_exec', { command: `${HELPER_PID}\necho "helper $h"` });
        const pid = /helper (\d+)/.exec(now.text)?.[1];
        assert.ok(pid && pid !== killed, `no new helper: ${now.text}`);
        const after = await recovers(box, seeded);
        observe(
          'file helper',
          'sandbox code kills the helper (kill -9)',
          'the next file call starts another helper (or runs as one exec) and returns the real bytes',
          `new helper ${pid} after ${killed}; ${after}`,
        );
      } finally {
        await box.dispose();
      }
    }));

  it('bytes forged into the idle helper stdout, and a request injected into its stdin, end that helper and never reach a result', () =>
    withSeed(async (seeded) => {
      const { box, base64 } = await session(seeded);
      const helperPid = async () =>
        /helper (\d+)/.exec((await box.call('sandbox_exec', { command: `${HELPER_PID}\necho "helper $h"` })).text)?.[1];
      try {
        const before = await helperPid();
        const forged = await box.call('sandbox_exec', {
          command: `${HELPER_PID}\nprintf 'forged-bytes' > /proc/$h/fd/1 && echo "forged $h"`,
        });
        assert.match(forged.text, /forged \d+/);
        const first = await readsBack(box, base64);
        assert.doesNotMatch(first, /forged-bytes/);
        const second = await helperPid();
        assert.ok(
          before && second && second !== before,
          `the helper that sent bytes out of turn is still used: ${before}, ${second}`,
        );
        const nonce = 'ab'.repeat(16);
        const args = "'/workspace/real.bin' '10' '0'";
        const injected = await box.call('sandbox_exec', {
          command: `${HELPER_PID}\nprintf '%s 2 ${args.length} 0\\n%s' ${nonce} "${args}" > /proc/$h/fd/0 && echo "injected $h"`,
        });
        assert.match(injected.text, /injected \d+/);
        // The host must see the helper's answer to the injected request while no request of its own is
        // open (bytes out of turn: that helper is killed). An answer that comes while a real request is
        // open is part of that reply's output: forging a reply is what sandbox code can do anyway (the
        // README says so); only that it reaches nothing on the host is claimed. So wait for the kill first.
        let gone = false;
        for (let attempt = 0; attempt < 50 && !gone; attempt++) {
          const alive = await box.call('sandbox_exec', {
            command: `[ -d /proc/${second} ] && [ "$(cut -d' ' -f3 /proc/${second}/stat)" != Z ] && echo alive || echo gone`,
          });
          gone = /gone/.test(alive.text);
          if (!gone) await new Promise((resolve) => setTimeout(resolve, 200));
        }
        assert.ok(gone, `the helper ${second} that answered an injected request out of turn still runs`);
        const after = await readsBack(box, base64);
        assert.doesNotMatch(after, new RegExp(nonce));
        const third = await helperPid();
        assert.ok(
          third && third !== second,
          `the helper that answered an injected request is still used: ${second}, ${third}`,
        );
        const left = await recovers(box, seeded);
        observe(
          'file helper',
          "sandbox code writes bytes into the idle helper's stdout, then a request (its own nonce) into its stdin",
          'bytes out of turn end that helper (a new one answers); results carry only the real bytes',
          `helpers ${before} → ${second} → ${third}; real bytes returned; ${left}`,
        );
      } finally {
        await box.dispose();
      }
    }));
});
