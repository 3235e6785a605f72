/**
 * `agent-sandbox tool NAME 'JSON'`: any language-model tool from the command line, through the same
 * handler, schema and redaction as in VS Code. Instead of a confirmation dialog, the policy is what
 * this command's flags allow: no workspace access, no network and the protected paths kept unless
 * a flag says otherwise (--workspace, --network, --allow-config-writes). That holds for sessions
 * opened before, by this command with other flags or by VS Code in the same folder, too: a call
 * into one that reaches further than the flags is refused.
 */
import type { SandboxEngine } from '../core/engine/engine';
import { SandboxError } from '../core/errors';
import { engineLabel } from '../core/engine/engineCapabilities';
import { protectedPathsFor } from '../core/policy/protectedPaths';
import { Redactor } from '../core/secrets/redaction';
import { TOOL_WORDS } from '../core/sessions/sessionWords';
import { collectSecrets } from '../core/secrets/secrets';
import { admitWithin } from '../core/tools/admit';
import { toolInputSchema } from '../core/tools/jsonSchema';
import { policyReach, reachSentence } from '../core/tools/reach';
import { resultParts } from '../core/tools/resultParts';
import { ToolInputError, callTool, parseToolInput } from '../core/tools/runTool';
import { TOOLS, isToolName, toolSpec, type ToolName } from '../core/tools/toolList';
import { usageError, type ParsedArgs } from './args';
import { cliFileStore, type CommandContext } from './commands';
import { cliSandboxService, cliSettings } from './cliService';

const DEFAULT_RESULT_CHARS = 48_000;

/** `tool --list`: each tool's name, description and input schema; needs no engine. */
export function toolList(context: CommandContext): number {
  context.output.toolList(
    TOOLS.map((tool) => ({
      name: tool.name,
      description: tool.modelDescription,
      budget: tool.budget,
      inputSchema: toolInputSchema(tool.schema),
    })),
  );
  return 0;
}

/** The tool's name and its JSON input, from the positionals (JSON from standard input when it is "-"). */
export async function toolCall(
  args: ParsedArgs,
  readStdin: () => Promise<string>,
): Promise<{ name: ToolName; input: unknown }> {
  const [name, json, ...extra] = args.positionals;
  if (name === undefined)
    throw usageError(
      'tool needs a tool name and its JSON input, like: agent-sandbox tool sandbox_run \'{"code":"print(1)"}\' (tool --list shows the tools).',
    );
  if (!isToolName(name))
    throw usageError(`Unknown tool "${name}". Tools: ${TOOLS.map((tool) => tool.name).join(', ')}.`);
  if (extra.length)
    throw usageError(
      `tool takes one JSON argument; got ${extra.length + 1}. Quote the JSON as one argument, or pass - and send it on standard input.`,
    );
  const text = json === undefined || json === '-' ? await readStdin() : json;
  let input: unknown;
  try {
    input = JSON.parse(text.trim() === '' ? '{}' : text);
  } catch (error) {
    throw usageError(
      `The input of ${name} is not valid JSON: ${(error as Error).message}. Give one JSON object, like '{"code":"print(1)"}'.`,
    );
  }
  return { name: name as ToolName, input };
}

export async function toolCommand(engine: SandboxEngine, context: CommandContext, folder: string): Promise<number> {
  const { args, output, signal } = context;
  const { name, input } = await toolCall(args, context.readStdin);
  const { values } = args;
  const number = (flag: string, value: string | undefined) => {
    if (value === undefined) return undefined;
    const parsed = Number(value);
    if (!(parsed > 0)) throw usageError(`--${flag} must be a positive number, not "${value}".`);
    return parsed;
  };
  const settings = cliSettings(values, folder, {
    timeoutSeconds: number('timeout', values.timeout),
    limits: Object.fromEntries(
      Object.entries({
        memory: values.memory,
        cpus: number('cpus', values.cpus),
        pids: number('pids', values.pids),
        disk: values.disk,
        inodes: number('inodes', values.inodes),
      }).filter(([, value]) => value !== undefined),
    ),
  });
  const secrets = collectSecrets(process.env, settings.envPrefixes);
  const redactor = new Redactor(secrets);
  // The tools speak to the model, in the tools' words, and keep at most sessions.maxSessions open, as in VS Code.
  const service = cliSandboxService(engine, folder, settings, {
    words: TOOL_WORDS,
    makesRoom: true,
    injectedEnv: () => secrets,
  });
  // The same store, and the same limit per file, as `agent-sandbox files`.
  const store = cliFileStore();
  const spec = toolSpec(name);
  const flags = `--workspace ${settings.workspaceAccess}${settings.network ? ', --network' : ', no --network'}`;
  try {
    const parsed = parseToolInput(spec, input);
    const { text, failure } = await callTool(spec, parsed, {
      service,
      engine: engineLabel(engine.kind, engine.capabilities),
      capabilities: engine.capabilities,
      signal,
      budget: { maxChars: DEFAULT_RESULT_CHARS },
      redact: (value) => (redactor.isEmpty ? value : redactor.redact(value)),
      store,
      workspaceFolder: folder,
      protectedPaths: protectedPathsFor(folder, settings.configWritesAllowedIn),
      onProgress: (progress) => output.progress(progress.message),
      admit: admitWithin(
        spec,
        parsed,
        {
          allowed: policyReach(settings.workspaceAccess, settings.network),
          protectedPaths: protectedPathsFor(folder, settings.configWritesAllowedIn),
          keptBy: 'this command has no --allow-config-writes',
          liftWith: '--allow-config-writes',
        },
        service,
        (sandboxId, wider) =>
          new SandboxError(
            'permission-denied',
            `Sandbox "${sandboxId}" would ${reachSentence(wider)}: more than this command allows (${flags}). It was opened with more access before, by another command or VS Code.`,
            'Run the command with the flags that allow it (--workspace ro or rw, --network), or use a sandbox within these flags: sandbox_open with another session name.',
          ),
      ),
    });
    output.toolResult(
      resultParts(text).map((part) => ({ type: 'text' as const, text: part })),
      Boolean(failure),
    );
    return failure ? 1 : 0;
  } catch (error) {
    if (error instanceof ToolInputError) throw usageError(error.message);
    output.toolResult(
      resultParts((error as Error).message).map((part) => ({ type: 'text' as const, text: part })),
      true,
    );
    return 1;
  }
}
