/** sandbox_fs_write: files into a persistent sandbox, exactly as given. */
import { z } from 'zod';
import type { WriteResult } from '../../engine/engine';
import { displayName } from '../../results/displayName';
import { formatSize } from '../../spec/units';
import { count, plural } from '../format';
import { defineTool, words } from '../toolSpec';
import {
  NEXT_NOTE,
  PATH_NOTE,
  SANDBOX_ID_NOTE,
  SMALL_RESULT,
  fileInputField,
  fileMode,
  reachWords,
  sandboxIdField,
  sessionTarget,
  targetName,
} from './common';
import { writesFolder } from './folderReach';

export const fsWriteInputSchema = z
  .object({
    sandbox_id: sandboxIdField.optional(),
    files: z.array(fileInputField).min(1).max(1000).describe('The files to write; parent folders are created.'),
  })
  .strict();

const MAX_LISTED = 100;
const MAX_CONFIRMED = 20;

export function formatWrite(result: WriteResult): string {
  const total = result.files.reduce((sum, file) => sum + file.bytes, 0);
  const lines = [`Wrote ${plural(result.files.length, 'file')} (${formatSize(total)}):`];
  for (const file of result.files.slice(0, MAX_LISTED))
    lines.push(`${displayName(file.path)}  ${formatSize(file.bytes)}`);
  if (result.files.length > MAX_LISTED) lines.push(`… and ${count(result.files.length - MAX_LISTED)} more`);
  return lines.join('\n');
}

export const fsWriteTool = defineTool({
  name: 'sandbox_fs_write',
  displayName: 'Write Sandbox Files',
  userDescription: 'Writes files into a persistent sandbox.',
  modelDescription: [
    'Write one or more files into a persistent sandbox; parent folders are created and existing files are overwritten.',
    'Prefer it to echo or heredocs in sandbox_exec for source code and data: the content arrives exactly as given, utf8 text or base64 for binary; set `executable` for scripts.',
    `${PATH_NOTE} ${SANDBOX_ID_NOTE}`,
    "With workspace access rw, /workspace is the user's workspace folder, so writing there changes the user's files; with ro, writing there fails.",
    'Default limits: 10 MiB per file, 1000 files per call.',
    'Returns each path written with its size.',
    'For sandbox_run, pass files in its own `files` input instead: it does not see this sandbox.',
    NEXT_NOTE,
  ].join(' '),
  icon: '$(file-add)',
  tags: ['sandbox', 'files'],
  schema: fsWriteInputSchema,
  budget: `${SMALL_RESULT}: each file written with its size (the first 100)`,
  asks: 'when /workspace is your folder mounted read-write',
  changes: true,
  target: sessionTarget,
  reach: (_input, target) => writesFolder(target),
  describe(input, { target }) {
    const details = input.files
      .slice(0, MAX_CONFIRMED)
      .map((file) => words('- {0}{1}', `\`${file.path}\``, file.executable ? ' (executable)' : ''));
    if (input.files.length > MAX_CONFIRMED) details.push(words('- and {0} more', input.files.length - MAX_CONFIRMED));
    details.push(reachWords(target));
    return {
      progress: words('Writing {0} file(s) in sandbox {1}', input.files.length, targetName(target)),
      title: words('Write {0} file(s) in sandbox {1}?', input.files.length, targetName(target)),
      details,
    };
  },
  async run(input, context) {
    return context.service.use(
      input.sandbox_id,
      async (sandbox) => ({
        text: formatWrite(
          await sandbox.writeFiles(
            input.files.map((file) => ({
              path: file.path,
              content: file.content,
              encoding: file.encoding,
              mode: fileMode(file.executable),
            })),
            context.signal,
          ),
        ),
      }),
      { signal: context.signal },
    );
  },
});
