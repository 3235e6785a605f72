/**
 * The whole captured output of a command whose result will be cut, kept in the session so that the
 * model can read any part of it (sandbox_fs_read with offset and max_bytes) instead of running the
 * command again. Written inside the sandbox by the sandbox's own user (its own /tmp, under the same
 * limits), alongside the formatting, never on the host.
 */
import { randomBytes } from 'node:crypto';
import type { ExecResult, Sandbox } from '../../engine/engine';
import { SAVED_OUTPUT_DIR } from '../../files/paths';
import { formatSize } from '../../spec/units';
import type { TextBudget } from '../fitBudget';

/** Output longer than this share of the budget in characters is saved: it is about to be cut. */
const SAVE_SHARE = 0.9;

/** Whether a result will be cut to fit: then its output is worth keeping in the session. */
export function worthSaving(result: ExecResult, budget: TextBudget | undefined): boolean {
  const chars = Math.min(
    budget?.maxChars ?? Infinity,
    budget?.tokenBudget !== undefined ? budget.tokenBudget * 4 : Infinity,
  );
  return result.stdout.length + result.stderr.length > chars * SAVE_SHARE;
}

export interface PlannedSave {
  /** What the result says about each stream: where its whole output will be, ready for the next call. */
  readonly notes: string[];
  /** Writes the files in the sandbox; resolves with what could not be saved, in words (never throws). */
  run(sandbox: Sandbox): Promise<string[]>;
}

/**
 * The save of each stream that has output, planned now and run after the result is returned: the
 * session makes its next call wait for it (SandboxService.afterCall), so the file is there by then,
 * and the model gets its result without waiting for a copy it may never read.
 */
export function planSave(result: ExecResult): PlannedSave {
  const id = `exec-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
  const streams = (['stdout', 'stderr'] as const).filter((stream) => result[stream]);
  const file = (stream: 'stdout' | 'stderr') => `${SAVED_OUTPUT_DIR}/${id}.${stream}`;
  return {
    notes: streams.map(
      (stream) =>
        `the ${stream} captured (${formatSize(Buffer.byteLength(result[stream], 'utf8'))}${result[`${stream}Truncated`] ? ', up to the output cap' : ''}) is saved in the sandbox as ${file(stream)}: read any part with sandbox_fs_read (offset, max_bytes).`,
    ),
    async run(sandbox) {
      const failed: string[] = [];
      for (const stream of streams) {
        const saved = await sandbox
          .exec({
            cmd: ['sh', '-c', `mkdir -p ${SAVED_OUTPUT_DIR} && cat > "$1"`, 'sh', file(stream)],
            stdin: result[stream],
          })
          .catch(() => undefined);
        if (saved?.exitCode !== 0)
          failed.push(
            `The ${stream} of an earlier command could not be saved as ${file(stream)} (${saved ? `exit code ${saved.exitCode}, perhaps /tmp is full` : 'the save failed'}): run the command again with its output redirected to a file, and read that in parts.`,
          );
      }
      return failed;
    },
  };
}
