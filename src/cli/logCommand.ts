/** `agent-sandbox log`: the folder's audit log (tool calls and network decisions) as JSON Lines. */
import type { SandboxEngine } from '../core/engine/engine';
import { auditLog, jsonLines } from '../core/sessions/auditLog';
import { usageError } from './args';
import { workspaceFolder, type CommandContext } from './commands';

export async function logCommand(engine: SandboxEngine, context: CommandContext): Promise<number> {
  const { args, signal } = context;
  if (args.positionals.length) throw usageError(`log takes no arguments (got "${args.positionals.join(' ')}").`);
  process.stdout.write(jsonLines(await auditLog(workspaceFolder(args), engine, signal, context.secrets.redact)));
  return 0;
}
