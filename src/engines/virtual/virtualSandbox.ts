/** A live virtual sandbox: commands and file operations run in its worker, with the Docker engine's result and error shapes. */
import { posix } from 'node:path';
import type {
  DeleteOptions,
  ExecRequest,
  ExecResult,
  FileContent,
  FileInput,
  ListOptions,
  ListResult,
  ReadOptions,
  Sandbox,
  SessionInfo,
  ShellOptions,
  ShellSession,
  WriteResult,
} from '../../core/engine/engine';
import { displayName } from '../../core/results/displayName';
import { interpreterName, kernelRecipe, type InterpreterLanguage } from '../../core/interpreters/kernels';
import type { PersistentInterpreter } from '../../core/interpreters/persistentInterpreter';
import { SandboxError } from '../../core/errors';
import { resolveFiles } from '../../core/files/files';
import { CappedOutput } from '../../core/results/output';
import { WORKSPACE_DIR, resolveReadablePath, resolveWorkspacePath } from '../../core/files/paths';
import { DISK_LIMIT_REACHED } from '../../core/limits/diskLimit';
import type { DecisionQuery, NetworkDecisionPage } from '../../core/network/decisionLog';
import { buildExecResult } from '../../core/results/results';
import { MiB } from '../../core/spec/units';
import type { DecisionMemory } from './decisionMemory';
import type { ExecReply } from './protocol';
import { WorkerGone, type WorkerClient } from './workerClient';
import { SANDBOX_HOME } from './workerFileSystem';
import { shellQuote } from './shellQuote';
import { openVirtualShell } from './virtualShell';
import { VirtualInterpreter } from './virtualInterpreter';

/** Output beyond this stops a command (it is held in memory before the caps apply). */
const MAX_OUTPUT_BYTES = 64 * MiB;
const BASE_ENV = {
  HOME: SANDBOX_HOME,
  USER: 'user',
  LOGNAME: 'user',
  PATH: '/usr/bin:/bin',
  LANG: 'C.UTF-8',
  HOSTNAME: 'sandbox',
};
const DEAD_HINT =
  'Its files are gone. Close it (sandbox_close, or agent-sandbox close), then open a new session (sandbox_open); it starts empty.';

export class VirtualSandbox implements Sandbox {
  private closed = false;

  constructor(
    private readonly worker: WorkerClient,
    readonly info: SessionInfo,
    private readonly onClose: () => void,
    /** Its network decisions, for an allowlist sandbox. */
    private readonly decisions?: DecisionMemory,
  ) {}

  /** Why the session is no longer usable, or undefined. */
  get deathReason(): string | undefined {
    return this.closed ? 'it was closed' : this.worker.gone?.why;
  }

  async exec(request: ExecRequest, signal?: AbortSignal): Promise<ExecResult> {
    const script = commandLine(request);
    // `bash FILE` (a compute-mode program) runs the file's lines at top level, where output before a deadline survives.
    const cwd = request.cwd ? posix.resolve(WORKSPACE_DIR, request.cwd) : WORKSPACE_DIR;
    const scriptFile =
      request.cmd?.length === 2 && /^(ba)?sh$/.test(request.cmd[0]!) && !request.cmd[1]!.startsWith('-')
        ? posix.resolve(cwd, request.cmd[1]!)
        : undefined;
    this.check();
    const timeoutSeconds = request.timeoutSeconds ?? this.info.spec.timeoutSeconds;
    const stdin =
      request.stdin === undefined
        ? undefined
        : typeof request.stdin === 'string'
          ? { stdin: request.stdin, stdinKind: 'text' as const }
          : { stdin: Buffer.from(request.stdin).toString('latin1'), stdinKind: 'bytes' as const };
    const started = performance.now();
    let reply: ExecReply;
    const notices: string[] = [];
    let oomKilled = false;
    /** The folder watch ended the worker: a mounted folder grew past the disk limit. */
    let diskStopped = false;
    try {
      reply = await this.worker.exec(
        {
          script,
          ...(scriptFile ? { scriptFile } : {}),
          ...stdin,
          cwd,
          env: { ...BASE_ENV, ...this.info.spec.env, ...request.env },
          timeoutMs: timeoutSeconds * 1000,
          maxOutputBytes: MAX_OUTPUT_BYTES,
        },
        signal,
      );
    } catch (error) {
      if (!(error instanceof WorkerGone)) throw error;
      // The worker was ended (a command that ignored its deadline, or memory): the session ends with it.
      oomKilled = error.outOfMemory;
      diskStopped = error.why.startsWith(DISK_LIMIT_REACHED);
      notices.push(
        `The virtual sandbox was stopped because ${error.why}; its files are gone. Open a new session to continue.`,
      );
      reply = {
        stdout: '',
        stderr: '',
        exitCode: 137,
        timedOut: !oomKilled && !diskStopped && !signal?.aborted,
        cancelled: !oomKilled && !diskStopped && Boolean(signal?.aborted),
      };
    }
    const stdout = new CappedOutput(this.info.spec.limits.maxStdoutBytes);
    const stderr = new CappedOutput(this.info.spec.limits.maxStderrBytes);
    stdout.push(Buffer.from(reply.stdout, 'utf8'));
    stderr.push(Buffer.from(reply.stderr, 'utf8'));
    // As a killed process in a container: the time limit and a cancellation end the command with SIGKILL's code.
    const exitCode = reply.timedOut || reply.cancelled ? 137 : reply.exitCode;
    const result = buildExecResult(
      {
        exitCode,
        timedOut: reply.timedOut,
        cancelled: reply.cancelled,
        oomKilled,
        durationMs: performance.now() - started,
        stdout,
        stderr,
        timeoutSeconds,
        notices,
      },
      this.info.spec,
    );
    return diskStopped
      ? {
          ...result,
          diskLimitReached: true,
          hint: `Agent Sandbox stopped the session: ${this.deathReason}. ${DEAD_HINT}`,
        }
      : result;
  }

