/** sandbox_stage_file: a file from the file store or the workspace into a sandbox, without the model reading it. */
import { z } from 'zod';
import { SandboxError } from '../../errors';
import { stageFile, type StagedFile } from '../../files/staging';
import { readWorkspaceFile } from '../../files/workspaceFiles';
import { displayName } from '../../results/displayName';
import { sandboxIdOf } from '../../sessions/sessions';
import { formatSize } from '../../spec/units';
import { union } from '../reach';
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
  storeKeyField,
  targetName,
  workspacePathField,
} from './common';
import { writesFolder } from './folderReach';

export const stageFileInputSchema = z
  .object({
    sandbox_id: sandboxIdField.optional(),
    key: storeKeyField
      .optional()
      .describe(
        'The file to stage: a file store key, like "files/f_0123456789abcdef", as returned by sandbox_publish_file. Give exactly one of key or workspace_path.',
      ),
    workspace_path: workspacePathField
      .optional()
      .describe(
        'The file to stage: a path relative to the user\'s workspace folder on the host, like "data/input.csv". Only when the user allows workspace access. Give exactly one of key or workspace_path.',
      ),
    path: pathField.describe(
      'Where to place the file in the sandbox: a path relative to /workspace, or an absolute path inside /workspace. Parent folders are created; an existing file is replaced.',
    ),
  })
  .strict()
  .refine((input) => (input.key === undefined) !== (input.workspace_path === undefined), {
    message: 'give exactly one of key (a file store key) or workspace_path (a path in the workspace folder)',
    path: ['key'],
  });

export function formatStaged(staged: StagedFile, sandboxId?: string): string {
  return [
    `Staged ${staged.source} into ${sandboxId ? `sandbox "${sandboxId}"` : 'the sandbox'} at ${displayName(staged.path)} · ${formatSize(staged.size)} · sha256 ${staged.sha256}`,
    'The file is in the sandbox now: use it with sandbox_exec.',
  ].join('\n');
}

export const stageFileTool = defineTool({
  name: 'sandbox_stage_file',
  displayName: 'Stage File into Sandbox',
  userDescription:
    'Copies a file from the file store or the workspace into a persistent sandbox, without sending its content through the chat.',
  modelDescription: [
    'Copy a file into a persistent sandbox without reading it yourself: from the local file store (`key`, like "files/f_0123456789abcdef", from sandbox_publish_file or the user) or from the user\'s workspace folder (`workspace_path`, relative to it). Give exactly one.',
    'Use it for data files, archives and binaries: the bytes arrive exactly and use none of your context. For code you write, use sandbox_fs_write.',
    'workspace_path works only when the user allows workspace access (ro or rw); it may not leave the workspace folder.',
    '`path` is where the file lands in the sandbox; parent folders are created and an existing file is replaced.',
    `${PATH_NOTE} ${SANDBOX_ID_NOTE}`,
    "The sandbox's file size limit applies (10 MiB by default).",
    'Returns the sandbox path, the size and the sha256 of the content.',
    NEXT_NOTE,
  ].join(' '),
  icon: '$(cloud-download)',
  tags: ['sandbox', 'files'],
  schema: stageFileInputSchema,
  budget: SMALL_RESULT,
  asks: 'when it reads a workspace file, or /workspace is your folder mounted read-write',
  changes: true,
  target: sessionTarget,
  // Reading a workspace file reads the user's folder, whatever the sandbox's own access (refused, not
  // asked about, when the user allows no workspace access).
  reach: (input, target) =>
    union(
      writesFolder(target),
      new Set(input.workspace_path !== undefined && target.folderAllowed !== 'none' ? ['folder-read' as const] : []),
    ),
  describe(input, { target }) {
    const source =
      input.key !== undefined ? `the stored file \`${input.key}\`` : `the workspace file \`${input.workspace_path}\``;
    return {
      progress: words('Copying a file into sandbox {0}', targetName(target)),
      title: words('Copy a file into sandbox {0}?', targetName(target)),
      details: [
        words('Copy {0} into sandbox {1} at {2}.', source, targetName(target), `\`${input.path}\``),
        reachWords(target),
      ],
    };
  },
  async run(input, context) {
    let data: Uint8Array;
    let source: string;
    if (input.key !== undefined) {
      const stored = await context.store.get(input.key);
      data = stored.data;
      source = `${stored.file.key} ("${stored.file.name}")`;
    } else {
      const folder = context.workspaceFolder;
      const access = context.service.allowedAccess();
      if (!folder || access === 'none') {
        throw new SandboxError(
          'permission-denied',
          folder
            ? 'Staging from the workspace is off: the user allows no workspace access.'
            : 'There is no trusted workspace folder to stage from.',
          'Ask the user to attach the file (they can allow workspace access with the setting agentSandbox.workspaceAccess, ro or rw), or stage a file store key instead.',
        );
      }
      data = await readWorkspaceFile(folder, input.workspace_path!, context.store.maxFileBytes);
      source = `the workspace file ${input.workspace_path}`;
    }
    return context.service.use(
      input.sandbox_id,
      async (sandbox) => ({
        text: formatStaged(
          await stageFile(sandbox, data, input.path, source, context.signal),
          sandboxIdOf(sandbox.info),
        ),
      }),
      { signal: context.signal },
    );
  },
});
