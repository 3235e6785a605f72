import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  CREATING_FLAGS,
  MODE_ARGUMENT,
  REFUSED,
  SANDBOX_PROFILE_FILE,
  readBaseProfile,
  sandboxProfileText,
  sandboxSeccompProfile,
  type SeccompProfile,
  type SeccompRule,
} from '../../scripts/generateSeccompProfile';
import { SandboxError } from '../../src/core/errors';
import { containerCreateOptions } from '../../src/engines/docker/containerConfig';
import {
  SECCOMP_SECURITY_OPT,
  checkSeccompSupport,
  withSeccompFor,
  writeProfileFile,
} from '../../src/engines/docker/seccompProfile';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveSpec } from '../../src/core/spec/resolveSpec';

const O_CREAT = 0o100;
const O_TMPFILE = 0o20000000 | 0o200000;
const O_WRONLY = 0o1;

/**
 * What the profile does with one call on amd64 in a container without capabilities, as the engine
 * resolves includes/excludes and libseccomp orders rules: an allow whose arguments all match wins;
 * else an errno rule for the call; else the default action.
 */
function verdict(profile: SeccompProfile, name: string, args: number[] = []): string {
  const applies = (rule: SeccompRule) => {
    if (rule.includes?.arches?.length && !rule.includes.arches.includes('amd64')) return false;
    if (rule.includes?.caps?.length) return false;
    if (rule.excludes?.arches?.includes('amd64')) return false;
    return rule.names.includes(name);
  };
  const matches = (rule: SeccompRule) =>
    (rule.args ?? []).every((arg) => {
      const value = args[arg.index] ?? 0;
      if (arg.op === 'SCMP_CMP_MASKED_EQ') return (value & arg.value) === (arg.valueTwo ?? 0);
      if (arg.op === 'SCMP_CMP_EQ') return value === arg.value;
      throw new Error(`op ${arg.op} not modelled`);
    });
  const rules = profile.syscalls.filter(applies);
  if (rules.some((rule) => rule.action === 'SCMP_ACT_ALLOW' && matches(rule))) return 'allow';
  const errno = rules.find((rule) => rule.action === 'SCMP_ACT_ERRNO' && matches(rule));
  if (errno) return `errno ${errno.errnoRet ?? 1}`;
  return profile.defaultAction === 'SCMP_ACT_ERRNO' ? `errno ${profile.defaultErrnoRet ?? 1}` : profile.defaultAction;
}

