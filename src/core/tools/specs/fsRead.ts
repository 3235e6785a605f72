/**
 * sandbox_fs_read: a file of a persistent sandbox, or a part of it (offset and max_bytes). Text comes
 * back as text within the budget; a binary file as its size, type and a hex preview, unless base64 is
 * asked for.
 */
import { z } from 'zod';
import type { FileContent } from '../../engine/engine';
import { displayName } from '../../results/displayName';
import { formatSize } from '../../spec/units';
import { fitToBudget, type TextBudget } from '../fitBudget';
import { avoidSplitPair } from '../format';
import { defineTool, words } from '../toolSpec';
import {
  NEXT_NOTE,
  OUTPUT_BUDGET,
  PATH_NOTE,
  SANDBOX_ID_NOTE,
  pathField,
  sandboxIdField,
  sessionTarget,
  targetName,
} from './common';
import { binaryType, hexPreview } from './fileType';
import { readsFolder } from './folderReach';

export const fsReadInputSchema = z
  .object({
    sandbox_id: sandboxIdField.optional(),
    path: pathField,
    offset: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe('Start reading at this byte (0 by default); use it to read a large file part by part.'),
    max_bytes: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe('Read at most this many bytes from the offset (256 KiB by default).'),
    encoding: z
      .enum(['auto', 'utf8', 'base64'])
      .optional()
      .describe(
        'auto (default): text when it is valid UTF-8, otherwise the size, type and a hex preview; base64 returns binary bytes.',
      ),
  })
  .strict();

/** A read without max_bytes returns the start of a large file, not all of it, to spare the model's context. */
export const DEFAULT_READ_BYTES = 256 * 1024;

/** The file's content as read, shortened to the budget when one is given; a binary file as a preview. */
export async function formatRead(file: FileContent, budget?: TextBudget, auto = true): Promise<string> {
  if (file.encoding === 'base64' && auto) return renderBinary(file);
  if (!budget) return renderRead(file);
  return fitToBudget((keep) => renderRead(file, keep), file.content.length, budget);
}

function renderRead(file: FileContent, keep = file.content.length): string {
  const base64 = file.encoding === 'base64';
  const offset = file.offset ?? 0;
  // Base64 is cut at a whole group of four characters, text never between the halves of a surrogate pair.
  const content =
    keep >= file.content.length
      ? file.content
      : file.content.slice(0, base64 ? keep - (keep % 4) : avoidSplitPair(file.content, keep));
  const shown = base64 ? Math.floor((content.length * 3) / 4) : Buffer.byteLength(content, 'utf8');
  const range = offset > 0 ? ` · from byte ${offset.toLocaleString('en-US')}` : '';
  const lines = [
    `${displayName(file.path)} · ${formatSize(file.size)} · ${base64 ? 'binary, base64' : 'utf8'}${range}`,
  ];
  const next = offset + shown;
  if (content.length < file.content.length || file.truncated) {
    lines.push(
      `Shown: ${formatSize(shown)} (bytes ${offset.toLocaleString('en-US')} to ${next.toLocaleString('en-US')}) of ${formatSize(file.size)}${content.length < file.content.length ? ', cut to fit the context' : ''}. Read the next part with sandbox_fs_read offset ${next}, or search with sandbox_exec (grep, sed -n).`,
    );
  }
  lines.push(file.content.length ? content : offset > 0 ? '(nothing at this offset)' : '(empty file)');
  return lines.join('\n');
}

function renderBinary(file: FileContent): string {
  const data = Buffer.from(file.content, 'base64');
  const offset = file.offset ?? 0;
  return [
    `${displayName(file.path)} · ${formatSize(file.size)} · ${offset === 0 ? binaryType(data) : 'binary data'}, not text`,
    'Its content is not shown as text. For the bytes, call sandbox_fs_read with encoding "base64" (and offset and max_bytes for a part); to inspect it, use a tool in the sandbox with sandbox_exec (file, python3, unzip -l, …); to hand it to the user or another sandbox, use sandbox_publish_file.',
    `First ${formatSize(Math.min(data.length, 256))}${offset > 0 ? ` from byte ${offset.toLocaleString('en-US')}` : ''}:`,
    hexPreview(data, offset),
  ].join('\n');
}

export const fsReadTool = defineTool({
  name: 'sandbox_fs_read',
  displayName: 'Read Sandbox File',
  userDescription: 'Reads a file from a persistent sandbox.',
  modelDescription: [
    'Read one file, or a part of it, from a persistent sandbox: results, logs, generated files.',
    'Returns its path, size and content: text as is; a binary file as its size, type and a hex preview (encoding "base64" returns its bytes).',
    'Reads 256 KiB from `offset` (0) unless `max_bytes` says otherwise, and text that does not fit the context is cut with the offset to read next; for big files, search with sandbox_exec (grep, sed -n, tail).',
    `${PATH_NOTE} It also reads the whole output that a cut sandbox_exec result saved (the path under /tmp/sandbox-output/ that its note gives). ${SANDBOX_ID_NOTE}`,
    'To see what is in a directory, use sandbox_fs_list.',
    NEXT_NOTE,
  ].join(' '),
  icon: '$(file)',
  tags: ['sandbox', 'files'],
  schema: fsReadInputSchema,
  budget: `${OUTPUT_BUDGET}; 256 KiB read unless max_bytes says otherwise; binary files as a hex preview`,
  asks: 'when /workspace is your folder (ro, rw) and you have not allowed that sandbox to read it; never otherwise',
  changes: false,
  target: sessionTarget,
  reach: (_input, target) => readsFolder(target),
  describe(input, { target }) {
    return {
      progress: words('Reading {0} in sandbox {1}', displayName(input.path), targetName(target)),
      title: words('Read {0} in sandbox {1}?', displayName(input.path), targetName(target)),
      details: [],
    };
  },
  async run(input, context) {
    return context.service.use(
      input.sandbox_id,
      async (sandbox) => ({
        text: await formatRead(
          await sandbox.readFile(
            input.path,
            { maxBytes: input.max_bytes ?? DEFAULT_READ_BYTES, offset: input.offset, encoding: input.encoding },
            context.signal,
          ),
          context.budget,
          (input.encoding ?? 'auto') === 'auto',
        ),
      }),
      { signal: context.signal, admit: context.admit },
    );
  },
});
