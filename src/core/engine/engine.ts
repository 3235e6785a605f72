/**
 * The engine interface: what every sandbox engine (Docker today, an embedded one later) provides.
 * Core code talks only to these types; engines live under src/engines/.
 */
import type { InterpreterLanguage } from '../interpreters/kernels';
import type { DecisionQuery, NetworkDecisionPage } from '../network/decisionLog';
import type { PersistentInterpreter } from '../interpreters/persistentInterpreter';
import type { SessionDeath } from '../sessions/sessionDeath';
import type { Runtime, SandboxMode, SandboxSpec, WorkspaceAccess } from '../spec/spec';

export type EngineKind = 'docker' | 'virtual';

export interface EngineInfo {
  kind: EngineKind;
  /** Product name as the engine reports it, e.g. "Docker Engine - Community" or "Podman Engine". */
  product: string;
  version: string;
  apiVersion?: string;
  /** Where the engine was reached, e.g. unix:///var/run/docker.sock. */
  endpoint: string;
  /** Where that address came from: a setting, DOCKER_HOST, a Docker context, the default socket. */
  endpointSource?: string;
  os?: string;
  /** What sandboxes on this engine do not get that they get on Docker, in the user's words (Podman: see README). */
  differences?: string[];
}

export interface Progress {
  message: string;
  /** 0..100 when known. */
  percent?: number;
}

export type ProgressCallback = (progress: Progress) => void;

/** Who shares a session: the workspace (default), one agent, or one workflow run. */
export type ScopeKind = 'workspace' | 'agent' | 'workflow';

export interface SessionScope {
  kind: ScopeKind;
  /** The agent's name or the workflow run's id; none for the workspace scope. */
  key?: string;
}

/** Which program opened a session: VS Code windows clean up after themselves, the CLI's user closes its own, an MCP server closes a connection's own when it ends. */
export type SessionClient = 'vscode' | 'cli' | 'mcp';

export interface OpenOptions {
  /** Session name; unique per workspace and scope. Compute-mode sandboxes have none. */
  name?: string;
  /** Who shares the session; the workspace scope when absent. */
  scope?: SessionScope;
  client?: SessionClient;
  /** The session belongs to this process (an MCP connection's own): it records the process, and gc removes it once the process is gone. */
  ownedByProcess?: boolean;
  /** Host folder that identifies the owner and is mounted at /workspace when access is ro or rw. */
  workspaceFolder?: string;
  /** Discarded after one use (compute mode). */
  ephemeral?: boolean;
  /** Files to place before anything runs; absolute sandbox paths (already checked by the caller). */
  files?: readonly ResolvedFile[];
  /** Images to use per runtime (from settings, flags or the environment). */
  images?: Partial<Record<Runtime, string>>;
  /**
   * Names at the top of the workspace folder that an rw sandbox may not create, change, rename or
   * remove (see core/policy/protectedPaths.ts). Engines protect PROTECTED_PATHS when this is absent;
   * an empty list means the user lifted the protection for this folder.
   */
  protectedPaths?: readonly string[];
  /** The values of the spec's bound secrets, by name: for the egress proxy alone, never the sandbox. */
  boundSecretValues?: Readonly<Record<string, string>>;
  onProgress?: ProgressCallback;
  signal?: AbortSignal;
}

export interface SessionInfo {
  id: string;
  name?: string;
  engine: EngineKind;
  mode: SandboxMode;
  runtime: Runtime;
  image: string;
  spec: SandboxSpec;
  workspaceAccess: WorkspaceAccess;
  workspaceFolder?: string;
  scope: SessionScope;
  client?: SessionClient;
  network: boolean;
  createdAt: string;
  state: 'running' | 'stopped' | 'starting' | 'unknown';
  /** Things the caller should know, e.g. that a local image replaced one that could not be pulled. */
  notices: string[];
  /**
   * A read-write session: the names at the top of the folder it may not change (see
   * core/policy/protectedPaths.ts); empty when its opener lifted the protection, undefined when not
   * known (made before this was recorded). A client that keeps them protected must not use a session
   * that does not.
   */
  protectedPaths?: readonly string[];
  /** The process that made the sandbox, for compute mode and sessions owned by a process (it is an orphan once that process is gone), and whether it was made ahead for a warm pool. */
  owner?: {
    pid: number;
    host: string;
    pooled: boolean;
    /** A shared warm container no process claimed yet: when its wait ends (it ends itself then). */
    waitsUntil?: string;
  };
}

export interface ExecRequest {
  /** A shell command line, run with `sh -c`. */
  command?: string;
  /** An argv array, run without a shell. */
  cmd?: readonly string[];
  stdin?: string | Uint8Array;
  /** Working directory; defaults to /workspace. */
  cwd?: string;
  env?: Readonly<Record<string, string>>;
  /** Overrides the sandbox's timeout for this call. */
  timeoutSeconds?: number;
}