  async writeFiles(files: readonly FileInput[]): Promise<WriteResult> {
    const resolved = resolveFiles(files, this.info.spec.limits);
    if (resolved.length === 0) return { files: [] };
    if (this.info.workspaceAccess === 'ro') throw readOnly(resolved[0]!.path, 'write');
    return this.call({
      type: 'write',
      files: resolved.map((file) => ({ path: file.path, data: file.data, mode: file.mode })),
    });
  }

  async readFile(path: string, options: ReadOptions = {}): Promise<FileContent> {
    const absolute = resolveReadablePath(path);
    const maxBytes = Math.min(
      options.maxBytes ?? this.info.spec.limits.maxFileSizeBytes,
      this.info.spec.limits.maxFileSizeBytes,
    );
    return this.call({
      type: 'read',
      path: absolute,
      maxBytes,
      offset: Math.max(0, Math.floor(options.offset ?? 0)),
      encoding: options.encoding ?? 'auto',
    });
  }

  async listFiles(path: string, options: ListOptions = {}): Promise<ListResult> {
    const absolute = resolveWorkspacePath(path);
    return this.call({
      type: 'list',
      path: absolute,
      depth: Math.max(1, Math.min(options.depth ?? 1, 32)),
      most: this.info.spec.limits.maxFiles,
    });
  }

  async deletePath(path: string, options: DeleteOptions = {}): Promise<{ path: string; deleted: boolean }> {
    const absolute = resolveWorkspacePath(path);
    if (absolute === WORKSPACE_DIR)
      throw new SandboxError('invalid-input', 'Cannot delete /workspace itself.', 'Delete the files inside it.');
    if (this.info.workspaceAccess === 'ro') throw readOnly(absolute, 'delete');
    return this.call({ type: 'delete', path: absolute, recursive: Boolean(options.recursive) });
  }

  async openShell(options: ShellOptions = {}): Promise<ShellSession> {
    this.check();
    if (options.command && (options.command.length === 0 || options.command[0] === '')) {
      throw new SandboxError(
        'invalid-input',
        'The shell command is empty.',
        'Leave it out for an interactive shell, or give the program and its arguments.',
      );
    }
    return openVirtualShell(this, options);
  }

  /** The session's persistent Python, kept by its worker: every handle reaches the same state. */
  async openInterpreter(
    language: InterpreterLanguage,
    stdoutCap: number,
    signal?: AbortSignal,
  ): Promise<PersistentInterpreter> {
    this.check();
    if (language !== 'python')
      throw new SandboxError(
        'unsupported',
        `The virtual engine keeps no ${interpreterName(language)} interpreter between calls; it keeps only Python's.`,
        `Run the code with ${kernelRecipe(language).oneShot} instead, or use the Docker engine.`,
      );
    return VirtualInterpreter.open(
      this.worker,
      {
        env: { ...BASE_ENV, ...this.info.spec.env },
        outputCap: stdoutCap,
        memoryBytes: this.info.spec.limits.memoryBytes,
      },
      signal,
    );
  }

  /** Every request curl and wget made, allowed or refused (none without the allowlist); readable after the close too. */
  async networkDecisions(query?: DecisionQuery): Promise<NetworkDecisionPage> {
    return this.decisions?.read(query) ?? { decisions: [], cursor: 0, truncated: false };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.worker.kill('it was closed');
    this.onClose();
  }

  private check(): void {
    const why = this.deathReason;
    if (why)
      throw new SandboxError(
        'session-dead',
        `The session ${this.info.name ?? this.info.id.slice(0, 12)} is no longer running: ${why}.`,
        DEAD_HINT,
      );
  }

  private async call<T>(request: Parameters<WorkerClient['request']>[0]): Promise<T> {
    this.check();
    try {
      return await this.worker.request<T>(request);
    } catch (error) {
      if (error instanceof WorkerGone) this.check();
      throw error;
    }
  }
}

function readOnly(path: string, action: string): SandboxError {
  return new SandboxError(
    'read-only',
    `Cannot ${action} ${displayName(path)}: the workspace is read-only for file tools (the session's own writes under /workspace stay in its memory).`,
    'Ask the user for read-write workspace access (setting agentSandbox.workspaceAccess, or --workspace rw), or write under /tmp instead.',
  );
}

/**
 * The shell source for a request: `command` as is, or `cmd` quoted word by word. Programs are
 * named as in a container: `node` runs just-bash's js-exec, and `python3 -u` is just python3 (its
 * output is never buffered here).
 */
function commandLine(request: ExecRequest): string {
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
    let argv = [...request.cmd];
    if (/^python3?$/.test(posix.basename(argv[0]!)) && argv[1] === '-u') argv = [argv[0]!, ...argv.slice(2)];
    return argv.map(shellQuote).join(' ');
  }
  if (request.command === undefined || request.command.trim() === '') {
    throw new SandboxError(
      'invalid-input',
      'No command was given.',
      'Give command (a shell string, like "ls -la") or cmd (an argv array).',
    );
  }
  return request.command;
}
