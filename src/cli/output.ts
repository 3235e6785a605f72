/** How the CLI prints: the program's own output as is, everything else on stderr, or one JSON object with --json. */
import type { EngineInfo, ExecResult, SessionInfo } from '../core/engine/engine';
import { placeBytes } from '../core/limits/diskLimit';
import { SandboxError } from '../core/errors';
import { displayName, quotedName as quoteName } from '../core/results/displayName';
import type { StoredFile } from '../core/files/fileStore';
import type { RemovedOrphan } from '../core/sessions/orphans';
import { sandboxIdOf } from '../core/sessions/sessions';
import type { PromptProblem } from '../core/prompt/problems';
import { formatSize } from '../core/spec/units';
import type { CopyChange } from '../core/files/copyChanges';
import type { ApplyOutcome } from '../core/files/copyApply';
import { changeCounts, someChanges } from '../core/files/copySummary';
import type { HeldSession } from '../core/sessions/copyHold';
import { heldText } from '../core/sessions/copyHeldText';

/** A kept session in --json: its id, folder, the counts and the changes, or why they could not be listed. */
function heldJson({ session, changes, problem }: HeldSession) {
  const count = (kind: CopyChange['change']) => changes.filter((change) => change.change === kind).length;
  return {
    id: session.id,
    name: session.name,
    session: sandboxIdOf(session),
    workspaceFolder: session.workspaceFolder,
    added: count('added'),
    modified: count('modified'),
    deleted: count('deleted'),
    changes: changes.map(({ path, change }) => ({ path, change })),
    ...(problem ? { problem } : {}),
  };
}

/** How a session is named to the user: its sandbox_id (agent:KEY/NAME outside the workspace scope, the id --session takes), or its short container id. */
function sessionLabel(info: SessionInfo): string {
  return info.name ? sandboxIdOf(info) : info.id.slice(0, 12);
}

export type ToolResultPart =
  { type: 'text'; text: string } | { type: 'image'; mime: string; bytes: number; path: string };

export class Output {
  private redact: (text: string) => string = (text) => text;
  // Every line this command prints passes the redactor (bytes, a file the user downloads, do not).
  private readonly stdout: Pick<NodeJS.WritableStream, 'write'>;
  private readonly stderr: Pick<NodeJS.WritableStream, 'write'>;
  /** Whether standard output is a terminal (the redacting wrapper does not say). */
  private readonly terminal: boolean;

  constructor(
    private readonly json: boolean,
    stdout: NodeJS.WritableStream = process.stdout,
    stderr: NodeJS.WritableStream = process.stderr,
  ) {
    this.terminal = Boolean((stdout as { isTTY?: boolean }).isTTY);
    this.stdout = redacting(stdout, (text) => this.redact(text));
    this.stderr = redacting(stderr, (text) => this.redact(text));
  }

  /** From now on, what is printed goes through this redactor (the command's secrets, see knownSecrets.ts). */
  redactWith(redact: (text: string) => string): void {
    this.redact = redact;
  }

  progress(message: string): void {
    if (!this.json) this.note(message);
  }

  execResult(result: ExecResult, context: Record<string, unknown>): void {
    if (this.json) return this.print({ ...context, ...result });
    this.stdout.write(result.stdout);
    this.stderr.write(result.stderr);
    for (const notice of result.notices) this.note(notice);
    if (result.outcome !== 'ok' && result.outcome !== 'error')
      this.note(`${result.outcome}: ${result.hint ?? ''}`.trim());
    else if (result.diskLimitReached) this.note(result.hint ?? 'disk limit reached');
    else if (result.stdoutTruncated || result.stderrTruncated) this.note(result.hint ?? 'output truncated');
  }

