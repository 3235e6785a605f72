/**
 * Writes src/engines/docker/seccompProfile.json, the seccomp profile every sandbox container runs
 * under: the Docker Engine's own default profile (scripts/seccomp/docker-20.10.24-default.json, moby's
 * profiles/seccomp/default.json as Debian ships it in golang-github-docker-docker-dev 20.10.24; Apache
 * License 2.0, see NOTICE) with rules that keep setuid and setgid bits out of everything a sandbox
 * writes. It only takes away: a call the engine's profile refuses stays refused. `--check` only
 * compares, and exits 1 when the committed profile differs.
 *
 *   npx tsx scripts/generateSeccompProfile.ts [--check]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
export const BASE_PROFILE_FILE = resolve(ROOT, 'scripts/seccomp/docker-20.10.24-default.json');
export const SANDBOX_PROFILE_FILE = resolve(ROOT, 'src/engines/docker/seccompProfile.json');

export interface SeccompArg {
  index: number;
  value: number;
  valueTwo?: number;
  op: string;
}

export interface SeccompFilter {
  caps?: string[];
  arches?: string[];
  minKernel?: string;
}

export interface SeccompRule {
  names: string[];
  action: string;
  args?: SeccompArg[] | null;
  errnoRet?: number;
  comment?: string;
  includes?: SeccompFilter;
  excludes?: SeccompFilter;
}

export interface SeccompProfile {
  defaultAction: string;
  defaultErrnoRet?: number;
  archMap?: { architecture: string; subArchitectures: string[] }[];
  syscalls: SeccompRule[];
}

/** S_ISUID | S_ISGID. */
export const SETID_BITS = 0o6000;
/** The argument that carries the new mode, for each call that sets a mode or creates with one (the same order on every architecture). */
export const MODE_ARGUMENT: Readonly<Record<string, number>> = {
  chmod: 1,
  fchmod: 1,
  fchmodat: 2,
  fchmodat2: 2,
  creat: 1,
  mkdir: 1,
  mkdirat: 2,
  mknod: 1,
  mknodat: 2,
  open: 2,
  openat: 3,
};
/** open and openat make nothing without O_CREAT or __O_TMPFILE, and then ignore their mode, which may hold any value. */
export const FLAGS_ARGUMENT: Readonly<Record<string, number>> = { open: 1, openat: 2 };
/** O_CREAT | __O_TMPFILE with the generic values (asm-generic/fcntl.h). */
export const CREATING_FLAGS = 0o100 | 0o20000000;
/** Where those values hold, as the engine names architectures; alpha, mips, parisc and sparc differ, and there only the mode rule allows. */
const GENERIC_OPEN_FLAGS_ARCHES = [
  'amd64',
  'x86',
  'arm',
  'arm64',
  'ppc',
  'ppc64',
  'ppc64le',
  's390',
  's390x',
  'riscv64',
];
/**
 * Refused with ENOSYS, so that libc falls back to a call the rules above see: openat2 carries its mode
 * in a struct behind a pointer, which a seccomp filter cannot read; io_uring runs IORING_OP_OPENAT and
 * IORING_OP_MKDIRAT in the kernel without any system call at all.
 */
export const REFUSED = ['openat2', 'io_uring_setup', 'io_uring_enter', 'io_uring_register'];
const MIPS_ARCHES = ['mips3l64n32', 'mips64', 'mips64n32', 'mipsel', 'mipsel64'];
const ENOSYS = 38;
const ENOSYS_MIPS = 89;
const TAG = 'agent-sandbox:';

