/** A live sandbox container: exec and the file operations, each as one exec with one tar stream at most. */
import type Docker from 'dockerode';
import { posix } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SandboxError } from '../../core/errors';
import type {
  DeleteOptions,
  ExecRequest,
  ExecResult,
  FileContent,
  FileEntry,
  FileInput,
  ListOptions,
  ListResult,
  ProcessOptions,
  ReadOptions,
  Sandbox,
  SandboxProcess,
  SessionInfo,
  ShellOptions,
  ShellSession,
  WriteResult,
} from '../../core/engine/engine';
import { encodeFileContent, resolveFiles } from '../../core/files/files';
import { WORKSPACE_DIR, resolveReadablePath, resolveWorkspacePath, workspaceRelative } from '../../core/files/paths';
import { buildExecResult } from '../../core/results/results';
import { describeDeath, type DeathReason } from '../../core/sessions/sessionDeath';
import type { DockerEngine } from './dockerEngine';
import { containerCallStatus, inspectContainer } from './engineCalls';
import type { ContainerInspect } from './engineJson';
import { LABEL } from './labels';
import { ALL_PROCESSES, execInContainer, killAll, startBlockedByProcessLimit, type ExecOutcome } from './exec';
import { filesFillMemory, filledMemoryBecause } from './filesInMemory';
import { FILE_EXIT, FILE_OPS, fileErrorFor, type FileOp } from './fileScripts';
import { FileHelper } from './fileHelper';
import type { CappedOutput } from '../../core/results/output';
import { DEFAULT_SHELL, DEFAULT_TERMINAL_SIZE, openDockerShell } from './shell';
import { openDockerProcess } from './process';
import { tarBuffer } from './tar';
import { formatSize } from '../../core/spec/units';
import type { DecisionQuery, NetworkDecisionPage } from '../../core/network/decisionLog';

const FILE_OP_TIMEOUT_MS = 60_000;
const FILE_STDERR_CAP = 64 * 1024;
/** How many helpers in a row may end without answering before the session runs every file call as one exec. */
const MAX_HELPER_STARTS = 5;

/** What a file script left: its exit code and capped output, from the helper or from one exec. */
type FileOutcome = { exitCode: number | null; stdout: CappedOutput; stderr: CappedOutput };

function fileTimeout(): SandboxError {
  return new SandboxError(
    'engine-error',
    `The file operation did not finish within ${FILE_OP_TIMEOUT_MS / 1000} s.`,
    'Try again with fewer or smaller files.',
  );
}
const LIST_OUTPUT_CAP = 16 * 1024 * 1024;

export class DockerSandbox implements Sandbox {
  private closed = false;
  private helper: Promise<FileHelper | undefined> | undefined;
  private helperStarts = 0;

  constructor(
    private readonly engine: DockerEngine,
    private readonly container: Docker.Container,
    readonly info: SessionInfo,
    private readonly user: string,
  ) {}

  async exec(request: ExecRequest, signal?: AbortSignal): Promise<ExecResult> {
    const result = await this.execOnce(request, signal);
    // Processes left by an earlier call (a fork bomb) hold every slot of the process limit, so this
    // command could not even start: free the sandbox by stopping all its processes, then run it again.
    if (
      !startBlockedByProcessLimit(result.stderr) ||
      !(await killAll({ container: this.container, user: this.user }).catch(() => false))
    )
      return result;
    // The killed processes hold their slots until the init reaps them: a few short waits.
    let again = await this.execOnce(request, signal);
    for (let attempt = 0; attempt < 10 && startBlockedByProcessLimit(again.stderr) && !signal?.aborted; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      again = await this.execOnce(request, signal);
    }
    const notice = `The sandbox was at its process limit (${this.info.spec.limits.pids} processes), left by an earlier call, so the command could not start: every process in the sandbox was stopped (background jobs too) and the command ran again.`;
    return { ...again, notices: [notice, ...again.notices] };
  }

