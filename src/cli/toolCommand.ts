/**
 * `agent-sandbox tool NAME 'JSON'`: any language-model tool from the command line, through the same
 * handler, schema and redaction as in VS Code. Instead of a confirmation dialog, the policy is what
 * this command's flags allow: no workspace access, no network and the protected paths kept unless
 * a flag says otherwise (--workspace, --network, --allow-config-writes). That holds for sessions
 * opened before, by this command with other flags or by VS Code in the same folder, too: a call
 * into one that reaches further than the flags is refused.
 */
import type { SandboxEngine } from '../core/engine/engine';
import type { Settings } from '../core/spec/settings';
import { toolInputSchema } from '../core/tools/jsonSchema';
import { resultParts } from '../core/tools/resultParts';
import { ToolInputError } from '../core/tools/runTool';
import { TOOLS, isToolName, type ToolName } from '../core/tools/toolList';
import { usageError, type ParsedArgs } from './args';
import type { CommandContext } from './commands';
import { cliSettings } from './cliService';
import { flagPolicyTools } from './flagPolicyTools';
import { saveImages } from './savedImages';

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

/** The policy and limits the flags of `tool` and `mcp` give: --workspace, --network, --allow-config-writes, --timeout, --memory, ... */
export function toolSettings(values: ParsedArgs['values'], folder: string): Settings {
  const number = (flag: string, value: string | undefined) => {
    if (value === undefined) return undefined;
    const parsed = Number(value);
    if (!(parsed > 0)) throw usageError(`--${flag} must be a positive number, not "${value}".`);
    return parsed;
  };
  return cliSettings(values, folder, {
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
}

export async function toolCommand(engine: SandboxEngine, context: CommandContext, folder: string): Promise<number> {
  const { args, output, signal } = context;
  const { name, input } = await toolCall(args, context.readStdin);
  const settings = toolSettings(args.values, folder);
  const tools = flagPolicyTools({
    engine,
    folder,
    settings,
    client: 'cli',
    command: 'this command',
    withFlag: 'run the command with',
    secrets: context.secrets,
    showSecrets: Boolean(args.values['show-secrets']),
  });
  try {
    const { text, failure, images } = await tools.call(name, input, {
      signal,
      onProgress: (progress) => output.progress(progress.message),
    });
    const saved = await saveImages(images ?? []);
    output.toolResult(
      [
        ...resultParts(text).map((part) => ({ type: 'text' as const, text: part })),
        ...saved.map((image) => ({ type: 'image' as const, ...image })),
      ],
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
  } finally {
    // Work after the result (a cut output saved in the session) ends before the process does.
    await tools.service.settled();
    // An interpreter lives as long as this process: it ends with the command (the session stays).
    await tools.service.closeInterpreters();
  }
}