  /** An opened session; `notices` are what the policy changed about the request. */
  session(info: SessionInfo, created: boolean, notices: readonly string[] = []): void {
    if (this.json) return this.print({ created, ...info, notices: [...info.notices, ...notices] });
    this.stdout.write(
      `${created ? 'Opened' : 'Reusing'} session ${sessionLabel(info)} (${info.runtime}, ${info.image}, id ${info.id.slice(0, 12)})\n`,
    );
    const { limits } = info.spec;
    this.stdout.write(
      `  limits: ${formatSize(limits.memoryBytes)} memory, ${limits.cpus} CPU, ${limits.pids} processes, ${info.spec.timeoutSeconds} s per call, ${formatSize(placeBytes(limits))} disk and ${limits.inodes} files per writable place\n`,
    );
    this.stdout.write(
      `  workspace: ${info.workspaceAccess}${info.workspaceFolder && info.workspaceAccess !== 'none' ? ` (${info.workspaceFolder})` : ''}, network: ${info.network ? 'on' : info.spec.networkAllow.length ? `only ${info.spec.networkAllow.join(', ')}` : 'off'}\n`,
    );
    for (const notice of [...info.notices, ...notices]) this.note(notice);
  }

  sessions(sessions: SessionInfo[]): void {
    if (this.json) return this.print({ sessions });
    if (sessions.length === 0) {
      this.stdout.write('No sessions.\n');
      return;
    }
    const rows = sessions.map((s) => [
      s.name ? sessionLabel(s) : '-',
      s.id.slice(0, 12),
      s.runtime,
      s.state,
      s.workspaceAccess,
      s.network ? 'on' : s.spec.networkAllow.length ? 'allowlist' : 'off',
      s.createdAt,
      s.image,
    ]);
    const header = ['SESSION', 'ID', 'RUNTIME', 'STATE', 'WORKSPACE', 'NETWORK', 'CREATED', 'IMAGE'];
    const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
    for (const row of [header, ...rows])
      this.stdout.write(
        `${row
          .map((cell, column) => cell.padEnd(widths[column]!))
          .join('  ')
          .trimEnd()}\n`,
      );
  }

  /** Closed sessions, and copy sessions kept open for their unapplied changes. */
  closed(sessions: SessionInfo[], held: HeldSession[] = []): void {
    if (this.json)
      return this.print({
        closed: sessions.map((s) => ({ id: s.id, name: s.name, ...(s.notices.length ? { notices: s.notices } : {}) })),
        ...(held.length ? { held: held.map(heldJson) } : {}),
      });
    if (sessions.length) this.stdout.write(`Closed ${sessions.map(sessionLabel).join(', ')}.\n`);
    else if (!held.length) this.stdout.write('No sessions to close.\n');
    for (const session of sessions) for (const notice of session.notices) this.note(notice);
    for (const hold of held) {
      const id = sessionLabel(hold.session);
      const what = hold.problem
        ? `its copy's changes could not be listed (${hold.problem})`
        : `${changeCounts(hold.changes)} in its copy are not applied to the folder: ${someChanges(hold.changes)}`;
      this.note(
        `session ${id} was not closed: ${what}. See them with agent-sandbox diff --session ${id}, apply them with agent-sandbox apply --session ${id}, or close it losing them with agent-sandbox close --session ${id} --discard.`,
      );
    }
  }

  /** Orphans removed, and those kept for their unapplied changes. */
  orphans(removed: RemovedOrphan[], kept: HeldSession[] = []): void {
    if (this.json)
      return this.print({
        removed: removed.map(({ session, reason }) => ({
          id: session.id,
          name: session.name,
          workspaceFolder: session.workspaceFolder,
          reason,
        })),
        ...(kept.length ? { kept: kept.map(heldJson) } : {}),
      });
    if (removed.length === 0) this.stdout.write('No orphaned sandboxes.\n');
    for (const { session, reason } of removed)
      this.stdout.write(`Removed ${sessionLabel(session)} (${session.workspaceFolder ?? 'no folder'}): ${reason}.\n`);
    for (const hold of kept) this.stdout.write(`${heldText(hold, hold.session.workspaceFolder)}\n`);
  }