  private async execOnce(request: ExecRequest, signal?: AbortSignal): Promise<ExecResult> {
    const argv = commandLine(request);
    const timeoutSeconds = request.timeoutSeconds ?? this.info.spec.timeoutSeconds;
    const outcome = await this.run(argv, {
      cwd: request.cwd ? posix.resolve(WORKSPACE_DIR, request.cwd) : WORKSPACE_DIR,
      env: Object.entries(request.env ?? {}).map(([key, value]) => `${key}=${value}`),
      stdin:
        request.stdin === undefined
          ? undefined
          : typeof request.stdin === 'string'
            ? Buffer.from(request.stdin)
            : request.stdin,
      stdoutCap: this.info.spec.limits.maxStdoutBytes,
      stderrCap: this.info.spec.limits.maxStderrBytes,
      timeoutMs: timeoutSeconds * 1000,
      signal,
    });
    const notices: string[] = [];
    // The tree under the command (tini as subreaper) minus the init itself and the shell that started it.
    const killedTree = (outcome.killed ?? []).filter((name) => name !== 'docker-init');
    if (killedTree.includes(ALL_PROCESSES)) notices.push(`Stopped with the call: ${ALL_PROCESSES}.`);
    else if (killedTree.length)
      notices.push(
        `Stopped with the call: ${describeProcesses(killedTree)}, everything it had started (background processes and those that left its session or cleared their environment included).`,
      );
    if (outcome.unkillable) {
      // Processes that cannot be stopped from inside (a fork bomb at the pids limit) end with their container.
      this.engine.deaths.markStopping(
        this.info.id,
        'its processes could not be stopped inside it (a fork bomb, or processes stuck in the kernel)',
      );
      await this.container.kill({ signal: 'SIGKILL' }).catch(() => undefined);
      notices.push(
        'The processes could not be stopped inside the sandbox, so the sandbox was stopped; open a new session to continue.',
      );
    }
    const oomKilled =
      outcome.exitCode === 137 &&
      !outcome.timedOut &&
      !outcome.cancelled &&
      (await this.engine.oomSince(this.container.id, outcome.startedAt, this.user).catch(() => false));
    const result = buildExecResult({ ...outcome, oomKilled, timeoutSeconds, notices }, this.info.spec);
    let stopped = this.engine.folderWatches.stoppedWhy(this.info.id);
    if (oomKilled && (await filesFillMemory(this.engine.docker, this.container, this.user))) {
      stopped = filledMemoryBecause(this.info.spec.limits.memoryBytes);
      this.engine.deaths.markStopping(this.info.id, stopped);
      await this.container.kill({ signal: 'SIGKILL' }).catch(() => undefined);
    }
    return stopped
      ? { ...result, diskLimitReached: true, hint: `Agent Sandbox stopped the session: ${stopped}. ${DEAD_HINT}` }
      : result;
  }

  async writeFiles(files: readonly FileInput[], signal?: AbortSignal): Promise<WriteResult> {
    const resolved = resolveFiles(files, this.info.spec.limits);
    if (resolved.length === 0) return { files: [] };
    if (this.info.workspaceAccess === 'ro')
      throw fileErrorFor(resolved[0]!.path, null, 'Read-only file system', 'write');
    // One buffer, each file's bytes copied into it once (tar-stream copied them twice more).
    const archive = tarBuffer(
      resolved.map((file) => ({
        name: workspaceRelative(file.path),
        type: 'file',
        data: file.data,
        mode: file.mode ?? 0o644,
        uid: 0,
        gid: 0,
      })),
    );
    const dirs = [...new Set(resolved.map((file) => posix.dirname(file.path)))];
    const outcome = await this.fileOp(
      'write',
      [...dirs, ...resolved.map((file) => file.path)],
      archive,
      64 * 1024,
      signal,
    );
    if (outcome.exitCode !== 0) {
      const stderr = outcome.stderr.text('stderr');
      const culprit = resolved.length === 1 ? resolved[0]!.path : `${resolved.length} files`;
      throw fileErrorFor(culprit, outcome.exitCode, stderr, 'write', this.info.spec.limits);
    }
    return { files: resolved.map((file) => ({ path: file.path, bytes: file.data.length })) };
  }

  async readFile(path: string, options: ReadOptions = {}, signal?: AbortSignal): Promise<FileContent> {
    const absolute = resolveReadablePath(path);
    const maxBytes = Math.min(
      options.maxBytes ?? this.info.spec.limits.maxFileSizeBytes,
      this.info.spec.limits.maxFileSizeBytes,
    );
    const offset = Math.max(0, Math.floor(options.offset ?? 0));
    const outcome = await this.fileOp(
      'read',
      [absolute, String(maxBytes), String(offset)],
      undefined,
      maxBytes + 32,
      signal,
    );
    if (outcome.exitCode !== 0) throw fileErrorFor(absolute, outcome.exitCode, outcome.stderr.text('stderr'), 'read');
    const output = outcome.stdout.bytes();
    const bytes = Buffer.from(output.buffer, output.byteOffset, output.length);
    const newline = bytes.indexOf(0x0a);
    const size = Number(bytes.subarray(0, newline).toString());
    const data = bytes.subarray(newline + 1);
    const truncated = size > offset + data.length;
    const wanted = options.encoding ?? 'auto';
    const { content, encoding } = encodeFileContent(data, wanted);
    return { path: absolute, content, encoding, size, offset, truncated };
  }