/** The engine's profile with our rules: every allowed mode-setting call loses S_ISUID and S_ISGID, openat2 and io_uring go. */
export function sandboxSeccompProfile(base: SeccompProfile): SeccompProfile {
  if (!/^SCMP_ACT_(ERRNO|KILL)/.test(base.defaultAction))
    throw new Error(`the base profile's default action is ${base.defaultAction}; expected one that refuses`);
  const touched = new Set([...Object.keys(MODE_ARGUMENT), ...REFUSED]);
  const allowedInBase = new Set<string>();
  for (const rule of base.syscalls) {
    for (const name of rule.names.filter((each) => touched.has(each))) {
      const plain =
        rule.action === 'SCMP_ACT_ALLOW' && !rule.args?.length && isEmpty(rule.includes) && isEmpty(rule.excludes);
      // A conditional rule upstream would need a look before ours replace it: stop rather than guess.
      if (!plain)
        throw new Error(
          `the base profile has a conditional or non-allow rule for ${name}; review it before regenerating`,
        );
      allowedInBase.add(name);
    }
  }
  const syscalls: SeccompRule[] = base.syscalls
    .map((rule) => ({ ...rule, names: rule.names.filter((name) => !touched.has(name)) }))
    .filter((rule) => rule.names.length > 0);

  // Only what the engine allowed is allowed again, now on conditions: a call it refused stays refused.
  for (const [name, index] of Object.entries(MODE_ARGUMENT)) {
    if (!allowedInBase.has(name)) continue;
    syscalls.push({
      names: [name],
      action: 'SCMP_ACT_ALLOW',
      args: [{ index, value: SETID_BITS, valueTwo: 0, op: 'SCMP_CMP_MASKED_EQ' }],
      comment: `${TAG} ${name} only with a mode without S_ISUID and S_ISGID`,
    });
    const flags = FLAGS_ARGUMENT[name];
    if (flags !== undefined) {
      syscalls.push({
        names: [name],
        action: 'SCMP_ACT_ALLOW',
        args: [{ index: flags, value: CREATING_FLAGS, valueTwo: 0, op: 'SCMP_CMP_MASKED_EQ' }],
        comment: `${TAG} ${name} that creates nothing (no O_CREAT, no O_TMPFILE), whatever its mode argument`,
        includes: { arches: GENERIC_OPEN_FLAGS_ARCHES },
      });
    }
  }
  const refused = REFUSED.filter((name) => allowedInBase.has(name));
  if (refused.length) {
    const comment = `${TAG} ENOSYS, so that libc falls back to calls whose mode the rules above check`;
    syscalls.push({
      names: refused,
      action: 'SCMP_ACT_ERRNO',
      errnoRet: ENOSYS,
      comment,
      excludes: { arches: MIPS_ARCHES },
    });
    syscalls.push({
      names: refused,
      action: 'SCMP_ACT_ERRNO',
      errnoRet: ENOSYS_MIPS,
      comment,
      includes: { arches: MIPS_ARCHES },
    });
  }
  return { ...base, syscalls };
}

function isEmpty(filter: SeccompFilter | undefined): boolean {
  return (
    !filter ||
    Object.values(filter).every((value) => value === undefined || (Array.isArray(value) && value.length === 0))
  );
}

export function readBaseProfile(): SeccompProfile {
  return JSON.parse(readFileSync(BASE_PROFILE_FILE, 'utf8')) as SeccompProfile;
}

export function sandboxProfileText(): string {
  return `${JSON.stringify(sandboxSeccompProfile(readBaseProfile()), null, 1)}\n`;
}

function main(args: readonly string[]): number {
  const wanted = sandboxProfileText();
  let current: string | undefined;
  try {
    current = readFileSync(SANDBOX_PROFILE_FILE, 'utf8');
  } catch {
    current = undefined;
  }
  if (current === wanted) {
    console.log('src/engines/docker/seccompProfile.json is up to date.');
    return 0;
  }
  if (args.includes('--check')) {
    console.error(
      'src/engines/docker/seccompProfile.json is out of date. Run: npx tsx scripts/generateSeccompProfile.ts',
    );
    return 1;
  }
  writeFileSync(SANDBOX_PROFILE_FILE, wanted);
  console.log('Wrote src/engines/docker/seccompProfile.json.');
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