  engine(info: EngineInfo): void {
    if (this.json) return this.print(info);
    this.stdout.write(
      `${info.product} ${info.version} (API ${info.apiVersion ?? '?'}, ${info.os ?? '?'}) at ${info.endpoint}${
        info.endpointSource ? ` (from ${info.endpointSource})` : ''
      }\n`,
    );
    for (const difference of info.differences ?? []) this.stdout.write(`On this engine, ${difference}.\n`);
  }

  storedFile(file: StoredFile): void {
    if (this.json) return this.print(file);
    this.stdout.write(`Stored "${file.name}" as ${file.key} (${formatSize(file.size)}, sha256 ${file.sha256})\n`);
  }

  storedFiles(files: StoredFile[]): void {
    if (this.json) return this.print({ files });
    if (files.length === 0) {
      this.stdout.write('No stored files.\n');
      return;
    }
    const rows = files.map((file) => [file.key, formatSize(file.size), file.created, file.name]);
    const header = ['KEY', 'SIZE', 'CREATED', 'NAME'];
    const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
    for (const row of [header, ...rows])
      this.stdout.write(
        `${row.map((cell, column) => (column < 3 ? cell.padEnd(widths[column]!) : cell)).join('  ')}\n`,
      );
  }

  /** A downloaded file: its bytes as they are on stdout, or where they were saved. */
  fileContent(file: StoredFile, data: Uint8Array, savedTo?: string): void {
    if (this.json)
      return this.print(
        savedTo === undefined
          ? { ...file, contentBase64: Buffer.from(data).toString('base64') }
          : { ...file, output: savedTo },
      );
    if (savedTo === undefined) this.stdout.write(data);
    else this.stdout.write(`Saved ${file.key} ("${file.name}", ${formatSize(file.size)}) to ${savedTo}\n`);
  }

  deletedFile(file: StoredFile): void {
    if (this.json) return this.print({ deleted: file });
    this.stdout.write(`Deleted ${file.key} ("${file.name}").\n`);
  }

  error(error: unknown): void {
    const sandboxError = SandboxError.is(error) ? error : undefined;
    if (this.json) {
      this.print({
        error: {
          reason: sandboxError?.reason ?? 'internal',
          message: (error as Error).message ?? String(error),
          hint: sandboxError?.hint,
        },
      });
      return;
    }
    this.stderr.write(
      `agent-sandbox: ${sandboxError ? sandboxError.fullMessage : ((error as Error).stack ?? String(error))}\n`,
    );
  }

  /** Problems of .prompt files, one `file:line:col: severity: message` line each (1-based), or a JSON array. */
  promptProblems(files: { file: string; problems: PromptProblem[] }[]): void {
    const rows = files.flatMap(({ file, problems }) =>
      problems.map((p) => ({
        file,
        line: p.range.start.line + 1,
        column: p.range.start.character + 1,
        endLine: p.range.end.line + 1,
        endColumn: p.range.end.character + 1,
        severity: p.severity,
        code: p.code,
        message: p.message,
      })),
    );
    if (this.json) return this.print(rows);
    for (const row of rows)
      this.stdout.write(`${row.file}:${row.line}:${row.column}: ${row.severity}: ${row.message}\n`);
    const errors = rows.filter((row) => row.severity === 'error').length;
    this.note(`checked ${files.length} file(s): ${errors} error(s), ${rows.length - errors} warning(s)`);
  }