  async listFiles(path: string, options: ListOptions = {}, signal?: AbortSignal): Promise<ListResult> {
    const absolute = resolveWorkspacePath(path);
    const depth = Math.max(1, Math.min(options.depth ?? 1, 32));
    const most = this.info.spec.limits.maxFiles;
    const outcome = await this.fileOp(
      'list',
      [absolute, String(depth), String(most + 1)],
      undefined,
      LIST_OUTPUT_CAP,
      signal,
    );
    if (outcome.exitCode !== 0) throw fileErrorFor(absolute, outcome.exitCode, outcome.stderr.text('stderr'), 'list');
    const records = Buffer.from(outcome.stdout.bytes()).toString('utf8').split('\0').filter(Boolean);
    const entries = records.map(parseFindRecord).filter((entry): entry is FileEntry => entry !== undefined);
    entries.sort((a, b) => a.path.localeCompare(b.path));
    const truncated = entries.length > most || outcome.stdout.truncated;
    return { entries: entries.slice(0, most), truncated };
  }

  async deletePath(
    path: string,
    options: DeleteOptions = {},
    signal?: AbortSignal,
  ): Promise<{ path: string; deleted: boolean }> {
    const absolute = resolveWorkspacePath(path);
    if (absolute === WORKSPACE_DIR) throw fileErrorFor(absolute, FILE_EXIT.isWorkspace, '', 'delete');
    if (this.info.workspaceAccess === 'ro') throw fileErrorFor(absolute, null, 'Read-only file system', 'delete');
    const outcome = await this.fileOp(
      'delete',
      [absolute, options.recursive ? '1' : '0'],
      undefined,
      64 * 1024,
      signal,
    );
    if (outcome.exitCode !== 0)
      throw fileErrorFor(absolute, outcome.exitCode, outcome.stderr.text('stderr'), 'delete', this.info.spec.limits);
    return { path: absolute, deleted: true };
  }

  async openProcess(argv: readonly string[], options: ProcessOptions = {}): Promise<SandboxProcess> {
    if (this.closed)
      throw new SandboxError('session-dead', 'This sandbox was closed.', 'Open a new session with sandbox_open.');
    const params = {
      docker: this.engine.docker,
      container: this.container,
      user: this.user,
      argv,
      cwd: options.cwd ? posix.resolve(WORKSPACE_DIR, options.cwd) : WORKSPACE_DIR,
      env: Object.entries(options.env ?? {}).map(([key, value]) => `${key}=${value}`),
    };
    try {
      return await this.engine.guard(() => openDockerProcess(params));
    } catch (error) {
      const status = containerCallStatus((error as { cause?: unknown }).cause);
      if (status === 404 || status === 409) throw await this.deathError();
      throw error;
    }
  }

  async openShell(options: ShellOptions = {}): Promise<ShellSession> {
    if (this.closed)
      throw new SandboxError('session-dead', 'This sandbox was closed.', 'Open a new session with sandbox_open.');
    if (options.command && (options.command.length === 0 || options.command[0] === '')) {
      throw new SandboxError(
        'invalid-input',
        'The shell command is empty.',
        'Leave it out for an interactive shell, or give the program and its arguments.',
      );
    }
    const params = {
      container: this.container,
      user: this.user,
      argv: options.command ?? DEFAULT_SHELL,
      cwd: options.cwd ? posix.resolve(WORKSPACE_DIR, options.cwd) : WORKSPACE_DIR,
      env: Object.entries(options.env ?? {}).map(([key, value]) => `${key}=${value}`),
      cols: options.cols ?? DEFAULT_TERMINAL_SIZE.cols,
      rows: options.rows ?? DEFAULT_TERMINAL_SIZE.rows,
      guard: <T>(call: () => Promise<T>) => this.engine.guard(call),
    };
    try {
      return await this.engine.guard(() => openDockerShell(params));
    } catch (error) {
      // The same diagnosis as run(): a container that is gone or stopped means the session died.
      const status = containerCallStatus((error as { cause?: unknown }).cause);
      if (status !== 404 && status !== 409) throw error;
      throw await this.deathError();
    }
  }

