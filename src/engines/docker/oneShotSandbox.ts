/**
 * A compute-mode sandbox in a one-shot container (oneShot.ts). Its first command, with the files given
 * at open, is the runner's one request. A command with its own cwd or env, and every file operation,
 * turn it into an ordinary sandbox first (the files through one exec with tar, commands as execs), so
 * the whole Sandbox contract holds; compute mode itself only ever runs one command.
 */
import { SandboxError } from '../../core/errors';
import type {
  DeleteOptions,
  ExecRequest,
  ExecResult,
  FileInput,
  ListOptions,
  ReadOptions,
  ResolvedFile,
  Sandbox,
  SessionInfo,
  ShellOptions,
} from '../../core/engine/engine';
import { buildExecResult } from '../../core/results/results';
import type { DockerEngine } from './dockerEngine';
import { DockerSandbox, commandLine } from './dockerSandbox';
import { stagingError, type WaitingContainer } from './oneShot';
import { placeFiles } from './placeFiles';

export class OneShotSandbox implements Sandbox {
  private inner: DockerSandbox | undefined;
  private ran = false;
  private closed = false;

  constructor(
    private readonly engine: DockerEngine,
    private readonly waiting: WaitingContainer,
    readonly info: SessionInfo,
    private readonly owner: { uid: number; gid: number },
    private files: readonly ResolvedFile[],
    /** Hands the used container back for removal in the background. */
    private readonly retire: (waiting: WaitingContainer) => void,
  ) {}

  async exec(request: ExecRequest, signal?: AbortSignal): Promise<ExecResult> {
    if (this.inner || request.cwd !== undefined || Object.keys(request.env ?? {}).length > 0)
      return (await this.ordinary(signal)).exec(request, signal);
    this.checkOpen();
    const argv = commandLine(request);
    this.ran = true;
    const timeoutSeconds = request.timeoutSeconds ?? this.info.spec.timeoutSeconds;
    const { limits } = this.info.spec;
    const outcome = await this.engine.guard(
      () =>
        this.waiting.run(
          {
            argv,
            stdin:
              request.stdin === undefined
                ? undefined
                : typeof request.stdin === 'string'
                  ? Buffer.from(request.stdin)
                  : request.stdin,
            files: this.files,
            stdoutCap: limits.maxStdoutBytes,
            stderrCap: limits.maxStderrBytes,
            timeoutMs: timeoutSeconds * 1000,
            signal,
          },
          this.owner,
        ),
      signal,
    );
    this.files = [];
    if (outcome.stagingFailed) throw stagingError(outcome, limits);
    const oomKilled =
      outcome.exitCode === 137 &&
      !outcome.timedOut &&
      !outcome.cancelled &&
      (outcome.oomKilled === true || (await this.engine.oomSince(this.info.id, outcome.startedAt).catch(() => false)));
    const notices = outcome.cutShort
      ? [
          'The program’s output ended before the sandbox’s end marker (the runner was ended, or the connection to the engine closed its side): what it printed last may be missing.',
        ]
      : [];
    return buildExecResult({ ...outcome, oomKilled, timeoutSeconds, notices }, this.info.spec);
  }

  async writeFiles(files: readonly FileInput[], signal?: AbortSignal) {
    return (await this.ordinary(signal)).writeFiles(files, signal);
  }

  async readFile(path: string, options?: ReadOptions, signal?: AbortSignal) {
    return (await this.ordinary(signal)).readFile(path, options, signal);
  }

  async listFiles(path: string, options?: ListOptions, signal?: AbortSignal) {
    return (await this.ordinary(signal)).listFiles(path, options, signal);
  }

  async deletePath(path: string, options?: DeleteOptions, signal?: AbortSignal) {
    return (await this.ordinary(signal)).deletePath(path, options, signal);
  }

  async openShell(options?: ShellOptions) {
    return (await this.ordinary()).openShell(options);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.waiting.release();
    this.retire(this.waiting);
  }

  /** The same container as an ordinary exec-based sandbox, with the files given at open in place. */
  private async ordinary(signal?: AbortSignal): Promise<DockerSandbox> {
    if (this.inner) return this.inner;
    this.checkOpen();
    this.ran = true;
    this.waiting.keep();
    const user = `${this.owner.uid}:${this.owner.gid}`;
    await this.engine.guard(
      () =>
        placeFiles({
          docker: this.engine.docker,
          container: this.waiting.container,
          user,
          files: this.files,
          limits: this.info.spec.limits,
          signal,
        }),
      signal,
    );
    this.files = [];
    this.inner = new DockerSandbox(this.engine, this.waiting.container, this.info, user);
    return this.inner;
  }

  private checkOpen(): void {
    if (this.closed)
      throw new SandboxError('session-dead', 'This sandbox was closed.', 'Run the code again with sandbox_run.');
    if (this.ran) {
      throw new SandboxError(
        'session-dead',
        'This compute-mode sandbox already ran its program; it runs one and is discarded.',
        'Run the next program with sandbox_run, or open a session (sandbox_open) for several commands that share files.',
      );
    }
  }
}
