/**
 * The install step of a sandbox with pip or npm packages: run as the sandbox user into $HOME (so a
 * read-only workspace does not matter), before the caller gets the sandbox. When the spec allows no
 * network, the container was created on the engine's default network for this step only; it is
 * disconnected here, and a container that keeps a network is an error (the caller removes it).
 */
import type Docker from 'dockerode';
import { DISK_LIMIT_REACHED, describeDiskLimit, isDiskFull } from '../../core/limits/diskLimit';
import { SandboxError, abortError } from '../../core/errors';
import type { ProgressCallback } from '../../core/engine/engine';
import { networkTier } from '../../core/network/allowlist';
import type { SandboxSpec } from '../../core/spec/spec';
import { NPM_PREFIX, SANDBOX_HOME, installsPackages } from './containerConfig';
import { inspectContainer } from './engineCalls';
import { execInContainer } from './exec';

/** Long enough for a large wheel or a deep npm tree on a slow mirror; the caller's signal still stops it sooner. */
const INSTALL_TIMEOUT_MS = 15 * 60_000;
/** How much of the installer's output a failure shows. */
const TAIL_LINES = 30;
const TAIL_BYTES = 4000;

export interface PackageInstall {
  docker: Docker;
  container: Docker.Container;
  spec: SandboxSpec;
  /** "uid:gid" of the sandbox user. */
  user: string;
  onProgress?: ProgressCallback;
  signal?: AbortSignal;
}

interface Installer {
  tool: 'pip' | 'npm';
  packages: readonly string[];
  argv: string[];
  env: string[];
}

/**
 * Installs the spec's packages, then takes the network away if the spec does not allow it. An
 * allowlist sandbox has none to take: it installs through its proxy (egress.ts).
 */
export async function installPackages(params: PackageInstall): Promise<void> {
  const { spec } = params;
  if (!installsPackages(spec)) return;
  if (networkTier(spec) === 'allowlist') {
    if (spec.pipPackages.length) await runInstaller(params, pipInstaller(spec.pipPackages));
    if (spec.npmPackages.length) await runInstaller(params, npmInstaller(spec.npmPackages));
    return;
  }
  try {
    if (spec.pipPackages.length) await runInstaller(params, pipInstaller(spec.pipPackages));
    if (spec.npmPackages.length) await runInstaller(params, npmInstaller(spec.npmPackages));
  } catch (error) {
    // The caller removes the container; the network goes first all the same, without hiding why the install failed.
    if (!spec.network) await disconnectAll(params).catch(() => undefined);
    throw error;
  }
  if (!spec.network) await disconnectAll(params);
}

function pipInstaller(packages: readonly string[]): Installer {
  return {
    tool: 'pip',
    packages,
    // "--" keeps a name that starts with a dash from being read as an option.
    argv: [
      'python3',
      '-m',
      'pip',
      'install',
      '--user',
      '--no-input',
      '--no-cache-dir',
      '--disable-pip-version-check',
      '--no-warn-script-location',
      '--progress-bar',
      'off',
      '--',
      ...packages,
    ],
    // Debian's and Ubuntu's pip refuse --user installs outside a virtual environment (PEP 668) without this; other pips ignore it.
    env: ['PIP_BREAK_SYSTEM_PACKAGES=1'],
  };
}

function npmInstaller(packages: readonly string[]): Installer {
  return {
    tool: 'npm',
    packages,
    argv: [
      'npm',
      'install',
      '--global',
      '--prefix',
      NPM_PREFIX,
      '--no-audit',
      '--no-fund',
      '--no-update-notifier',
      '--loglevel',
      'warn',
      '--',
      ...packages,
    ],
    env: [],
  };
}