  /** The decisions of its allowlist proxy (none for a sandbox without an allowlist); readable after close too. */
  networkDecisions(query?: DecisionQuery): Promise<NetworkDecisionPage> {
    return this.engine.networkDecisions(this.info.id, query);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    void this.helper?.then((helper) => helper?.close());
    await this.engine.remove(this.container.id);
  }

  /**
   * One file script: in the session's file helper when it is there and free, else (and whenever the
   * helper cannot answer) as one exec. Both run the same script as the sandbox's user.
   */
  private async fileOp(
    op: FileOp,
    args: string[],
    stdin: Uint8Array | undefined,
    cap: number,
    signal?: AbortSignal,
  ): Promise<FileOutcome> {
    if (this.closed)
      throw new SandboxError('session-dead', 'This sandbox was closed.', 'Open a new session with sandbox_open.');
    const helper = await this.fileHelper();
    if (helper && !helper.busy) {
      const outcome = await helper.run({
        op,
        args,
        input: stdin,
        stdoutCap: cap,
        stderrCap: FILE_STDERR_CAP,
        timeoutMs: FILE_OP_TIMEOUT_MS,
        signal,
      });
      if (outcome.kind === 'done') {
        this.helperStarts = 0;
        return outcome;
      }
      if (outcome.kind === 'cancelled') throw new SandboxError('aborted', 'The file operation was cancelled.');
      if (outcome.kind === 'timeout') throw fileTimeout();
    }
    const outcome = await this.run(['sh', '-c', FILE_OPS[op], 'sh', ...args], {
      cwd: WORKSPACE_DIR,
      env: [],
      stdin,
      stdoutCap: cap,
      stderrCap: FILE_STDERR_CAP,
      timeoutMs: FILE_OP_TIMEOUT_MS,
      signal,
    });
    if (outcome.cancelled) throw new SandboxError('aborted', 'The file operation was cancelled.');
    if (outcome.timedOut) throw fileTimeout();
    return outcome;
  }

  /**
   * The session's file helper, started on the first file call (that call pays the exec it would have
   * paid anyway) and again after it ended (the sandbox's code may kill it), up to MAX_HELPER_STARTS
   * times in a row without an answer; undefined then, or when it cannot start, and the calls run as one
   * exec each.
   */
  private async fileHelper(): Promise<FileHelper | undefined> {
    const current = await this.helper;
    if (current?.alive || this.closed) return current?.alive ? current : undefined;
    if (this.helperStarts >= MAX_HELPER_STARTS) return undefined;
    this.helperStarts++;
    this.helper = FileHelper.start(this.container, this.user).catch(() => undefined);
    return this.helper;
  }

  private async run(
    argv: readonly string[],
    options: {
      cwd: string;
      env: string[];
      stdin?: Uint8Array;
      stdoutCap: number;
      stderrCap: number;
      timeoutMs: number;
      signal?: AbortSignal;
    },
  ): Promise<ExecOutcome> {
    if (this.closed)
      throw new SandboxError('session-dead', 'This sandbox was closed.', 'Open a new session with sandbox_open.');
    for (let waited = 0; ; waited += PAUSED_POLL_MS) {
      try {
        return await this.engine.guard(
          () =>
            execInContainer({
              docker: this.engine.docker,
              container: this.container,
              argv,
              user: this.user,
              ...options,
            }),
          options.signal,
        );
      } catch (error) {
        const status = containerCallStatus((error as { cause?: unknown }).cause);
        if (status === 409 && (await this.waitWhilePaused(waited, options.signal))) continue;
        if (status === 404 || status === 409) throw await this.deathError();
        throw error;
      }
    }
  }

  /**
   * A folder watch (this process's or the folder keeper's) pauses the container for a moment while it
   * measures: a command then waits for it. A pause that outlasts any measurement was left by a watcher
   * that died holding it, and is lifted. False when the container is not paused (the 409 meant death).
   */
  private async waitWhilePaused(waited: number, signal?: AbortSignal): Promise<boolean> {
    const inspected = await inspectContainer(this.container).catch(() => undefined);
    if (!inspected?.State.Paused) return false;
    if (waited >= PAUSE_OUTLIVED_MS) {
      await this.container.unpause().catch(() => undefined);
      return true;
    }
    await sleep(PAUSED_POLL_MS, undefined, signal ? { signal } : undefined).catch(() => undefined);
    return !signal?.aborted;
  }

