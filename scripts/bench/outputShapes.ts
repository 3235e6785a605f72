/**
 * From the program's exit to the result, whatever the output's shape (issue 24): sandbox_exec of a
 * command that prints 5 MiB on one line (a run of one character, and base64) beside one that prints
 * one short line, through the tools' own path with a real byte-pair tokenizer as countTokens and a
 * token budget, as Copilot calls them. The output is written to a file first (untimed), so each
 * timed call is `cat` of that file: what differs between the arms is the capture, the cut and the
 * count after the program ends.
 */
import { Tiktoken } from 'js-tiktoken/lite';
import o200k from 'js-tiktoken/ranks/o200k_base';
import { runNamedTool, type ToolCallContext } from '../../src/core/tools/runTool';
import type { Group } from './measure';

const FIVE_MIB = 5 * 1024 * 1024;

export async function outputShapesGroup(tool: ToolCallContext, iterations: number, warmup: number): Promise<Group> {
  const tokenizer = new Tiktoken(o200k);
  const counted: ToolCallContext = {
    ...tool,
    budget: {
      maxChars: 48_000,
      tokenBudget: 8_000,
      countTokens: async (text: string) => tokenizer.encode(text).length,
    },
  };
  await runNamedTool(
    'sandbox_exec',
    {
      command: `head -c ${FIVE_MIB} /dev/zero | tr '\\0' x > /tmp/run.txt && head -c ${(FIVE_MIB * 3) / 4} /dev/urandom | base64 -w0 > /tmp/b64.txt && echo short > /tmp/line.txt`,
    },
    tool,
  );
  const cat = (file: string, wanted: RegExp) => async () => {
    const text = await runNamedTool('sandbox_exec', { command: `cat /tmp/${file}` }, counted);
    if (!wanted.test(text.split('\n', 1)[0] ?? '')) throw new Error(`cat ${file}: ${text.slice(0, 200)}`);
  };
  return {
    id: 'shapes',
    title:
      'sandbox_exec: from exit to result, 5 MiB on one line beside one short line (real tokenizer, 8,000-token budget)',
    arms: [
      { name: 'one short line', run: cat('line.txt', /exit code 0/) },
      { name: '5 MiB run of one character, one line', run: cat('run.txt', /exit code 0 .*stdout truncated/) },
      { name: '5 MiB base64, one line', run: cat('b64.txt', /exit code 0 .*stdout truncated/) },
    ],
    comparisons: [
      { ours: '5 MiB run of one character, one line', baseline: 'one short line', target: 1.2 },
      { ours: '5 MiB base64, one line', baseline: 'one short line', target: 1.2 },
    ],
    iterations,
    warmup,
    // Untimed: a cut result's output is saved in the session after the call returns (the next call
    // waits for it); an agent's think time covers it.
    settle: () => tool.service.settled(),
  };
}
