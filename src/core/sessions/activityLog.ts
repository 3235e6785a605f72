/** The most recent tool calls, kept by the service that logs them, for the panel's Activity list. */
import { EventEmitter } from 'node:events';

export interface ActivityEntry {
  tool: string;
  /** A short description: the command, the file, the code's first line. */
  summary: string;
  exitCode: number | null;
  ok: boolean;
  durationMs: number;
  at: string;
  sandboxId?: string;
}

export class ActivityLog {
  private readonly entries: ActivityEntry[] = [];
  private readonly events = new EventEmitter();

  constructor(
    private readonly capacity = 100,
    /** Where each entry is also kept (the folder's activity file, for audit). */
    private readonly sink?: (entry: ActivityEntry) => void,
    /** Applied to each entry's text before anyone sees it (the panel, the sink): the secrets' redactor. */
    private readonly redact: (text: string) => string = (text) => text,
  ) {}

  record(recorded: ActivityEntry): void {
    const entry = { ...recorded, summary: this.redact(recorded.summary) };
    this.sink?.(entry);
    this.entries.push(entry);
    if (this.entries.length > this.capacity) this.entries.shift();
    this.events.emit('entry', entry);
  }

  recent(): ActivityEntry[] {
    return [...this.entries];
  }

  /** The last call that ran a command in this sandbox. */
  lastCommand(sandboxId: string): ActivityEntry | undefined {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const entry = this.entries[i]!;
      if (entry.sandboxId === sandboxId && (entry.tool === 'sandbox_exec' || entry.tool === 'sandbox_run'))
        return entry;
    }
    return undefined;
  }

  onEntry(listener: (entry: ActivityEntry) => void): { dispose(): void } {
    this.events.on('entry', listener);
    return { dispose: () => this.events.off('entry', listener) };
  }
}

/** A one-line summary of a tool call's input, for people. */
export function summarizeInput(tool: string, input: Record<string, unknown>): string {
  const text = (value: unknown) => (typeof value === 'string' ? value : Array.isArray(value) ? value.join(' ') : '');
  let summary: string;
  switch (tool) {
    case 'sandbox_run':
      summary = `${text(input.runtime) || 'run'}: ${firstLine(text(input.code))}`;
      break;
    case 'sandbox_exec':
      summary =
        typeof input.code === 'string'
          ? `${text(input.language) || 'python'}: ${firstLine(input.code)}`
          : text(input.command) || text(input.cmd);
      break;
    case 'sandbox_fs_write':
      summary = (Array.isArray(input.files) ? input.files : [])
        .map((file) => text((file as { path?: unknown }).path))
        .join(', ');
      break;
    case 'sandbox_open':
      summary = `${text(input.session) || 'default'}${input.runtime ? ` (${text(input.runtime)})` : ''}`;
      break;
    default:
      summary = text(input.path) || text(input.key) || text(input.sandbox_id) || '';
  }
  summary = summary.replace(/\s+/g, ' ').trim();
  return summary.length > 120 ? `${summary.slice(0, 119)}…` : summary;
}

/** The first line of code that is not blank: what it does, most of the time. */
function firstLine(code: string): string {
  return code.split('\n').find((line) => line.trim()) ?? '';
}
