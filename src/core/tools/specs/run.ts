/** sandbox_run: one snippet in a fresh sandbox that is thrown away afterwards (compute mode). */
import { z } from 'zod';
import { formatSize } from '../../spec/units';
import { formatExecResult } from '../format';
import { describeImages } from '../../results/images';
import { keepImages } from '../../results/keptImages';
import { sessionReach } from '../reach';
import { defineTool, words } from '../toolSpec';
import {
  NEXT_NOTE,
  OUTPUT_BUDGET,
  allowDomainsField,
  codeSpan,
  fileInputField,
  fileMode,
  networkPhrase,
  secretsField,
  secretsPhrase,
  shownCode,
  timeoutSecondsField,
} from './common';

export const runInputSchema = z
  .object({
    code: z
      .string()
      .min(1)
      .max(1024 * 1024)
      .describe('The program to run.'),
    runtime: z
      .enum(['python', 'node', 'bash'])
      .optional()
      .describe(
        "The language: python, node or bash. Defaults to the runtime in the user's settings (python unless changed).",
      ),
    files: z
      .array(fileInputField)
      .max(1000)
      .optional()
      .describe('Input files placed in /workspace before the code runs: the only way to give the program files.'),
    stdin: z
      .string()
      .max(16 * 1024 * 1024)
      .optional()
      .describe('Text passed to the program on standard input.'),
    timeout_seconds: timeoutSecondsField.optional(),
    allow_domains: allowDomainsField.optional(),
    secrets: secretsField.optional(),
  })
  .strict();

const LANGUAGE = { python: 'python', node: 'javascript', bash: 'bash' } as const;

export const runTool = defineTool({
  name: 'sandbox_run',
  displayName: 'Run Code in Sandbox',
  userDescription: 'Runs a Python, Node.js or bash snippet in a fresh isolated container that is discarded afterwards.',
  modelDescription: [
    'Run a short Python, Node.js or bash program in a fresh, isolated Linux container; get back its exit code, duration, stdout and stderr.',
    'Nothing persists between calls and the program sees no workspace files: files reach it only through `files` (placed in /workspace, the working directory).',
    'Python runs like a notebook cell: the value of its last line is shown; matplotlib figures left open and pictures written to /tmp/outputs come back as images.',
    'For multi-step work, packages or files kept between calls, use sandbox_exec and the sandbox_fs_* tools (a persistent sandbox).',
    'Default limits (the user may change them): 512 MiB memory without swap, 1 CPU, 256 processes, 120 s per call (timeout_seconds changes it), stdout and stderr each capped at 1 MiB.',
    'It runs as a non-root user, with no network unless the user allowed it (allow_domains: only those names).',
    'The first line of the result gives the outcome, exit code, duration and engine.',
    NEXT_NOTE,
  ].join(' '),
  icon: '$(play)',
  tags: ['sandbox', 'code-execution'],
  schema: runInputSchema,
  budget: OUTPUT_BUDGET,
  asks: 'when one-off sandboxes have the network or its allowlist (the setting `agentSandbox.network.mode`) and you have not allowed that yet',
  changes: true,
  target: (input) => ({ kind: 'run', networkAllow: input.allow_domains, secrets: input.secrets }),
  // A one-off sandbox never sees the workspace; it has the network only when the user turned it on.
  reach: (_input, target) => sessionReach({ ...target, workspaceAccess: 'none', packages: false }),
  describe(input, { target, settings }) {
    const runtime = input.runtime ?? (settings.defaultRuntime === 'linux' ? 'bash' : settings.defaultRuntime);
    const details = [];
    if (input.files?.length)
      details.push(words('Input files: {0}', input.files.map((file) => codeSpan(file.path)).join(', ')));
    details.push(
      target.engine === 'virtual'
        ? words(
            'In the embedded virtual engine (bash and WebAssembly Python inside the editor, lighter isolation than a container), discarded afterwards. Workspace: not visible. Network: none. Time limit: {0} s.',
            input.timeout_seconds ?? settings.timeoutSeconds,
          )
        : words(
            'In a fresh container that is discarded afterwards. Workspace: not visible. Network: {0}.{4} Limits: {1} memory, {2} CPU, {3} s.',
            networkPhrase(target),
            formatSize(settings.limits.memory),
            settings.limits.cpus,
            input.timeout_seconds ?? settings.timeoutSeconds,
            secretsPhrase(target),
          ),
    );
    return {
      progress: words('Running {0} in a sandbox', runtime),
      title: words('Run {0} code in a sandbox?', runtime),
      code: { text: shownCode(input.code), language: LANGUAGE[runtime] },
      details,
    };
  },
  async run(input, context) {
    const result = await context.service.run(
      {
        code: input.code,
        runtime: input.runtime,
        stdin: input.stdin,
        timeoutSeconds: input.timeout_seconds,
        networkAllow: input.allow_domains,
        secrets: input.secrets,
        files: input.files?.map((file) => ({
          path: file.path,
          content: file.content,
          encoding: file.encoding,
          mode: fileMode(file.executable),
        })),
      },
      { signal: context.signal, onProgress: context.onProgress },
    );
    const kept = await keepImages(result.images, context.store);
    const noted = {
      ...result,
      notices: [...result.notices, ...(kept.images.length ? [describeImages(kept.images)] : []), ...kept.notices],
    };
    const shown = context.redactResult?.(noted) ?? noted;
    return {
      text: await formatExecResult(shown, { engine: context.engine }, context.budget),
      exitCode: result.exitCode,
      images: kept.images,
    };
  },
});
