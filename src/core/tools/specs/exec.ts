/** sandbox_exec: a command in a persistent sandbox. */
import { z } from 'zod';
import { sandboxIdOf } from '../../sessions/sessions';
import { INTERPRETER_LANGUAGES, interpreterName } from '../../interpreters/interpreter';
import { formatExecResult } from '../format';
import { evalAsExec } from '../evalResult';
import { describeImages } from '../../results/images';
import { keepImages } from '../../results/keptImages';
import { decisionNotes, decisionsCursor } from '../../network/decisionNotes';
import { planSave, worthSaving } from './savedOutput';
import { sessionReach } from '../reach';
import { defineTool, words } from '../toolSpec';
import {
  NEXT_NOTE,
  OUTPUT_BUDGET,
  codeSpan,
  SANDBOX_ID_NOTE,
  reachWords,
  sandboxIdField,
  sessionTarget,
  shellLine,
  shownCode,
  targetName,
  timeoutSecondsField,
} from './common';

export const execInputSchema = z
  .object({
    sandbox_id: sandboxIdField.optional(),
    command: z
      .string()
      .min(1)
      .max(1024 * 1024)
      .optional()
      .describe(
        'A shell command line, run with sh -c (pipes, redirections and && work). Give exactly one of command, cmd or code.',
      ),
    cmd: z
      .array(z.string().max(128 * 1024))
      .min(1)
      .max(4096)
      .optional()
      .describe(
        'A program and its arguments, run without a shell, like ["python3", "main.py"]. Give exactly one of command, cmd or code.',
      ),
    code: z
      .string()
      .min(1)
      .max(1024 * 1024)
      .optional()
      .describe(
        "Code for the sandbox's persistent interpreter (see language): variables, imports and open files survive between calls, and the value of a final expression is shown. Give exactly one of command, cmd or code.",
      ),
    language: z
      .enum(INTERPRETER_LANGUAGES)
      .optional()
      .describe('The interpreter that runs code: python (the default) or node (JavaScript; top-level await works).'),
    cwd: z.string().min(1).max(4096).optional().describe('Working directory; defaults to /workspace.'),
    env: z.record(z.string(), z.string()).optional().describe('Extra environment variables for this command.'),
    stdin: z
      .string()
      .max(16 * 1024 * 1024)
      .optional()
      .describe('Text passed to the command on standard input.'),
    timeout_seconds: timeoutSecondsField.optional(),
  })
  .strict()
  .refine((input) => [input.command, input.cmd, input.code].filter((given) => given !== undefined).length === 1, {
    message:
      'give exactly one of command (a shell string), cmd (an argv array) or code (for the persistent interpreter)',
    path: ['command'],
  })
  .refine((input) => input.code !== undefined || input.language === undefined, {
    message: 'language goes with code',
    path: ['language'],
  })
  .refine((input) => input.code === undefined || (input.cwd ?? input.env ?? input.stdin) === undefined, {
    message:
      'cwd, env and stdin are for command and cmd; the interpreter keeps its own (set os.environ or chdir in code)',
    path: ['code'],
  });