export type ExecOutcome = 'ok' | 'error' | 'timeout' | 'oom' | 'signal' | 'cancelled';

export interface ExecResult {
  outcome: ExecOutcome;
  /** The process's exit code; 128+n when it died of signal n. Null when it never reported one. */
  exitCode: number | null;
  signal?: string;
  stdout: string;
  stderr: string;
  stdoutBytes: number;
  stderrBytes: number;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  durationMs: number;
  /** What to do next, when the call did not succeed. */
  hint?: string;
  /** A persistent interpreter's call: the repr of its final expression's value, when it had one. */
  value?: string;
  /** A write found no room in a writable place (ENOSPC): the disk or inode limit, see core/limits/diskLimit.ts. */
  diskLimitReached?: boolean;
  notices: string[];
}

export type FileEncoding = 'utf8' | 'base64';

export interface FileInput {
  path: string;
  content: string;
  encoding?: FileEncoding;
  /** Unix permission bits, e.g. 0o755 for a script. */
  mode?: number;
}

export interface ResolvedFile {
  /** Absolute path inside the sandbox. */
  path: string;
  data: Uint8Array;
  mode?: number;
}

export interface WriteResult {
  files: { path: string; bytes: number }[];
}

export interface ReadOptions {
  /** Most bytes to return; defaults to the sandbox's file size cap. */
  maxBytes?: number;
  /** Where to start, in bytes from the start of the file (0 by default). */
  offset?: number;
  encoding?: FileEncoding | 'auto';
}

export interface FileContent {
  path: string;
  content: string;
  encoding: FileEncoding;
  /** Size of the file in the sandbox. */
  size: number;
  /** The byte the content starts at (0 unless an offset was asked for). */
  offset?: number;
  /** True when the file goes on after the content returned. */
  truncated: boolean;
}

export type FileType = 'file' | 'directory' | 'symlink' | 'other';

export interface FileEntry {
  /** Absolute path inside the sandbox. */
  path: string;
  type: FileType;
  size: number;
  /** ISO 8601 modification time. */
  mtime: string;
}

export interface ListOptions {
  /** 1 lists the directory's own entries; more descends. */
  depth?: number;
}

export interface ListResult {
  entries: FileEntry[];
  truncated: boolean;
}

export interface DeleteOptions {
  recursive?: boolean;
}

export interface ShellOptions {
  /** Initial terminal size; engines use 80x24 when not given. */
  cols?: number;
  rows?: number;
  /** The program to run on the terminal; defaults to an interactive bash, or sh where there is no bash. */
  command?: readonly string[];
  /** Working directory; defaults to /workspace. */
  cwd?: string;
  env?: Readonly<Record<string, string>>;
}

/**
 * A long-running program in a sandbox on pipes, not a terminal: what a persistent interpreter runs
 * in. It runs as the sandbox's user under the same limits; its output arrives as it is written.
 */
export interface SandboxProcess {
  /** Writes to its standard input. */
  write(data: string | Uint8Array): void;
  onStdout(listener: (chunk: Buffer) => void): void;
  onStderr(listener: (chunk: Buffer) => void): void;
  /** Resolves once the process has ended, with its exit code when the engine knows it. */
  readonly exited: Promise<number | null>;
  /** Ends the process and everything it started. */
  close(): Promise<void>;
}

export interface ProcessOptions {
  /** Working directory; defaults to /workspace. */
  cwd?: string;
  env?: Readonly<Record<string, string>>;
}

/** An interactive terminal inside a sandbox, e.g. behind "Open Terminal in Sandbox". */
export interface ShellSession {
  /** Sends keystrokes or pasted text to the terminal, as typed (Enter is "\r"). */
  write(data: string | Uint8Array): void;
  /** Changes the terminal size the programs inside see; does nothing once the shell has exited. */
  resize(cols: number, rows: number): Promise<void>;
  /** Terminal output, decoded as UTF-8; output that arrived before the first listener is replayed to it. */
  onData(listener: (data: string) => void): { dispose(): void };
  /** Fires once when the shell ends, with its exit code (null when unknown); also for a listener added later. */
  onExit(listener: (exitCode: number | null) => void): { dispose(): void };
  /** Kills the shell and every process it started, then fires onExit. */
  close(): Promise<void>;
}

