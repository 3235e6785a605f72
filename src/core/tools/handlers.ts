/** What each language-model tool does with its validated input, on the sandbox service. */
import type { EngineCapabilities, ExecResult, ProgressCallback } from '../engine/engine';
import { SandboxError } from '../errors';
import type { FileStore } from '../files/fileStore';
import { posix } from 'node:path';
import { resolveWorkspacePath } from '../files/paths';
import { sandboxIdOf } from '../sessions/sessions';
import type { SandboxService } from '../sessions/sandboxService';
import { publishFile, stageFile } from '../files/staging';
import {
  formatClose,
  formatDelete,
  formatExecResult,
  formatList,
  formatRead,
  formatSession,
  formatWrite,
  formatPublished,
  formatStaged,
} from './format';
import type { TextBudget } from './fitBudget';
import type { ToolInput, ToolName } from './schemas';
import { readWorkspaceFile, writeWorkspaceFile } from '../files/workspaceFiles';

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

type Handler<N extends ToolName> = (input: ToolInput<N>, context: HandlerContext) => Promise<string>;

/** A read without max_bytes returns the start of a large file, not all of it, to spare the model's context. */
const DEFAULT_READ_BYTES = 256 * 1024;

const fileMode = (executable: boolean | undefined) => (executable ? 0o755 : undefined);