export const execTool = defineTool({
  name: 'sandbox_exec',
  displayName: 'Run Command in Sandbox',
  userDescription: 'Runs a command in a persistent sandbox whose files, packages and processes last across calls.',
  modelDescription: [
    'Run a command in a persistent Linux sandbox and get back its exit code, duration, stdout and stderr; files, packages and background processes persist until the sandbox is closed.',
    "Give exactly one of `command` (a shell line for sh -c), `cmd` (a program and its arguments, no shell) or `code` (Python, or JavaScript with language node, for a persistent interpreter: variables and imports survive between calls, a final expression's value is shown).",
    'Each command is a new shell: use `cwd` and `env`, or chain with &&.',
    `The working directory is /workspace. ${SANDBOX_ID_NOTE}`,
    'Defaults: 120 s per call (timeout_seconds, at most 3600), stdout and stderr 1 MiB each, 512 MiB memory, 1 CPU, 256 processes; /tmp, $HOME and /workspace hold 256 MiB each.',
    'Non-root; pip install --user needs the network the user may allow. Run servers in the background (nohup ... &).',
    NEXT_NOTE,
  ].join(' '),
  icon: '$(terminal)',
  tags: ['sandbox', 'code-execution'],
  schema: execInputSchema,
  budget: OUTPUT_BUDGET,
  asks: "when its sandbox sees your folder or has the network: in a dialog of ours the first time for that sandbox, then VS Code's confirmation",
  changes: true,
  target: sessionTarget,
  // Code in the sandbox can do whatever the sandbox can: read and write a mounted folder, use its network.
  reach: (_input, target) => sessionReach(target),
  describe(input, { target }) {
    const language = interpreterName(input.language ?? 'python');
    const details = [];
    if (input.cwd) details.push(words('In {0}.', codeSpan(input.cwd)));
    details.push(reachWords(target));
    return {
      progress:
        input.code !== undefined
          ? words('Running {0} in sandbox {1}', language, targetName(target))
          : words('Running a command in sandbox {0}', targetName(target)),
      title:
        input.code !== undefined
          ? words("Run {0} in sandbox {1}'s interpreter?", language, targetName(target))
          : words('Run a command in sandbox {0}?', targetName(target)),
      code:
        input.code !== undefined
          ? { text: shownCode(input.code), language: input.language === 'node' ? 'javascript' : 'python' }
          : { text: shownCode(input.command ?? shellLine(input.cmd ?? [])), language: 'sh' },
      details,
    };
  },
  async run(input, context) {
    return context.service.use(
      input.sandbox_id,
      async (sandbox) => {
        // Where the sandbox's network decisions stand, so that the result tells this call's own.
        const cursor = await decisionsCursor(sandbox);
        if (input.code !== undefined) {
          const timeoutSeconds = input.timeout_seconds ?? sandbox.info.spec.timeoutSeconds;
          const { interpreter, notices } = await context.service.interpreter(
            sandbox,
            input.language ?? 'python',
            context.signal,
          );
          const evaluated = await interpreter.run(input.code, {
            timeoutMs: timeoutSeconds * 1000,
            signal: context.signal,
          });
          const kept = await keepImages(evaluated.images, context.store);
          const result = evalAsExec(evaluated, timeoutSeconds, sandbox.info.spec.limits, [
            ...context.service.takeLaterNotices(sandbox),
            ...notices,
            ...(kept.images.length ? [describeImages(kept.images)] : []),
            ...kept.notices,
            ...(await decisionNotes(sandbox, cursor)),
          ]);
          const shown = context.redactResult?.(result) ?? result;
          return {
            text: await formatExecResult(
              shown,
              {
                engine: context.engine,
                sandboxId: sandboxIdOf(sandbox.info),
                interpreter: `${interpreter.language} ${interpreter.version}`,
              },
              context.budget,
            ),
            images: kept.images,
          };
        }
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
        // A result about to be cut keeps its whole output in the session, saved once the result is
        // returned (the session's next call waits for it); the headline's notes say where. A save
        // that failed before is said here.
        const save = worthSaving(result, context.budget) ? planSave(result) : undefined;
        if (save) context.service.afterCall(sandbox, () => save.run(sandbox));
        const noted = {
          ...result,
          notices: [
            ...context.service.takeLaterNotices(sandbox),
            ...result.notices,
            ...(save?.notes ?? []),
            ...(await decisionNotes(sandbox, cursor)),
          ],
        };
        const shown = context.redactResult?.(noted) ?? noted;
        return {
          text: await formatExecResult(
            shown,
            { engine: context.engine, sandboxId: sandboxIdOf(sandbox.info) },
            context.budget,
          ),
          exitCode: result.exitCode,
        };
      },
      { signal: context.signal, onProgress: context.onProgress, admit: context.admit },
    );
  },
});