  /** Why the container is gone or stopped; never replaced silently: the caller decides to open a new session. */
  private async deathError(): Promise<SandboxError> {
    const inspected = await inspectContainer(this.container).catch(() => undefined);
    const reason = await this.engine.deaths.settle(this.info.id, inspected ? 'stopped' : 'removed');
    if (inspected)
      return deadSessionError(
        inspected,
        reason ?? this.engine.deaths.explain(this.info.id, inspected.State.FinishedAt),
      );
    const name = this.info.name ?? this.info.id.slice(0, 12);
    const why =
      reason?.kind === 'removed' || reason?.kind === 'closed'
        ? describeDeath(reason)
        : 'it was removed from outside (docker rm, or agent-sandbox close from another window or terminal)';
    return new SandboxError('session-dead', `The session ${name} no longer exists: ${why}.`, GONE_HINT);
  }
}

/** How often a command waiting on a measuring pause looks again, and when a pause counts as left behind. */
const PAUSED_POLL_MS = 100;
const PAUSE_OUTLIVED_MS = 15_000;

const GONE_HINT =
  'Its processes and any files outside a mounted workspace folder are gone. Open a new session (sandbox_open, or agent-sandbox open); it starts empty.';
const DEAD_HINT =
  'Its processes and any files outside a mounted workspace folder are gone, and it is not replaced by itself. Close it (sandbox_close, or agent-sandbox close), then open a new session (sandbox_open, or agent-sandbox open).';

export function commandLine(request: ExecRequest): string[] {
  if (request.cmd && request.command !== undefined) {
    throw new SandboxError(
      'invalid-input',
      'Give either command (a shell string) or cmd (an argv array), not both.',
      'Use command for shell syntax like pipes; use cmd to pass arguments exactly.',
    );
  }
  if (request.cmd) {
    if (request.cmd.length === 0 || request.cmd[0] === '')
      throw new SandboxError(
        'invalid-input',
        'cmd is empty.',
        'Give the program and its arguments, like ["python3", "main.py"].',
      );
    return [...request.cmd];
  }
  if (request.command === undefined || request.command.trim() === '') {
    throw new SandboxError(
      'invalid-input',
      'No command was given.',
      'Give command (a shell string, like "ls -la") or cmd (an argv array).',
    );
  }
  return ['sh', '-c', request.command];
}

function parseFindRecord(record: string): FileEntry | undefined {
  const match = /^(\S) (\d+) (\d+(?:\.\d+)?) (.*)$/s.exec(record);
  if (!match) return undefined;
  const type = match[1] === 'f' ? 'file' : match[1] === 'd' ? 'directory' : match[1] === 'l' ? 'symlink' : 'other';
  return { path: match[4]!, type, size: Number(match[2]), mtime: new Date(Number(match[3]) * 1000).toISOString() };
}

/** Why a session's container is no longer running: from the engine's events when they told (`reason`), else from its state. */
export function deadSessionError(inspected: ContainerInspect, reason?: DeathReason): SandboxError {
  const name = inspected.Config.Labels[LABEL.session] ?? inspected.Id.slice(0, 12);
  const state = inspected.State;
  const at = state.FinishedAt;
  let why: string;
  // A recorded death first: a container killed while paused (the folder watch pauses it) shows paused until it is gone.
  if (reason && reason.kind !== 'removed' && reason.kind !== 'closed') why = describeDeath(reason);
  else if (state.Status === 'paused') why = 'it is paused';
  else if (state.OOMKilled)
    why = `it ran out of memory${inspected.HostConfig?.Memory ? ` (limit ${formatSize(inspected.HostConfig.Memory)})` : ''} and the kernel killed it at ${at}`;
  else if (state.ExitCode === 137) why = `it was killed (SIGKILL) at ${at}`;
  else if (state.ExitCode === 139) why = `it crashed with a segmentation fault (SIGSEGV) at ${at}`;
  else why = `it stopped with exit code ${state.ExitCode}${state.Error ? ` (${state.Error})` : ''} at ${at}`;
  return new SandboxError('session-dead', `The session ${name} is no longer running: ${why}.`, DEAD_HINT);
}

/** "3 processes (python3, sleep ×2)". */
function describeProcesses(names: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const name of names) counts.set(name, (counts.get(name) ?? 0) + 1);
  const list = [...counts].map(([name, count]) => (count > 1 ? `${name} ×${count}` : name)).join(', ');
  return `${names.length} process${names.length === 1 ? '' : 'es'} (${list})`;
}