/** A live sandbox: a compute-mode one-shot or a code-mode session. */
export interface Sandbox {
  readonly info: SessionInfo;
  exec(request: ExecRequest, signal?: AbortSignal): Promise<ExecResult>;
  writeFiles(files: readonly FileInput[], signal?: AbortSignal): Promise<WriteResult>;
  readFile(path: string, options?: ReadOptions, signal?: AbortSignal): Promise<FileContent>;
  listFiles(path: string, options?: ListOptions, signal?: AbortSignal): Promise<ListResult>;
  deletePath(path: string, options?: DeleteOptions, signal?: AbortSignal): Promise<{ path: string; deleted: boolean }>;
  /** Starts an interactive shell on a terminal; it runs as the sandbox's user, under the same limits. */
  openShell(options?: ShellOptions): Promise<ShellSession>;
  /** Starts a long-running program on pipes (engines that run real processes; see SandboxProcess). */
  openProcess?(argv: readonly string[], options?: ProcessOptions): Promise<SandboxProcess>;
  /**
   * The session's persistent interpreter, for engines that keep one themselves (the virtual engine);
   * where this is absent, it runs as a kernel process (openProcess, core/interpreters/interpreter.ts).
   */
  openInterpreter?(
    language: InterpreterLanguage,
    stdoutCap: number,
    signal?: AbortSignal,
  ): Promise<PersistentInterpreter>;
  /**
   * The network decisions of an allowlist sandbox (every connection it asked for: allowed with its
   * bytes, or refused with why), oldest first; read `cursor` before a call and pass it as `after`
   * afterwards for that call's own. Engines that enforce the allowlist provide it.
   */
  networkDecisions?(query?: DecisionQuery): Promise<NetworkDecisionPage>;
  close(): Promise<void>;
}

/** What removing a sandbox did besides: host changes undone or found (a stripped setuid bit, a placeholder folder removed). */
export interface RemoveOutcome {
  notices: string[];
}

/** Live resource use of a sandbox. */
export interface SessionStats {
  id: string;
  /** Percent of one core: 150 means one and a half cores busy. */
  cpuPercent: number;
  memoryBytes: number;
  memoryLimitBytes: number;
}

export interface SessionFilter {
  name?: string;
  workspaceFolder?: string;
  /** Only sessions of this scope (the workspace scope matches sessions without a scope label too). */
  scope?: SessionScope;
  /** Also compute-mode sandboxes (warm or running), for orphan cleanup; never shown as sessions. */
  includeCompute?: boolean;
}

/** How a sandbox is kept apart from the host: a container (kernel namespaces, cgroups) or an interpreter inside this process. */
export type IsolationModel = 'container' | 'in-process';

/**
 * What an engine can do, declared rather than discovered by failing: the tools tell the model, and
 * the contract tests assert each side of a difference.
 */
export interface EngineCapabilities {
  isolation: IsolationModel;
  /** Real processes: background jobs, signals, pgrep/kill, native programs. */
  processes: boolean;
  /** Package installs (pip, npm, apt-get). */
  packages: boolean;
  /** Network access can be turned on for a sandbox. */
  network: boolean;
  /** A sandbox's network can be limited to an allowlist, enforced outside it (absent: it cannot). */
  networkAllowlist?: boolean;
  /** Runtimes it runs. */
  languages: Runtime[];
  /** A memory limit enforced by killing what exceeds it (reported as an OOM kill). */
  memoryLimit: boolean;
  /** Sessions outlive the process that opened them (another process or a restarted window finds them). */
  persistentSessions: boolean;
}

export interface SandboxEngine {
  readonly kind: EngineKind;
  readonly capabilities: EngineCapabilities;
  info(signal?: AbortSignal): Promise<EngineInfo>;
  open(spec: SandboxSpec, options?: OpenOptions): Promise<Sandbox>;
  /** An existing session by id; throws session-not-found or session-dead. */
  attach(id: string, signal?: AbortSignal): Promise<Sandbox>;
  /** Code-mode sessions this engine holds, by their labels. */
  list(filter?: SessionFilter, signal?: AbortSignal): Promise<SessionInfo[]>;
  /** Removes a sandbox whatever its state (running, dead, already gone); says what it changed on the host, when anything. */
  remove(id: string, signal?: AbortSignal): Promise<RemoveOutcome | void>;
  /** Fires when a sandbox dies or is removed by anything but this process; engines that can tell provide it. */
  onSessionDeath?(listener: (death: SessionDeath) => void): { dispose(): void };
  /** Live CPU and memory of a sandbox, about once a second, while watched; engines that can measure offer it. */
  watchStats?(id: string, listener: (stats: SessionStats) => void): { dispose(): void };
  /** Why a sandbox that is no longer running stopped, in words, when the engine knows. */
  deathReason?(id: string): string | undefined;
  /**
   * The network decisions of an allowlist sandbox by id, also after it was removed (kept for a
   * while), for the panel and the activity log; see Sandbox.networkDecisions. Engines that enforce
   * the allowlist (capabilities.networkAllowlist) provide it.
   */
  networkDecisions?(id: string, query?: DecisionQuery): Promise<NetworkDecisionPage>;
  dispose(): Promise<void>;
}
