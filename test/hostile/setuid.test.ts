// Setuid and setgid bits planted in a read-write workspace folder: the sandbox user owns what it
// writes there, so a bit that sticks is a setuid program of the host user. Every case checks the
// host folder's modes after the attack.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { requireEngine } from '../engine/harness';
import { giveToSandbox, setuidPaths, writableFolder } from './hostFolder';
import { observe } from './report';
import { FCHMODAT2, IO_URING, OPENAT2, SETUID_TAR, TMPFILE } from './setuidScripts';
import { firstLine, toolbox, type ToolPath } from './toolbox';

type Box = ReturnType<typeof toolbox>;

/** A Python program on stdin, then `then` when it succeeded (a heredoc's end marker must stand alone on its line). */
const py = (script: string, then?: string) => `python3 - <<'EOF'${then ? ` && ${then}` : ''}\n${script}\nEOF`;

const ATTACKS: { attack: string; command: string }[] = [
  { attack: 'chmod 4755 on a file', command: 'echo "#!/bin/sh" > chmod-file && chmod 4755 chmod-file' },
  {
    attack: 'chmod g+s and u+s on a directory',
    command: 'mkdir -p chmod-dir && chmod g+s chmod-dir; chmod u+s chmod-dir',
  },
  { attack: 'install -m 4755', command: 'install -m 4755 /bin/true installed' },
  {
    attack: 'python os.open(..., O_CREAT, 0o4755)',
    command: py("import os\nos.close(os.open('via-open', os.O_CREAT | os.O_WRONLY, 0o4755))"),
  },
  {
    attack: 'python os.fchmod(fd, 0o6755)',
    command: py("import os\nfd = os.open('via-fchmod', os.O_CREAT | os.O_WRONLY, 0o644)\nos.fchmod(fd, 0o6755)"),
  },
  { attack: 'python os.mkdir(..., 0o2755)', command: py("import os\nos.mkdir('via-mkdir', 0o2755)") },
  {
    attack: 'python os.mknod(S_IFREG | 0o4755)',
    command: py("import os, stat\nos.mknod('via-mknod', stat.S_IFREG | 0o4755)"),
  },
  { attack: 'openat2 with O_CREAT and mode 04755', command: py(OPENAT2) },
  { attack: 'fchmodat2 to 04755', command: py(FCHMODAT2) },
  { attack: 'O_TMPFILE with mode 04755, then linked in', command: py(TMPFILE) },
  { attack: 'io_uring IORING_OP_OPENAT with mode 04755', command: py(IO_URING) },
  {
    attack: 'tar -xp of a setuid member and a setgid directory',
    command: py(SETUID_TAR, 'tar -xpf /tmp/setuid.tar && ls -l'),
  },
  {
    attack: 'cp -p of setuid programs from the image (/usr/bin/su, /bin/mount)',
    command: 'cp -p /usr/bin/su su-copy; cp -p /bin/mount mount-copy; ls -l su-copy mount-copy',
  },
  {
    attack: 'cp -p of a setuid file of its own made in /tmp',
    command: 'cp /bin/true /tmp/own && chmod 4755 /tmp/own; cp -p /tmp/own own-copy; ls -l /tmp/own own-copy',
  },
];

