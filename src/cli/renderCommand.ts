/** `agent-sandbox render`: a `.prompt` file rendered as an agent would get it, to check it without a model. Needs no engine. */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { formatRenderProblem, renderPrompt, type RenderedMessage, type RenderedPrompt } from '../core/prompt/render';
import { partialsBeside } from '../core/prompt/renderPartials';
import { usageError } from './args';
import type { CommandContext } from './commands';
import { readPromptFile } from './readPromptFile';

const EXAMPLE = `agent-sandbox render agents/helper.prompt --input '{"userInput": "hello"}'`;

/** Exit 0 with the messages printed, 1 when the file or the input has problems (printed on stderr). */
export async function renderCommand(context: CommandContext): Promise<number> {
  const { args, readStdin } = context;
  const json = Boolean(args.values.json);
  if (args.positionals.length !== 1) throw usageError(`render takes one .prompt file, like: ${EXAMPLE}`);
  const file = args.positionals[0]!;
  const input = await inputOf(args.values.input, args.values['input-file'], readStdin);
  const path = resolve(process.cwd(), file);
  const read = await readPromptFile(path).catch((error: Error) => {
    throw usageError(`Cannot read ${file}: ${error.message}`);
  });
  if ('skipped' in read) throw usageError(`Cannot render ${file}: ${read.skipped}.`);

  const outcome = await renderPrompt({ text: read.text, file, input, readPartial: partialsBeside(path) });
  if (json) {
    process.stdout.write(`${JSON.stringify({ file, ...outcome }, null, 2)}\n`);
    return outcome.ok ? 0 : 1;
  }
  if (!outcome.ok) {
    for (const problem of outcome.problems) process.stderr.write(`${formatRenderProblem(file, problem)}\n`);
    process.stderr.write(`agent-sandbox: ${file} was not rendered: ${outcome.problems.length} problem(s)\n`);
    return 1;
  }
  process.stdout.write(outcome.prompt.messages.map(messageText).join(''));
  for (const note of outcome.prompt.notes) process.stderr.write(`agent-sandbox: ${note}\n`);
  process.stderr.write(`agent-sandbox: ${summary(outcome.prompt)}\n`);
  return 0;
}

/** The JSON object given by --input, or read from --input-file (- for standard input). */
async function inputOf(
  inline: string | undefined,
  inputFile: string | undefined,
  readStdin: () => Promise<string>,
): Promise<Record<string, unknown> | undefined> {
  if (inline !== undefined && inputFile !== undefined)
    throw usageError('render takes --input JSON or --input-file PATH, not both.');
  let text = inline;
  const flag = inline !== undefined ? '--input' : '--input-file';
  if (inputFile !== undefined)
    text = await (inputFile === '-' ? readStdin() : readFile(resolve(process.cwd(), inputFile), 'utf8')).catch(
      (error: Error) => {
        throw usageError(`Cannot read --input-file ${inputFile}: ${error.message}`);
      },
    );
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw usageError(`${flag} is not JSON (${(error as Error).message}); give an object, like: ${EXAMPLE}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw usageError(`${flag} must be a JSON object of the prompt's input values, like: ${EXAMPLE}`);
  return value as Record<string, unknown>;
}

/** `--- role ---` and the message's text; media as a line that names it. */
function messageText(message: RenderedMessage): string {
  const text = message.content
    .map((part) =>
      'text' in part
        ? part.text
        : `\n[media: ${shortUrl(part.media.url)}${part.media.contentType ? ` (${part.media.contentType})` : ''}]\n`,
    )
    .join('')
    .replace(/^\n+|\n+$/g, '');
  return `--- ${message.role} ---\n${text}\n`;
}

function shortUrl(url: string): string {
  return url.length > 100 ? `${url.slice(0, 80)}... (${url.length} characters)` : url;
}

function summary(prompt: RenderedPrompt): string {
  const sandbox = prompt.sandbox
    ? `sandbox ${prompt.sandbox.mode ?? 'compute'} mode, ${prompt.sandbox.image ?? prompt.sandbox.runtime ?? 'python'}`
    : 'no sandbox block';
  return [
    `rendered ${prompt.name}: ${prompt.messages.length} message(s)`,
    `model ${prompt.model ?? '(not named)'}`,
    `tools ${prompt.tools.length ? prompt.tools.join(', ') : '(none)'}`,
    `max_steps ${prompt.maxSteps}`,
    sandbox,
    ...(prompt.output?.schema ? ['an output schema'] : []),
  ].join('; ');
}
