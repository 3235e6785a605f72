/** What a tool's handler gets besides its input: the sandboxes, the engine, the budget and the host-side pieces. */
import type { EngineCapabilities, ExecResult, ProgressCallback } from '../engine/engine';
import type { FileStore } from '../files/fileStore';
import type { SandboxService } from '../sessions/sandboxService';
import type { TextBudget } from './fitBudget';

export interface HandlerContext {
  service: SandboxService;
  /** The engine as results name it, e.g. "docker" or "virtual (in-process isolation, no real processes, …)". */
  engine: string;
  /** What the engine can do, told to the model when a session opens. */
  capabilities?: EngineCapabilities;
  signal: AbortSignal;
  budget?: TextBudget;
  /** Takes host secrets out of a result before it is formatted and shortened. */
  redactResult?: (result: ExecResult) => ExecResult;
  /** Takes host secrets out of a text that is kept (a stored file's name). */
  redactText?: (text: string) => string;
  onProgress?: ProgressCallback;
  /** The local file store that sandbox_stage_file reads and sandbox_publish_file writes. */
  store: FileStore;
  /** The workspace folder on the host, for staging from it and saving into it; undefined without one or when it is not trusted. */
  workspaceFolder?: string;
  /** Names at the top of the workspace folder that save_to_workspace may not write; PROTECTED_PATHS when absent. */
  protectedPaths?: readonly string[];
}
