/**
 * The seccomp profile of every sandbox container: the Docker Engine's default profile with the
 * setuid/setgid rules of scripts/generateSeccompProfile.ts, which writes seccompProfile.json (never
 * edit that by hand). The sandbox user owns what it writes in a read-write workspace, so a mode bit
 * that stuck there would be a setuid program of the host user; the filter refuses such modes in
 * every call that sets or creates with one (EPERM), and openat2 and io_uring (ENOSYS).
 */
import profile from './seccompProfile.json';

/** The HostConfig.SecurityOpt entry: the Engine API takes the profile's JSON text after "seccomp=" (the CLI reads a file into the same form). */
export const SECCOMP_SECURITY_OPT = `seccomp=${JSON.stringify(profile)}`;
