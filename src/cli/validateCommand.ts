/** `agent-sandbox validate`: checks `.prompt` files as the editor does, for CI. Needs no engine. */
import { resolve } from 'node:path';
import { throwIfAborted } from '../core/errors';
import { analyzePrompt } from '../core/prompt/analyzePrompt';
import type { PromptProblem } from '../core/prompt/problems';
import { usageError } from './args';
import type { CommandContext } from './commands';
import { expandPromptArguments } from './promptFiles';
import { readPromptFile } from './readPromptFile';

export interface CheckedFile {
  file: string;
  problems: PromptProblem[];
}

/**
 * Exit code 1 when any file has an error, 0 when there are only warnings or nothing, 2 when every
 * file named had to be skipped (a FIFO, say), so that CI does not pass having checked nothing.
 */
export async function validateCommand(context: CommandContext): Promise<number> {
  const { args, output, signal } = context;
  if (args.positionals.length === 0)
    throw usageError('validate needs files, folders or globs, like: agent-sandbox validate "agents/**/*.prompt"');
  const cwd = process.cwd();
  const checked: CheckedFile[] = [];
  let skipped = 0;
  for (const file of expandPromptArguments(args.positionals, cwd)) {
    throwIfAborted(signal);
    const read = await readPromptFile(resolve(cwd, file)).catch((error: Error) => {
      throw usageError(`Cannot read ${file}: ${error.message}`);
    });
    if ('skipped' in read) {
      output.skipped(file, read.skipped);
      skipped++;
      continue;
    }
    checked.push({ file, problems: analyzePrompt(read.text).problems });
  }
  output.promptProblems(checked);
  if (checked.length === 0 && skipped > 0) return 2;
  return checked.some(({ problems }) => problems.some((problem) => problem.severity === 'error')) ? 1 : 0;
}
