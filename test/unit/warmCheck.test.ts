// What a claimant accepts of a container a ready file names (warmCheck.ts): a warm container of this
// user and configuration with the claimant's own settings, and nothing that differs in any of them.
import assert from 'node:assert/strict';
import type Docker from 'dockerode';
import { LABEL } from '../../src/engines/docker/labels';
import { ONE_SHOT_RUNNER } from '../../src/engines/docker/oneShot';
import { warmContainerMismatch, type WarmExpectation } from '../../src/engines/docker/warmCheck';

const KEY = 'c'.repeat(64);
const expected: Docker.ContainerCreateOptions = {
  Image: 'agent-sandbox/bash:bookworm',
  User: '1000:1000',
  WorkingDir: '/workspace',
  Env: ['HOME=/home/sandbox'],
  Labels: { [LABEL.managed]: '1' },
  NetworkDisabled: true,
  HostConfig: {
    Init: true,
    CapDrop: ['ALL'],
    SecurityOpt: ['no-new-privileges'],
    Privileged: false,
    ReadonlyRootfs: true,
    Tmpfs: { '/tmp': 'rw,size=1g' },
    Mounts: [],
    RestartPolicy: { Name: 'no' },
    AutoRemove: false,
  },
};
const expectation: WarmExpectation = {
  name: 'agent-sandbox-warm-abc',
  key: KEY,
  owner: { host: 'here', uid: '1000' },
  expected,
};

interface Answer {
  Name: string;
  Config: Record<string, unknown>;
  HostConfig: Record<string, unknown>;
}

function inspected(change: (answer: Answer) => void = () => undefined): Answer {
  const answer: Answer = {
    Name: '/agent-sandbox-warm-abc',
    Config: {
      Image: 'agent-sandbox/bash:bookworm',
      User: '1000:1000',
      WorkingDir: '/workspace',
      Env: ['PATH=/usr/bin', 'HOME=/home/sandbox'],
      Labels: { [LABEL.managed]: '1', [LABEL.warm]: KEY, [LABEL.ownerUid]: '1000', [LABEL.ownerHost]: 'here' },
      Entrypoint: ['sh', '-c', ONE_SHOT_RUNNER, 'agent-sandbox-run', '600'],
      NetworkDisabled: true,
      Tty: false,
    },
    // As the engine answers: its defaults filled in.
    HostConfig: {
      Init: true,
      CapDrop: ['ALL'],
      CapAdd: null,
      SecurityOpt: ['no-new-privileges'],
      Privileged: false,
      ReadonlyRootfs: true,
      Tmpfs: { '/tmp': 'rw,size=1g' },
      Mounts: null,
      Binds: null,
      RestartPolicy: { Name: 'no', MaximumRetryCount: 0 },
      AutoRemove: true,
      NetworkMode: 'default',
      CgroupnsMode: 'private',
      Runtime: 'runc',
    },
  };
  change(answer);
  return answer;
}