for (const via of ['tools', 'cli'] as ToolPath[])
  describe(`setuid and setgid bits in a read-write workspace (${via})`, function () {
    let box: Box;
    let folder: string;

    before(async function () {
      await requireEngine(this);
      folder = writableFolder('agent-sandbox-setuid-');
      box = toolbox({ folder, via, settings: { workspaceAccess: 'rw' } });
      const opened = await box.call('sandbox_open', { session: 'suid', runtime: 'python' });
      assert.ok(opened.ok, opened.text);
    });

    after(async () => {
      await box?.dispose();
      // Setuid files must not outlive the test in /tmp either.
      if (folder) rmSync(folder, { recursive: true, force: true });
    });

    ATTACKS.forEach(({ attack, command }, index) => {
      it(attack, async () => {
        // Each attack in a folder of its own, so that one case's result never shows in another's.
        const dir = `case-${index}`;
        const answer = await box.call('sandbox_exec', {
          sandbox_id: 'suid',
          command: `mkdir ${dir} && cd ${dir} && ${command}`,
        });
        const planted = setuidPaths(join(folder, dir));
        const said = answer.text
          .split('\n')
          .filter((line) =>
            /created|changed|linked|not permitted|not implemented|cross-device|rws|rwS|exit code/i.test(line),
          )
          .slice(0, 3)
          .join(' · ');
        observe(
          `setuid (${via})`,
          attack,
          'no setuid/setgid bit on any host file or directory',
          planted.length
            ? `host has ${planted.join(', ')}; ${said}`
            : `host folder clean; ${said || firstLine(answer.text)}`,
          planted.length === 0,
        );
        assert.deepEqual(planted, [], `the host folder has setuid/setgid entries after: ${attack}`);
      });
    });

    it('after every attack, nothing anywhere in the folder carries the bits', () => {
      const planted = setuidPaths(folder);
      observe(
        `setuid (${via})`,
        'all of the above, the whole folder checked',
        'no setuid/setgid bit anywhere',
        planted.length ? `host has ${planted.join(', ')}` : 'host folder clean',
        planted.length === 0,
      );
      assert.deepEqual(planted, []);
    });

    it('ordinary modes still work: chmod 755, mkdir, umask-masked creation', async () => {
      const answer = await box.call('sandbox_exec', {
        sandbox_id: 'suid',
        command: 'echo ok > plain.sh && chmod 755 plain.sh && mkdir -p made/deeper && chmod 700 made && echo done',
      });
      assert.match(answer.text, /done/);
      const mode = statSync(join(folder, 'plain.sh')).mode & 0o7777;
      const dirMode = statSync(join(folder, 'made')).mode & 0o7777;
      observe(
        `setuid (${via})`,
        'chmod 755 and mkdir in the same session',
        'work as usual',
        `plain.sh ${mode.toString(8)}, made ${dirMode.toString(8)}`,
        mode === 0o755 && dirMode === 0o700,
      );
      assert.equal(mode, 0o755);
      assert.equal(dirMode, 0o700);
    });

    it('a setuid bit that appears during the session anyway is stripped when it closes, and reported', async () => {
      // Stands for a bit the filter did not stop (an engine that ignored the profile, a call nobody thought of).
      const planted = join(folder, 'planted-during-session');
      writeFileSync(planted, '#!/bin/sh\n');
      giveToSandbox(planted);
      chmodSync(planted, 0o4755);
      const closed = await box.call('sandbox_close', { sandbox_id: 'suid' });
      const mode = statSync(planted).mode & 0o7777;
      const reported = /planted-during-session/.test(closed.text);
      observe(
        `setuid (${via})`,
        'setuid file present in the folder when the session closes',
        'the bit is stripped from inside the sandbox and the close says so',
        `mode after close ${mode.toString(8)}; ${reported ? 'reported' : 'not reported'}: ${firstLine(closed.text)}`,
        (mode & 0o6000) === 0 && reported,
      );
      assert.equal(mode & 0o6000, 0, 'the sweep stripped the bit');
      assert.ok(reported, `the close reports it: ${closed.text}`);
    });
  });

describe("the setuid sweep leaves the user's own bits alone", function () {
  before(async function () {
    await requireEngine(this);
  });

  it("an older setuid file of the user and setgid inherited from the user's setgid folder stay", async () => {
    const folder = writableFolder('agent-sandbox-setuid-own-');
    const tool = join(folder, 'tool');
    const shared = join(folder, 'shared');
    writeFileSync(tool, '#!/bin/sh\n');
    mkdirSync(shared);
    giveToSandbox(folder);
    chmodSync(tool, 0o4755);
    chmodSync(shared, 0o2775);
    // ctime has whole-second resolution in the sweep: the session starts in a later second than the user's chmod.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const box = toolbox({ folder, settings: { workspaceAccess: 'rw' } });
    try {
      const made = await box.call('sandbox_exec', {
        command: 'mkdir shared/sub && echo x > shared/sub/f && echo made',
      });
      assert.match(made.text, /made/);
      const closed = await box.call('sandbox_close', {});
      const modes = [tool, shared, join(shared, 'sub')].map((path) => (statSync(path).mode & 0o7777).toString(8));
      const kept = modes[0] === '4755' && modes[1] === '2775' && (statSync(join(shared, 'sub')).mode & 0o2000) !== 0;
      const quiet = !/setuid\/setgid bit was removed/.test(closed.text);
      observe(
        'setuid',
        "user's own setuid file and setgid folder (set before the session), subfolder made inside",
        'left as they are (shared/sub inherits setgid from the kernel); the sweep reports nothing',
        `tool ${modes[0]}, shared ${modes[1]}, shared/sub ${modes[2]}; ${quiet ? 'nothing reported' : 'REPORTED'}`,
        kept && quiet,
      );
      assert.ok(kept, modes.join(' '));
      assert.ok(quiet, closed.text);
    } finally {
      await box.dispose();
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
