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

/**
 * Saves each stream that has output; the notes say where, or that saving failed (a full /tmp, say).
 * Never throws: the result of the command matters more than its copy.
 */
export async function saveOutput(sandbox: Sandbox, result: ExecResult, signal?: AbortSignal): Promise<string[]> {
  const id = `exec-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
  const notes: string[] = [];
  for (const stream of ['stdout', 'stderr'] as const) {
    const text = result[stream];
    if (!text) continue;
    const file = `${SAVED_OUTPUT_DIR}/${id}.${stream}`;
    const saved = await sandbox
      .exec({ cmd: ['sh', '-c', `mkdir -p ${SAVED_OUTPUT_DIR} && cat > "$1"`, 'sh', file], stdin: text }, signal)
      .catch(() => undefined);
    const size = Buffer.byteLength(text, 'utf8');
    notes.push(
      saved?.exitCode === 0
        ? `the ${stream} captured (${formatSize(size)}${result[`${stream}Truncated`] ? ', up to the output cap' : ''}) is saved in the sandbox as ${file}: read any part with sandbox_fs_read (offset, max_bytes).`
        : `the ${stream} could not be saved in the sandbox (${saved ? `exit code ${saved.exitCode}` : 'the save failed'}); redirect the output to a file and read it in parts.`,
    );
  }
  return notes;
}