  /** A tool's result: its text parts as they are (an error's text on stderr), or {"parts": [...]} with --json. */
  toolResult(parts: ToolResultPart[], failed = false): void {
    if (this.json) return this.print(failed ? { error: true, parts } : { parts });
    const text = parts
      .map((part) =>
        part.type === 'text' ? part.text : `\nimage saved: ${part.path} (${part.mime}, ${formatSize(part.bytes)})`,
      )
      .join('');
    (failed ? this.stderr : this.stdout).write(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** The tools: name, description and input schema each. */
  toolList(tools: { name: string; description: string; budget: string; inputSchema: unknown }[]): void {
    if (this.json) return this.print({ tools });
    for (const tool of tools)
      this.stdout.write(
        `${tool.name}\n  ${tool.description.replace(/\n/g, '\n  ')}\n  result: ${tool.budget}\n  input: ${JSON.stringify(tool.inputSchema)}\n\n`,
      );
  }

  /** A file `validate` did not read; on stderr even with --json, whose stdout stays one array. */
  skipped(file: string, why: string): void {
    this.note(`skipped ${quoteName(file)}: ${why}`);
  }

  /** A copy session's changes: the diff on stdout, a summary and host-side changes on stderr. */
  copyDiff(
    result: { changes: CopyChange[]; diff: string; hostChanged: string[]; digest: string },
    session: string,
  ): void {
    if (this.json) return this.print(result);
    // The sandbox wrote these bytes: on a terminal, escapes and CR could erase or overwrite the lines
    // that would be applied, so controls are shown; piped, the patch stays exact.
    this.stdout.write(this.terminal ? visibleControls(result.diff) : result.diff);
    const count = (kind: CopyChange['change']) => result.changes.filter((change) => change.change === kind).length;
    this.note(
      result.changes.length
        ? `${result.changes.length} changed: ${count('added')} added, ${count('modified')} modified, ${count('deleted')} deleted`
        : 'no changes',
    );
    if (result.hostChanged.length)
      this.note(
        `changed in the folder too since the copy (a conflict to resolve): ${result.hostChanged.map(displayName).join(', ')}`,
      );
    if (result.changes.length)
      this.note(
        `to apply exactly these changes (nothing, if the sandbox changes them meanwhile): agent-sandbox apply --session ${session} --expect ${result.digest}`,
      );
  }

  /** What apply wrote, and what it held back. */
  applied(outcome: ApplyOutcome): void {
    if (this.json) return this.print(outcome);
    // Names come from the sandbox: one with a newline or terminal escapes is shown quoted.
    for (const change of outcome.applied) this.stdout.write(`applied ${change.change} ${displayName(change.path)}\n`);
    for (const held of outcome.heldBack)
      this.stdout.write(`held back ${displayName(held.path)}: ${held.why} (apply it with --include-protected)\n`);
    for (const path of outcome.conflicts)
      this.stdout.write(`conflict ${displayName(path)}: changed in the folder since the copy; left as it is\n`);
    if (!outcome.applied.length && !outcome.heldBack.length && !outcome.conflicts.length)
      this.note('no changes to apply');
  }

  usage(text: string): void {
    this.stdout.write(`${text}\n`);
  }

  private note(message: string): void {
    this.stderr.write(`agent-sandbox: ${message}\n`);
  }

  private print(value: unknown): void {
    this.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }
}

/** A stream whose text is redacted on its way out. */
function redacting(
  stream: NodeJS.WritableStream,
  redact: (text: string) => string,
): Pick<NodeJS.WritableStream, 'write'> {
  return {
    write: ((chunk: string | Uint8Array, ...rest: never[]) =>
      stream.write(typeof chunk === 'string' ? redact(chunk) : chunk, ...rest)) as NodeJS.WritableStream['write'],
  };
}

// C0 controls but tab and newline, DEL, C1 controls (0x9b is a CSI), bidirectional overrides and isolates.
const TERMINAL_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** Text with each terminal control shown, as less does: ^[ for ESC, ^M for CR, <U+202E> for the rest. */
export function visibleControls(text: string): string {
  return text.replace(TERMINAL_CONTROLS, (char) => {
    const code = char.charCodeAt(0);
    if (code < 0x20) return `^${String.fromCharCode(code + 0x40)}`;
    if (code === 0x7f) return '^?';
    return `<U+${code.toString(16).toUpperCase().padStart(4, '0')}>`;
  });
}