export const TOOL_HANDLERS: { [N in ToolName]: Handler<N> } = {
  async sandbox_run(input, context) {
    const result = await context.service.run(
      {
        code: input.code,
        runtime: input.runtime,
        stdin: input.stdin,
        timeoutSeconds: input.timeout_seconds,
        files: input.files?.map((file) => ({
          path: file.path,
          content: file.content,
          encoding: file.encoding,
          mode: fileMode(file.executable),
        })),
      },
      { signal: context.signal, onProgress: context.onProgress },
    );
    return formatExecResult(context.redactResult?.(result) ?? result, { engine: context.engine }, context.budget);
  },

  async sandbox_open(input, context) {
    const opened = await context.service.openSession(
      {
        session: input.session,
        scope:
          input.scope === 'agent'
            ? { kind: 'agent', key: input.agent }
            : input.scope === 'workflow'
              ? { kind: 'workflow', key: input.workflow_run }
              : undefined,
        runtime: input.runtime,
        workspaceAccess: input.workspace_access,
        network: input.network,
      },
      { signal: context.signal, onProgress: context.onProgress },
    );
    const text = formatSession(opened.sandbox.info, opened.created, context.capabilities);
    return opened.notices.length ? `${text}\n${opened.notices.join('\n')}` : text;
  },

  async sandbox_exec(input, context) {
    return context.service.use(
      input.sandbox_id,
      async (sandbox) => {
        const result = await sandbox.exec(
          {
            command: input.command,
            cmd: input.cmd,
            cwd: input.cwd,
            env: input.env,
            stdin: input.stdin,
            timeoutSeconds: input.timeout_seconds,
          },
          context.signal,
        );
        return formatExecResult(
          context.redactResult?.(result) ?? result,
          { engine: context.engine, sandboxId: sandboxIdOf(sandbox.info) },
          context.budget,
        );
      },
      { signal: context.signal, onProgress: context.onProgress },
    );
  },

  async sandbox_fs_write(input, context) {
    return context.service.use(
      input.sandbox_id,
      async (sandbox) =>
        formatWrite(
          await sandbox.writeFiles(
            input.files.map((file) => ({
              path: file.path,
              content: file.content,
              encoding: file.encoding,
              mode: fileMode(file.executable),
            })),
            context.signal,
          ),
        ),
      { signal: context.signal },
    );
  },

  async sandbox_fs_read(input, context) {
    return context.service.use(
      input.sandbox_id,
      async (sandbox) =>
        formatRead(
          await sandbox.readFile(
            input.path,
            { maxBytes: input.max_bytes ?? DEFAULT_READ_BYTES, encoding: input.encoding },
            context.signal,
          ),
          context.budget,
        ),
      { signal: context.signal },
    );
  },

  async sandbox_fs_list(input, context) {
    return context.service.use(
      input.sandbox_id,
      async (sandbox) =>
        formatList(
          await sandbox.listFiles(input.path ?? '.', { depth: input.depth }, context.signal),
          resolveWorkspacePath(input.path ?? '.'),
        ),
      { signal: context.signal },
    );
  },

  async sandbox_fs_delete(input, context) {
    return context.service.use(
      input.sandbox_id,
      async (sandbox) =>
        formatDelete(await sandbox.deletePath(input.path, { recursive: input.recursive }, context.signal)),
      { signal: context.signal },
    );
  },

  async sandbox_stage_file(input, context) {
    let data: Uint8Array;
    let source: string;
    if (input.key !== undefined) {
      const stored = await context.store.get(input.key);
      data = stored.data;
      source = `${stored.file.key} ("${stored.file.name}")`;
    } else {
      const folder = context.workspaceFolder;
      const access = context.service.allowedAccess();
      if (!folder || access === 'none') {
        throw new SandboxError(
          'permission-denied',
          folder
            ? 'Staging from the workspace is off: the user allows no workspace access.'
            : 'There is no trusted workspace folder to stage from.',
          'Ask the user to attach the file (they can allow workspace access with the setting agentSandbox.workspaceAccess, ro or rw), or stage a file store key instead.',
        );
      }
      data = await readWorkspaceFile(folder, input.workspace_path!, context.store.maxFileBytes);
      source = `the workspace file ${input.workspace_path}`;
    }
    return context.service.use(
      input.sandbox_id,
      async (sandbox) =>
        formatStaged(await stageFile(sandbox, data, input.path, source, context.signal), sandboxIdOf(sandbox.info)),
      { signal: context.signal },
    );
  },

  async sandbox_publish_file(input, context) {
    const folder = context.workspaceFolder;
    // Refused before anything is read, so a failed call changes nothing.
    if (input.save_to_workspace !== undefined && !folder) {
      throw new SandboxError(
        'permission-denied',
        'There is no trusted workspace folder to save into.',
        'Publish without save_to_workspace; the key it returns keeps the file.',
      );
    }
    // Writing into the user's folder needs both their confirmation and read-write access, so that
    // "Always Allow" on this tool never lets a model write a workspace the user only shares read-only.
    if (input.save_to_workspace !== undefined && context.service.allowedAccess() !== 'rw') {
      throw new SandboxError(
        'permission-denied',
        `Saving into the workspace needs read-write workspace access; the user allows "${context.service.allowedAccess()}".`,
        'Publish without save_to_workspace and tell the user the key (they can save it with agent-sandbox files download), or ask them to allow read-write access (Sandbox: Set Workspace Access).',
      );
    }
    // The store keeps the name on disk, where no later redaction reaches it: a secret in it is taken out first.
    const name = (context.redactText ?? ((text: string) => text))(
      input.name ?? posix.basename(resolveWorkspacePath(input.path)),
    );
    const published = await context.service.use(
      input.sandbox_id,
      (sandbox) => publishFile(sandbox, context.store, input.path, { name, signal: context.signal }),
      { signal: context.signal },
    );
    // The user confirmed this write in prepareInvocation (see confirmations.ts).
    if (input.save_to_workspace !== undefined) {
      await writeWorkspaceFile(folder!, input.save_to_workspace, published.data, {
        overwrite: input.overwrite,
        protectedPaths: context.protectedPaths,
      }).catch((error: unknown) => {
        if (!SandboxError.is(error)) throw error;
        throw new SandboxError(
          error.reason,
          `${error.message} The file was still published to the file store as ${published.file.key}.`,
          error.hint,
        );
      });
    }
    return formatPublished({ file: published.file, path: published.path, savedTo: input.save_to_workspace });
  },

  async sandbox_close(input, context) {
    const closed = await context.service.close(input.sandbox_id, context.signal);
    return [formatClose(closed.name ?? closed.id), ...closed.notices].join('\n');
  },
};
