import assert from 'node:assert/strict';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { MiB } from '../../src/core/spec/units';
import { containerCreateOptions, sandboxUser } from '../../src/engines/docker/containerConfig';

const plan = (layer = {}) => ({
  name: 'agent-sandbox-test',
  image: 'python:3.12-slim',
  spec: resolveSpec(layer),
  user: { uid: 1000, gid: 1000 },
  createdAt: '2026-01-01T00:00:00.000Z',
  notices: [],
});

describe('hardened container', () => {
  it('drops privileges and sets every limit', () => {
    const options = containerCreateOptions(plan());
    const host = options.HostConfig!;
    assert.equal(options.User, '1000:1000');
    assert.deepEqual(host.CapDrop, ['ALL']);
    assert.deepEqual(
      host.SecurityOpt?.map((opt: string) => opt.split('=')[0]),
      ['no-new-privileges', 'seccomp'],
      'no new privileges, and our seccomp profile (seccompProfile.test.ts)',
    );
    assert.equal(host.Init, true);
    assert.equal(host.Privileged, false);
    assert.equal(host.Memory, 512 * MiB);
    assert.equal(host.MemorySwap, 512 * MiB, 'no swap: MemorySwap equals Memory');
    assert.equal(host.NanoCpus, 1e9);
    assert.equal(host.PidsLimit, 256);
    assert.equal(options.NetworkDisabled, true);
    assert.deepEqual(host.Mounts, []);
    assert.ok(!JSON.stringify(options).includes('docker.sock'));
  });

  it('labels the container with what another process needs', () => {
    const options = containerCreateOptions({
      ...plan({ mode: 'code' }),
      sessionName: 'build',
      workspaceFolder: '/home/me/project',
    });
    assert.equal(options.Labels!['org.agent-sandbox.managed'], '1');
    assert.equal(options.Labels!['org.agent-sandbox.session'], 'build');
    assert.equal(options.Labels!['org.agent-sandbox.workspace'], '/home/me/project');
    assert.equal(options.Labels!['org.agent-sandbox.mode'], 'code');
    assert.equal(JSON.parse(options.Labels!['org.agent-sandbox.spec']!).limits.pids, 256);
  });

  it('turns the network on only when allowed', () => {
    assert.equal(containerCreateOptions(plan({ network: true })).NetworkDisabled, false);
  });

  it('has a network for the install step when there are packages, and the spec still says none', () => {
    const options = containerCreateOptions(plan({ pipPackages: ['requests'] }));
    assert.equal(options.NetworkDisabled, false);
    assert.equal(JSON.parse(options.Labels!['org.agent-sandbox.spec']!).network, false);
    assert.equal(containerCreateOptions(plan({ npmPackages: ['left-pad'], network: true })).NetworkDisabled, false);
  });

  it("points NODE_PATH at the npm packages only when there are some, keeping the user's own", () => {
    const env = (layer: object) =>
      containerCreateOptions(plan(layer)).Env!.filter((entry) => entry.startsWith('NODE_PATH='));
    assert.deepEqual(env({}), []);
    assert.deepEqual(env({ pipPackages: ['requests'] }), []);
    assert.deepEqual(env({ npmPackages: ['left-pad'] }), ['NODE_PATH=/home/sandbox/.local/lib/node_modules']);
    assert.deepEqual(env({ npmPackages: ['left-pad'], env: { NODE_PATH: '/opt/lib' } }), [
      'NODE_PATH=/home/sandbox/.local/lib/node_modules:/opt/lib',
    ]);
  });

  it('mounts the workspace read-only or read-write', () => {
    const ro = containerCreateOptions({ ...plan({ workspaceAccess: 'ro' }), workspaceFolder: '/p' });
    assert.deepEqual(ro.HostConfig!.Mounts, [{ Type: 'bind', Source: '/p', Target: '/workspace', ReadOnly: true }]);
    const rw = containerCreateOptions({ ...plan({ workspaceAccess: 'rw' }), workspaceFolder: '/p' });
    assert.equal(rw.HostConfig!.Mounts![0]!.ReadOnly, false);
  });

  it('runs as the host user only when the workspace is mounted, and never as root', () => {
    assert.deepEqual(sandboxUser(resolveSpec({ workspaceAccess: 'ro' }), { uid: 1234, gid: 1234, platform: 'linux' }), {
      uid: 1234,
      gid: 1234,
    });
    const rw = resolveSpec({ workspaceAccess: 'rw' });
    assert.deepEqual(sandboxUser(rw, { uid: 1234, gid: 1234, platform: 'linux' }), { uid: 1234, gid: 1234 });
    assert.deepEqual(sandboxUser(rw, { uid: 0, gid: 0, platform: 'linux' }), { uid: 1000, gid: 1000 });
    assert.deepEqual(sandboxUser(resolveSpec(), { uid: 1234, gid: 1234, platform: 'linux' }), { uid: 1000, gid: 1000 });
    assert.deepEqual(sandboxUser(rw, { uid: 501, gid: 20, platform: 'darwin' }), { uid: 1000, gid: 1000 });
  });
});