describe('seccomp profile', () => {
  const base = readBaseProfile();
  const profile = JSON.parse(readFileSync(SANDBOX_PROFILE_FILE, 'utf8')) as SeccompProfile;

  it('is what the generator makes from the engine default (run npx tsx scripts/generateSeccompProfile.ts when this fails)', () => {
    assert.equal(readFileSync(SANDBOX_PROFILE_FILE, 'utf8'), sandboxProfileText());
  });

  it('goes to the engine in every create request', () => {
    const options = containerCreateOptions({
      name: 'x',
      image: 'i',
      spec: resolveSpec({}),
      user: { uid: 1000, gid: 1000 },
      createdAt: '',
      notices: [],
    });
    const entry = options.HostConfig!.SecurityOpt!.find((opt: string) => opt.startsWith('seccomp='));
    assert.ok(entry, 'a seccomp= entry');
    assert.deepEqual(JSON.parse(entry.slice('seccomp='.length)), profile);
    assert.ok(options.HostConfig!.SecurityOpt!.includes('no-new-privileges'));
  });

  it('refuses S_ISUID and S_ISGID in every call that sets a mode or creates with one', () => {
    for (const [name, index] of Object.entries(MODE_ARGUMENT)) {
      if (name === 'fchmodat2') continue; // not allowed by the 20.10 base at all: see below
      const args = (mode: number) => {
        const list = [0, 0, 0, 0];
        list[index] = mode;
        if (name === 'open') list[1] = O_CREAT | O_WRONLY;
        if (name === 'openat') list[2] = O_CREAT | O_WRONLY;
        return list;
      };
      assert.equal(verdict(profile, name, args(0o755)), 'allow', `${name} 0755`);
      assert.equal(verdict(profile, name, args(0o1777)), 'allow', `${name} 1777 (sticky is harmless)`);
      for (const mode of [0o4755, 0o2755, 0o6777, 0o4000, 0xffff_f000 | 0o4755]) {
        assert.equal(verdict(profile, name, args(mode)), 'errno 1', `${name} ${mode.toString(8)}`);
      }
    }
  });

  it('lets open and openat that create nothing through whatever their mode register holds', () => {
    assert.equal(verdict(profile, 'openat', [-100, 0, 0, 0o7777]), 'allow');
    assert.equal(verdict(profile, 'open', [0, O_WRONLY, 0o4755]), 'allow');
    assert.equal(verdict(profile, 'openat', [-100, 0, O_CREAT | O_WRONLY, 0o4755]), 'errno 1');
    assert.equal(verdict(profile, 'openat', [-100, 0, O_TMPFILE | O_WRONLY, 0o4755]), 'errno 1');
    assert.equal(verdict(profile, 'openat', [-100, 0, O_TMPFILE | O_WRONLY, 0o600]), 'allow');
    assert.equal(CREATING_FLAGS & O_CREAT, O_CREAT);
  });

  it('refuses openat2 and io_uring with ENOSYS, so libc falls back to checked calls', () => {
    for (const name of REFUSED) assert.equal(verdict(profile, name), 'errno 38', name);
  });

  it('never allows what the engine default refuses, and keeps everything else as it was', () => {
    assert.equal(profile.defaultAction, base.defaultAction);
    assert.deepEqual(profile.archMap, base.archMap);
    const touched = new Set([...Object.keys(MODE_ARGUMENT), ...REFUSED]);
    const names = new Set(base.syscalls.flatMap((rule) => rule.names));
    for (const name of [...names, 'fchmodat2', 'cachestat', 'kexec_load']) {
      const before = verdict(base, name, [0, 0, 0, 0]);
      const after = verdict(profile, name, [0, 0, 0, 0]);
      if (touched.has(name)) assert.ok(before === 'allow' || after !== 'allow', `${name}: ${before} → ${after}`);
      else assert.equal(after, before, name);
    }
    assert.equal(
      verdict(profile, 'fchmodat2', [-100, 0, 0o755, 0]),
      'errno 1',
      'fchmodat2 stays refused as in the base (runc answers ENOSYS for it)',
    );
  });

  it('will not build on a base that allows by default or already conditions a guarded call', () => {
    assert.throws(() => sandboxSeccompProfile({ ...base, defaultAction: 'SCMP_ACT_ALLOW' }), /default action/);
    const conditional = {
      ...base,
      syscalls: [
        ...base.syscalls,
        { names: ['chmod'], action: 'SCMP_ACT_ALLOW', args: [{ index: 1, value: 1, op: 'SCMP_CMP_EQ' }] },
      ],
    };
    assert.throws(() => sandboxSeccompProfile(conditional), /review it/);
  });

  it('goes to Podman as a file on this machine, since its API reads "seccomp=" as a path', async () => {
    const options = { HostConfig: { SecurityOpt: ['no-new-privileges', SECCOMP_SECURITY_OPT] } };
    assert.equal(await withSeccompFor(options, 'docker'), options);
    const podman = await withSeccompFor(options, 'podman-local', async () => '/cache/seccomp-x.json');
    assert.deepEqual(podman.HostConfig!.SecurityOpt, ['no-new-privileges', 'seccomp=/cache/seccomp-x.json']);
    const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-seccomp-'));
    try {
      const path = await writeProfileFile(folder);
      assert.deepEqual(JSON.parse(readFileSync(path, 'utf8')), profile);
      assert.equal(await writeProfileFile(folder), path, 'written once, found again');
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('refuses a read-write workspace on a remote Podman, which cannot take the profile', () => {
    assert.throws(
      () => checkSeccompSupport('podman-remote', 'rw'),
      (error: unknown) => SandboxError.is(error, 'unsupported'),
    );
    for (const access of ['none', 'ro'] as const) checkSeccompSupport('podman-remote', access);
    checkSeccompSupport('docker', 'rw');
    checkSeccompSupport('podman-local', 'rw');
  });
});
