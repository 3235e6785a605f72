/** sandbox_publish_file: a sandbox file into the file store, and into the workspace when asked and allowed. */
import { posix } from 'node:path';
import { z } from 'zod';
import { SandboxError } from '../../errors';
import type { StoredFile } from '../../files/fileStore';
import { resolveWorkspacePath } from '../../files/paths';
import { publishFile } from '../../files/staging';
import { writeWorkspaceFile } from '../../files/workspaceFiles';
import { displayName, quotedName } from '../../results/displayName';
import { formatSize } from '../../spec/units';
import { union } from '../reach';
import { defineTool, words } from '../toolSpec';
import {
  NEXT_NOTE,
  PATH_NOTE,
  SANDBOX_ID_NOTE,
  SMALL_RESULT,
  pathField,
  sandboxIdField,
  sessionTarget,
  targetName,
  workspacePathField,
} from './common';
import { readsFolder } from './folderReach';

export const publishFileInputSchema = z
  .object({
    sandbox_id: sandboxIdField.optional(),
    path: pathField.describe(
      'The sandbox file to publish: a path relative to /workspace, or an absolute path inside /workspace.',
    ),
    name: z
      .string()
      .min(1)
      .max(255)
      .optional()
      .describe('A name for the stored file, like "report.pdf"; defaults to the file\'s own name.'),
    save_to_workspace: workspacePathField
      .optional()
      .describe(
        'Also save the file into the user\'s workspace folder at this relative path, like "results/report.pdf". The user confirms it first. An existing file is kept unless overwrite is true.',
      ),
    overwrite: z.boolean().optional().describe('With save_to_workspace: replace a file that is already there.'),
  })
  .strict();

export function formatPublished(published: { file: StoredFile; path: string; savedTo?: string }): string {
  const { file } = published;
  const lines = [
    `Published ${displayName(published.path)} to the file store as ${file.key} · ${quotedName(file.name)} · ${formatSize(file.size)} · sha256 ${file.sha256}`,
    `Pass key "${file.key}" to sandbox_stage_file to place it in a sandbox.`,
  ];
  if (published.savedTo !== undefined) lines.push(`Saved it to the workspace at ${displayName(published.savedTo)}.`);
  return lines.join('\n');
}

export const publishFileTool = defineTool({
  name: 'sandbox_publish_file',
  displayName: 'Publish File from Sandbox',
  userDescription:
    'Copies a file out of a persistent sandbox into the local file store, and into the workspace if asked, without sending its content through the chat.',
  modelDescription: [
    'Copy a file out of a persistent sandbox into the local file store without reading it yourself, and get back its key (like "files/f_0123456789abcdef"), size and sha256.',
    'Use it for results the user wants to keep (reports, images, archives) and to hand a file to another sandbox (pass the key to sandbox_stage_file).',
    "With `save_to_workspace` (a path relative to the user's workspace folder; needs read-write access) it is also saved there; an existing file is kept unless `overwrite` is true; .git, .vscode, .github and .devcontainer are refused.",
    "Copied whole or not at all: files over 10 MiB (the sandbox's default limit) or the store's 100 MiB are refused; compress or split them.",
    `${PATH_NOTE} ${SANDBOX_ID_NOTE}`,
    "To look at a file's content yourself, use sandbox_fs_read instead.",
    NEXT_NOTE,
  ].join(' '),
  icon: '$(cloud-upload)',
  tags: ['sandbox', 'files'],
  schema: publishFileInputSchema,
  budget: SMALL_RESULT,
  asks: 'when it saves into your folder (`save_to_workspace`, read-write access only), or reads a mounted folder',
  changes: true,
  target: sessionTarget,
  // Saving into the folder is refused, not asked about, unless the user allows read-write access.
  reach: (input, target) =>
    union(
      readsFolder(target),
      new Set(
        input.save_to_workspace !== undefined && target.folderAllowed === 'rw' ? ['folder-publish' as const] : [],
      ),
    ),
  describe(input, { target }) {
    const copy = words('Copy {0} out of sandbox {1} into the file store.', `\`${input.path}\``, targetName(target));
    if (input.save_to_workspace === undefined)
      return {
        progress: words('Copying {0} out of sandbox {1}', input.path, targetName(target)),
        title: words('Copy a file out of sandbox {0}?', targetName(target)),
        details: [copy],
      };
    return {
      progress: words('Copying {0} out of sandbox {1}', input.path, targetName(target)),
      title: words('Save a file from sandbox {0} to the workspace?', targetName(target)),
      details: [
        copy,
        input.overwrite
          ? words(
              'Save it to {0} in your workspace folder, replacing the file there if there is one.',
              `\`${input.save_to_workspace}\``,
            )
          : words('Save it to {0} in your workspace folder (a new file).', `\`${input.save_to_workspace}\``),
      ],
    };
  },
  async run(input, context) {
    const folder = context.workspaceFolder;
    // Refused before anything is read, so a failed call changes nothing.
    if (input.save_to_workspace !== undefined && !folder) {
      throw new SandboxError(
        'permission-denied',
        'There is no trusted workspace folder to save into.',
        'Publish without save_to_workspace; the key it returns keeps the file.',
      );
    }
    // Writing into the user's folder needs both their approval and read-write access, so that an
    // approval of this tool never lets a model write a workspace the user only shares read-only.
    if (input.save_to_workspace !== undefined && context.service.allowedAccess() !== 'rw') {
      throw new SandboxError(
        'permission-denied',
        `Saving into the workspace needs read-write workspace access; the user allows "${context.service.allowedAccess()}".`,
        'Publish without save_to_workspace and tell the user the key (they can save it with agent-sandbox files download), or ask them to allow read-write access (Sandbox: Set Workspace Access).',
      );
    }
    // The store keeps the name on disk, where no later redaction reaches it: a secret in it is taken out first.
    const name = (context.redactText ?? ((text: string) => text))(
      input.name ?? posix.basename(resolveWorkspacePath(input.path)),
    );
    const published = await context.service.use(
      input.sandbox_id,
      (sandbox) => publishFile(sandbox, context.store, input.path, { name, signal: context.signal }),
      { signal: context.signal },
    );
    if (input.save_to_workspace !== undefined) {
      await writeWorkspaceFile(folder!, input.save_to_workspace, published.data, {
        overwrite: input.overwrite,
        protectedPaths: context.protectedPaths,
      }).catch((error: unknown) => {
        if (!SandboxError.is(error)) throw error;
        throw new SandboxError(
          error.reason,
          `${error.message} The file was still published to the file store as ${published.file.key}.`,
          error.hint,
        );
      });
    }
    return {
      text: formatPublished({ file: published.file, path: published.path, savedTo: input.save_to_workspace }),
    };
  },
});