describe('a claimed container is checked against the claimant’s own create request', () => {
  it('accepts a warm container made from the same request', () => {
    assert.equal(warmContainerMismatch(inspected(), expectation), undefined);
  });

  const widened: [string, (answer: Answer) => void][] = [
    ['privileged', (answer) => (answer.HostConfig.Privileged = true)],
    ['a capability added', (answer) => (answer.HostConfig.CapAdd = ['SYS_ADMIN'])],
    ['a host folder bound', (answer) => (answer.HostConfig.Binds = ['/home:/mnt'])],
    ['a mount', (answer) => (answer.HostConfig.Mounts = [{ Type: 'bind', Source: '/', Target: '/mnt' }])],
    ['a writable root', (answer) => (answer.HostConfig.ReadonlyRootfs = false)],
    ['no seccomp profile', (answer) => (answer.HostConfig.SecurityOpt = ['seccomp=unconfined'])],
    ['the host network', (answer) => (answer.HostConfig.NetworkMode = 'host')],
    ['a network', (answer) => (answer.Config.NetworkDisabled = false)],
    ['the host pid namespace', (answer) => (answer.HostConfig.PidMode = 'host')],
    ['another user', (answer) => (answer.Config.User = '0:0')],
    ['another image', (answer) => (answer.Config.Image = 'alpine')],
    ['another main process', (answer) => (answer.Config.Entrypoint = ['sleep', 'infinity'])],
    [
      'another configuration’s key',
      (answer) => (answer.Config.Labels = { ...(answer.Config.Labels as object), [LABEL.warm]: 'd'.repeat(64) }),
    ],
    [
      'another user’s',
      (answer) => (answer.Config.Labels = { ...(answer.Config.Labels as object), [LABEL.ownerUid]: '1001' }),
    ],
    ['a claimed one’s name', (answer) => (answer.Name = '/agent-sandbox-run-abc-by-12')],
    ['a missing environment entry', (answer) => (answer.Config.Env = ['PATH=/usr/bin'])],
    ['an answer that is no container', (answer) => (answer.Config = 'x' as unknown as Record<string, unknown>)],
  ];
  for (const [what, change] of widened)
    it(`refuses one with ${what}`, () => {
      assert.notEqual(warmContainerMismatch(inspected(change), expectation), undefined);
    });

  describe('on Podman, which describes a container in its own words', () => {
    const podmanExpectation: WarmExpectation = {
      ...expectation,
      expected: { ...expected, HostConfig: { ...expected.HostConfig, NetworkMode: 'none' } },
      dialect: 'podman',
    };
    // As Podman 4.3.1 answers for a container made from that request.
    const podmanAnswer = (change: (answer: Answer) => void = () => undefined) =>
      inspected((answer) => {
        answer.Config.Image = 'localhost/agent-sandbox/bash:bookworm';
        delete answer.Config.NetworkDisabled;
        answer.HostConfig.CapDrop = ['CHOWN', 'DAC_OVERRIDE', 'KILL', 'SETUID'];
        answer.HostConfig.CapAdd = [];
        answer.HostConfig.Binds = [];
        answer.HostConfig.Tmpfs = { '/tmp': 'rw,size=1g,rprivate', '/run': 'rw,tmpcopyup' };
        answer.HostConfig.Ulimits = [{ Name: 'RLIMIT_NOFILE', Hard: 4096, Soft: 4096 }];
        answer.HostConfig.NetworkMode = 'none';
        answer.HostConfig.PidMode = 'private';
        answer.HostConfig.IpcMode = 'shareable';
        change(answer);
      });
    it('takes a warm container of this user and configuration as Podman reports it', () => {
      assert.equal(warmContainerMismatch(podmanAnswer(), podmanExpectation), undefined);
    });
    const podmanWidened: [string, (answer: Answer) => void][] = [
      ['privileged', (answer) => (answer.HostConfig.Privileged = true)],
      ['a capability added', (answer) => (answer.HostConfig.CapAdd = ['SYS_ADMIN'])],
      ['a host folder bound', (answer) => (answer.HostConfig.Binds = ['/home:/mnt:rw,rprivate'])],
      ['a device', (answer) => (answer.HostConfig.Devices = [{ PathOnHost: '/dev/sda' }])],
      ['a network', (answer) => (answer.HostConfig.NetworkMode = 'bridge')],
      ['the host pid namespace', (answer) => (answer.HostConfig.PidMode = 'host')],
      ['another container’s network', (answer) => (answer.HostConfig.IpcMode = 'container:abc')],
      ['a writable root', (answer) => (answer.HostConfig.ReadonlyRootfs = false)],
      ['another image', (answer) => (answer.Config.Image = 'localhost/alpine')],
      ['another main process', (answer) => (answer.Config.Entrypoint = ['sleep', 'infinity'])],
    ];
    for (const [what, change] of podmanWidened)
      it(`refuses one with ${what}`, () => {
        assert.notEqual(warmContainerMismatch(podmanAnswer(change), podmanExpectation), undefined);
      });
  });
});
