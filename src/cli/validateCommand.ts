/** `agent-sandbox validate`: checks `.prompt` files as the editor does, for CI. Needs no engine. */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { analyzePrompt } from '../core/prompt/analyzePrompt';
import type { PromptProblem } from '../core/prompt/problems';
import { usageError } from './args';
import type { CommandContext } from './commands';
import { expandPromptArguments } from './promptFiles';

export interface CheckedFile {
  file: string;
  problems: PromptProblem[];
}

/** Exit code 1 when any file has an error, 0 when there are only warnings or nothing. */
export async function validateCommand(context: CommandContext): Promise<number> {
  const { args, output } = context;
  if (args.positionals.length === 0) throw usageError('validate needs files, folders or globs, like: agent-sandbox validate "agents/**/*.prompt"');
  const cwd = process.cwd();
  const checked: CheckedFile[] = [];
  for (const file of expandPromptArguments(args.positionals, cwd)) {
    const text = await readFile(resolve(cwd, file), 'utf8').catch((error: Error) => {
      throw usageError(`Cannot read ${file}: ${error.message}`);
    });
    checked.push({ file, problems: analyzePrompt(text).problems });
  }
  output.promptProblems(checked);
  return checked.some(({ problems }) => problems.some((problem) => problem.severity === 'error')) ? 1 : 0;
}
