/** sandbox_fs_delete: a file or a directory tree in a persistent sandbox. */
import { z } from 'zod';
import { displayName } from '../../results/displayName';
import { defineTool, words } from '../toolSpec';
import {
  NEXT_NOTE,
  PATH_NOTE,
  SANDBOX_ID_NOTE,
  SMALL_RESULT,
  pathField,
  reachWords,
  sandboxIdField,
  sessionTarget,
  targetName,
} from './common';
import { writesFolder } from './folderReach';

export const fsDeleteInputSchema = z
  .object({
    sandbox_id: sandboxIdField.optional(),
    path: pathField,
    recursive: z.boolean().optional().describe('Delete a directory and everything in it.'),
  })
  .strict();

export function formatDelete(result: { path: string; deleted: boolean }): string {
  return result.deleted
    ? `Deleted ${displayName(result.path)}.`
    : `Nothing to delete: ${displayName(result.path)} does not exist.`;
}

export const fsDeleteTool = defineTool({
  name: 'sandbox_fs_delete',
  displayName: 'Delete Sandbox Files',
  userDescription: 'Deletes a file or directory in a persistent sandbox.',
  modelDescription: [
    'Delete a file, or with `recursive: true` a directory and everything in it, in a persistent sandbox.',
    "With workspace access rw this deletes the user's files in the workspace folder: delete only what you created or were asked to remove.",
    'A path that does not exist is not an error; the result says there was nothing to delete.',
    `${PATH_NOTE} ${SANDBOX_ID_NOTE}`,
    NEXT_NOTE,
  ].join(' '),
  icon: '$(trash)',
  tags: ['sandbox', 'files'],
  schema: fsDeleteInputSchema,
  budget: SMALL_RESULT,
  asks: 'when /workspace is your folder mounted read-write',
  changes: true,
  target: sessionTarget,
  reach: (_input, target) => writesFolder(target),
  describe(input, { target }) {
    return {
      progress: words('Deleting {0} in sandbox {1}', input.path, targetName(target)),
      title: words('Delete a file in sandbox {0}?', targetName(target)),
      details: [
        words('Delete {0}{1}.', `\`${input.path}\``, input.recursive ? ' and everything in it' : ''),
        reachWords(target),
      ],
    };
  },
  async run(input, context) {
    return context.service.use(
      input.sandbox_id,
      async (sandbox) => ({
        text: formatDelete(await sandbox.deletePath(input.path, { recursive: input.recursive }, context.signal)),
      }),
      { signal: context.signal },
    );
  },
});
