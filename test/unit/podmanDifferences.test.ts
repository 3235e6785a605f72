import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { Output } from '../../src/cli/output';
import { containerCallStatus } from '../../src/engines/docker/engineCalls';
import { OomKillCounts, parseOomKills } from '../../src/engines/docker/oomKills';
import { unenforcedLimitsProblem } from '../../src/engines/docker/seccompProfile';

describe('Podman: what its API says differently', () => {
  it('reads "container state improper" as the 409 of a container that is not running', () => {
    const podman = {
      statusCode: 500,
      json: { message: 'can only create exec sessions on running containers: container state improper' },
    };
    assert.equal(containerCallStatus(podman), 409);
    assert.equal(containerCallStatus({ statusCode: 500, json: { message: 'something else' } }), 500);
    assert.equal(containerCallStatus({ statusCode: 404 }), 404);
    assert.equal(containerCallStatus(undefined), undefined);
  });

  it("reads the kernel's OOM kill count from cgroup v2 and v1, and says when it grew", () => {
    assert.equal(parseOomKills('low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n'), 1);
    assert.equal(parseOomKills('oom_kill_disable 0\nunder_oom 0\noom_kill 2\n'), 2);
    assert.equal(parseOomKills('nothing here'), undefined);
    const counts = new OomKillCounts();
    assert.equal(counts.grew('a', 0), false);
    assert.equal(counts.grew('a', 1), true);
    assert.equal(counts.grew('a', 1), false, 'the same kill counts once');
    assert.equal(counts.grew('b', 2), true, 'a first reading counts kills from before');
    assert.equal(counts.grew('b', undefined), false);
  });

  it('refuses a rootless engine on cgroup v1, where no memory, process or CPU limit holds', () => {
    // As Podman 4.3.1's /info says it, rootless and rootful.
    const rootless = { CgroupVersion: '1', SecurityOptions: ['name=seccomp,profile=default', 'name=rootless'] };
    assert.match(unenforcedLimitsProblem(rootless) ?? '', /rootless on cgroup v1/);
    assert.equal(unenforcedLimitsProblem({ ...rootless, CgroupVersion: '2' }), undefined, 'cgroup v2 enforces them');
    assert.equal(
      unenforcedLimitsProblem({ CgroupVersion: '1', SecurityOptions: ['name=seccomp,profile=default'] }),
      undefined,
    );
    assert.equal(unenforcedLimitsProblem('not an answer'), undefined);
  });

  it('agent-sandbox engine says what differs on this engine, in text as in JSON', () => {
    const stdout = new PassThrough();
    new Output(false, stdout, new PassThrough()).engine({
      kind: 'docker',
      product: 'Podman Engine',
      version: '4.3.1',
      apiVersion: '1.41',
      endpoint: 'unix:///run/podman/podman.sock',
      os: 'linux/amd64',
      differences: ['the number of files in a writable place (limits.inodes) is not capped'],
    });
    assert.match(
      String(stdout.read()),
      /^Podman Engine 4\.3\.1 .*\nOn this engine, the number of files in a writable place \(limits\.inodes\) is not capped\.\n$/,
    );
  });
});