async function runInstaller(params: PackageInstall, installer: Installer): Promise<void> {
  const names = installer.packages.join(', ');
  params.onProgress?.({ message: `Installing ${installer.tool} packages: ${names}` });
  // The output goes to a file so that a failure can show its end; the exec output keeps only a head.
  const script =
    'log=$(mktemp) || exit 125; "$@" >"$log" 2>&1; code=$?; tail -c ' +
    TAIL_BYTES +
    ' "$log"; rm -f "$log"; exit $code';
  const outcome = await execInContainer({
    docker: params.docker,
    container: params.container,
    argv: ['sh', '-c', script, 'sh', ...installer.argv],
    user: params.user,
    cwd: SANDBOX_HOME,
    env: installer.env,
    stdoutCap: 2 * TAIL_BYTES,
    stderrCap: 2 * TAIL_BYTES,
    timeoutMs: INSTALL_TIMEOUT_MS,
    signal: params.signal,
  });
  if (outcome.cancelled && params.signal) throw abortError(params.signal);
  if (outcome.exitCode === 0) {
    params.onProgress?.({ message: `Installed ${installer.tool} packages: ${names}` });
    return;
  }
  const output = `${outcome.stdout.text('output')}${outcome.stderr.text('stderr')}`;
  const culprit = failedPackage(installer, output) ?? names;
  const full = isDiskFull(output);
  const why = outcome.timedOut
    ? `did not finish within ${INSTALL_TIMEOUT_MS / 60_000} minutes`
    : full
      ? `failed: ${DISK_LIMIT_REACHED} (${describeDiskLimit(params.spec.limits)})`
      : `failed (exit code ${outcome.exitCode ?? 'unknown'})`;
  throw new SandboxError(
    'package-install-failed',
    `Installing the ${installer.tool} package ${culprit} ${why}. The end of ${installer.tool}'s output:\n${tail(output)}`,
    full
      ? 'Ask the user to raise limits.disk (setting agentSandbox.limits.disk, --disk, or limits.disk in the .prompt sandbox block) and limits.memory with it, since files are kept in memory.'
      : installer.tool === 'pip'
        ? 'Check the package name and version. To install from a mirror, set PIP_INDEX_URL (and PIP_TRUSTED_HOST for plain http) in the sandbox env.'
        : 'Check the package name and version. To install from a mirror, set NPM_CONFIG_REGISTRY in the sandbox env.',
  );
}

/** The package the installer names as the one it could not get, when it says so. */
function failedPackage(installer: Installer, output: string): string | undefined {
  const said =
    installer.tool === 'pip'
      ? (/No matching distribution found for (\S+)/.exec(output) ?? /satisfies the requirement (\S+)/.exec(output))
      : (/'(\S+?)@\S*' is not in (?:this|the npm) registry/.exec(output) ??
        /404 Not Found - GET \S*\/([^\s/]+)/.exec(output));
  if (!said) return undefined;
  const named = decodeURIComponent(said[1]!);
  return (
    installer.packages.find(
      (pkg) =>
        pkg === named ||
        pkg.startsWith(`${named}@`) ||
        pkg.startsWith(`${named}=`) ||
        pkg.startsWith(`${named}<`) ||
        pkg.startsWith(`${named}>`),
    ) ?? named
  );
}

function tail(output: string): string {
  const lines = output.trimEnd().split('\n');
  return lines.slice(-TAIL_LINES).join('\n');
}

/** Disconnects the container from every network and checks that none is left; throws otherwise. */
async function disconnectAll(params: PackageInstall): Promise<void> {
  const { docker, container } = params;
  params.onProgress?.({ message: 'Turning the network off' });
  try {
    const networks = (await inspectContainer(container)).NetworkSettings?.Networks ?? {};
    for (const [name, network] of Object.entries(networks)) {
      await docker.getNetwork(network.NetworkID || name).disconnect({ Container: container.id, Force: true });
    }
    const left = Object.keys((await inspectContainer(container)).NetworkSettings?.Networks ?? {});
    if (left.length) throw new Error(`still connected to ${left.join(', ')}`);
  } catch (error) {
    const message =
      (error as { json?: { message?: string } }).json?.message ?? (error as Error).message ?? String(error);
    throw new SandboxError(
      'engine-error',
      `The sandbox's network could not be turned off after installing its packages (${message.trim()}), so the sandbox was not opened.`,
      'Try again; if it persists, allow network (network: true) or install the packages into an image of your own.',
      { cause: error },
    );
  }
}
