/** sandbox_fs_list: the entries of a directory of a persistent sandbox, within the budget. */
import { z } from 'zod';
import type { FileEntry, ListResult } from '../../engine/engine';
import { resolveWorkspacePath } from '../../files/paths';
import { displayName } from '../../results/displayName';
import { formatSize } from '../../spec/units';
import { fitToBudget, type TextBudget } from '../fitBudget';
import { count, plural } from '../format';
import { defineTool, words } from '../toolSpec';
import { NEXT_NOTE, PATH_NOTE, SANDBOX_ID_NOTE, pathField, sandboxIdField, sessionTarget, targetName } from './common';
import { readsFolder } from './folderReach';

export const fsListInputSchema = z
  .object({
    sandbox_id: sandboxIdField.optional(),
    path: pathField.optional().describe('The directory to list; defaults to /workspace.'),
    depth: z
      .number()
      .int()
      .min(1)
      .max(10)
      .optional()
      .describe('1 (default) lists the directory itself; more descends into subdirectories.'),
  })
  .strict();

const TYPE_LABELS: Record<FileEntry['type'], string> = {
  file: 'file',
  directory: 'dir',
  symlink: 'link',
  other: 'other',
};

/** One line per entry: type, size, modification time (UTC) and the path relative to `dir`; within the budget when given. */
export async function formatList(result: ListResult, dir = '/workspace', budget?: TextBudget): Promise<string> {
  const base = dir.replace(/\/+$/, '') || '/';
  if (!result.entries.length) return `${displayName(base)} is empty.`;
  const rows = result.entries.map((entry) => [
    TYPE_LABELS[entry.type],
    entry.type === 'directory' ? '-' : formatSize(entry.size),
    formatTime(entry.mtime),
    relativePath(entry, base),
  ]);
  const widths = [0, 1, 2].map((column) => Math.max(...rows.map((row) => row[column]!.length)));
  const lines = rows.map((row) =>
    row.map((cell, column) => (column < 3 ? cell.padEnd(widths[column]!) : cell)).join('  '),
  );
  const render = (keep: number): string => {
    const shown: string[] = [];
    let used = 0;
    for (const line of lines) {
      if (used + line.length + 1 > keep) break;
      shown.push(line);
      used += line.length + 1;
    }
    const out = [
      `${displayName(base)}: ${plural(result.entries.length, 'entry', 'entries')}${result.truncated ? ' (the listing stopped at the file count cap)' : ''} (type, size, modified UTC, path)`,
    ];
    if (shown.length < lines.length)
      out.push(
        `Only the first ${count(shown.length)} of ${plural(lines.length, 'entry', 'entries')} are shown, to fit the context: list a subdirectory or a smaller depth.`,
      );
    else if (result.truncated) out.push('List a subdirectory or use a smaller depth to see the rest.');
    return [...out, ...shown].join('\n');
  };
  const total = lines.reduce((sum, line) => sum + line.length + 1, 0);
  return budget ? fitToBudget(render, total, budget) : render(total);
}

function relativePath(entry: FileEntry, base: string): string {
  const prefix = base === '/' ? '/' : `${base}/`;
  const relative =
    entry.path === base ? '.' : entry.path.startsWith(prefix) ? entry.path.slice(prefix.length) : entry.path;
  return displayName(entry.type === 'directory' && relative !== '.' ? `${relative}/` : relative);
}

function formatTime(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toISOString().slice(0, 19).replace('T', ' ');
}

export const fsListTool = defineTool({
  name: 'sandbox_fs_list',
  displayName: 'List Sandbox Files',
  userDescription: 'Lists the files in a directory of a persistent sandbox.',
  modelDescription: [
    'List a directory of a persistent sandbox (/workspace by default): one line per entry with its type, size, modification time (UTC) and path relative to the listed directory.',
    "`depth` 1 (the default) lists the directory's own entries; up to 10 descends into subdirectories.",
    'A listing stops at the file count cap (1000 by default), and shows only what fits the context; it says so, then list a subdirectory or use a smaller depth.',
    `${PATH_NOTE} ${SANDBOX_ID_NOTE}`,
    NEXT_NOTE,
  ].join(' '),
  icon: '$(list-tree)',
  tags: ['sandbox', 'files'],
  schema: fsListInputSchema,
  budget:
    'headline first; at most the file count cap (1,000 entries), cut to the chat’s token budget with a count of what is not shown',
  asks: 'when /workspace is your folder (ro, rw) and you have not allowed that sandbox to read it; never otherwise',
  changes: false,
  target: sessionTarget,
  reach: (_input, target) => readsFolder(target),
  describe(input, { target }) {
    return {
      progress: words('Listing {0} in sandbox {1}', input.path ?? '/workspace', targetName(target)),
      title: words('List {0} in sandbox {1}?', input.path ?? '/workspace', targetName(target)),
      details: [],
    };
  },
  async run(input, context) {
    return context.service.use(
      input.sandbox_id,
      async (sandbox) => ({
        text: await formatList(
          await sandbox.listFiles(input.path ?? '.', { depth: input.depth }, context.signal),
          resolveWorkspacePath(input.path ?? '.'),
          context.budget,
        ),
      }),
      { signal: context.signal },
    );
  },
});
