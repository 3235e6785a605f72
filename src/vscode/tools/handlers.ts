/** What each language-model tool does with its validated input, on the sandbox service. */
import type { ProgressCallback } from '../../core/engine';
import { resolveWorkspacePath } from '../../core/paths';
import type { SandboxService } from '../../core/sandboxService';
import { formatClose, formatDelete, formatExecResult, formatList, formatRead, formatSession, formatWrite, type TextBudget } from '../../core/tools/format';
import type { ToolInput, ToolName } from '../../core/tools/schemas';

export interface HandlerContext {
  service: SandboxService;
  engine: string;
  signal: AbortSignal;
  budget?: TextBudget;
  onProgress?: ProgressCallback;
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
        files: input.files?.map((file) => ({ path: file.path, content: file.content, encoding: file.encoding, mode: fileMode(file.executable) })),
      },
      { signal: context.signal, onProgress: context.onProgress },
    );
    return formatExecResult(result, { engine: context.engine }, context.budget);
  },

  async sandbox_open(input, context) {
    const opened = await context.service.open(
      { session: input.session, runtime: input.runtime, workspaceAccess: input.workspace_access, network: input.network },
      { signal: context.signal, onProgress: context.onProgress },
    );
    const text = formatSession(opened.sandbox.info, opened.created);
    return opened.notices.length ? `${text}\n${opened.notices.join('\n')}` : text;
  },

  async sandbox_exec(input, context) {
    return context.service.use(
      input.sandbox_id,
      async (sandbox) => {
        const result = await sandbox.exec({ command: input.command, cmd: input.cmd, cwd: input.cwd, env: input.env, stdin: input.stdin, timeoutSeconds: input.timeout_seconds }, context.signal);
        return formatExecResult(result, { engine: context.engine, sandboxId: sandbox.info.name }, context.budget);
      },
      { signal: context.signal, onProgress: context.onProgress },
    );
  },

  async sandbox_fs_write(input, context) {
    return context.service.use(input.sandbox_id, async (sandbox) => formatWrite(await sandbox.writeFiles(input.files.map((file) => ({ path: file.path, content: file.content, encoding: file.encoding, mode: fileMode(file.executable) })), context.signal)), { signal: context.signal });
  },

  async sandbox_fs_read(input, context) {
    return context.service.use(input.sandbox_id, async (sandbox) => formatRead(await sandbox.readFile(input.path, { maxBytes: input.max_bytes ?? DEFAULT_READ_BYTES, encoding: input.encoding }, context.signal)), { signal: context.signal });
  },

  async sandbox_fs_list(input, context) {
    return context.service.use(input.sandbox_id, async (sandbox) => formatList(await sandbox.listFiles(input.path ?? '.', { depth: input.depth }, context.signal), resolveWorkspacePath(input.path ?? '.')), { signal: context.signal });
  },

  async sandbox_fs_delete(input, context) {
    return context.service.use(input.sandbox_id, async (sandbox) => formatDelete(await sandbox.deletePath(input.path, { recursive: input.recursive }, context.signal)), { signal: context.signal });
  },

  async sandbox_close(input, context) {
    const closed = await context.service.close(input.sandbox_id, context.signal);
    return formatClose(closed.name ?? closed.id);
  },
};
