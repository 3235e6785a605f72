/**
 * "Open Terminal in Sandbox": a VS Code terminal backed by a shell on a TTY inside a session. The
 * engine's TTY does the line discipline (echo, CR/LF), so data passes through untouched, except
 * for the secrets' values, shown as [secret:NAME] unless the user asked to see them.
 */
import * as vscode from 'vscode';
import type { ShellSession } from '../core/engine/engine';
import { SandboxError, errorMessage } from '../core/errors';
import type { StreamRedactor } from '../core/secrets/streamRedaction';

export interface TerminalDimensions {
  cols: number;
  rows: number;
}

export type OpenShell = (dimensions?: TerminalDimensions) => Promise<ShellSession>;

/** Keystrokes typed while the shell starts are held, up to this many characters. */
const EARLY_INPUT_CAP = 64 * 1024;
/** What the redactor holds back (a value may be cut between chunks) is shown after this pause in the output. */
const HELD_OUTPUT_MS = 40;

export class SandboxPseudoterminal implements vscode.Pseudoterminal {
  private readonly writeEmitter = new vscode.EventEmitter<string>();
  private readonly closeEmitter = new vscode.EventEmitter<number | void>();
  readonly onDidWrite = this.writeEmitter.event;
  readonly onDidClose = this.closeEmitter.event;

  private shell: ShellSession | undefined;
  private subscriptions: { dispose(): void }[] = [];
  private dimensions: TerminalDimensions | undefined;
  private earlyInput = '';
  private failed = false;
  private closed = false;
  private heldTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly name: string,
    private readonly openShell: OpenShell,
    private readonly log?: (message: string) => void,
    private readonly redaction?: StreamRedactor,
  ) {}

  open(initialDimensions: vscode.TerminalDimensions | undefined): void {
    this.dimensions = initialDimensions && { cols: initialDimensions.columns, rows: initialDimensions.rows };
    void this.start();
  }

  handleInput(data: string): void {
    if (this.failed) {
      this.finish(undefined);
    } else if (this.shell) {
      this.shell.write(data);
    } else if (this.earlyInput.length + data.length <= EARLY_INPUT_CAP) {
      this.earlyInput += data;
    }
  }

  setDimensions(dimensions: vscode.TerminalDimensions): void {
    this.dimensions = { cols: dimensions.columns, rows: dimensions.rows };
    this.shell
      ?.resize(dimensions.columns, dimensions.rows)
      .catch((error: unknown) => this.log?.(`${this.name}: resizing the terminal failed: ${describe(error)}`));
  }

  /** The user closed the terminal: the shell and everything it started go with it. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.release();
    this.disposeEmitters();
  }

  private async start(): Promise<void> {
    const asked = this.dimensions;
    let shell: ShellSession;
    try {
      shell = await this.openShell(asked);
    } catch (error) {
      this.log?.(`${this.name}: opening a shell failed: ${errorMessage(error)}`);
      if (this.closed) return;
      this.failed = true;
      this.writeEmitter.fire(failureText(error));
      return;
    }
    if (this.closed) {
      void shell.close().catch(() => undefined);
      return;
    }
    this.shell = shell;
    this.subscriptions.push(
      shell.onData((data) => this.output(data)),
      shell.onExit((exitCode) => {
        this.log?.(`${this.name}: the shell exited${exitCode === null ? '' : ` with code ${exitCode}`}.`);
        this.flushHeld();
        this.finish(exitCode ?? undefined);
      }),
    );
    // The terminal may have been resized while the shell started.
    const now = this.dimensions;
    if (now && (now.cols !== asked?.cols || now.rows !== asked?.rows))
      this.setDimensions({ columns: now.cols, rows: now.rows });
    if (this.earlyInput) {
      shell.write(this.earlyInput);
      this.earlyInput = '';
    }
  }

  private output(data: string): void {
    if (!this.redaction) return this.writeEmitter.fire(data);
    const shown = this.redaction.push(data);
    if (shown) this.writeEmitter.fire(shown);
    clearTimeout(this.heldTimer);
    if (this.redaction.holding) this.heldTimer = setTimeout(() => this.flushHeld(), HELD_OUTPUT_MS);
  }

  private flushHeld(): void {
    clearTimeout(this.heldTimer);
    const rest = this.redaction?.flush();
    if (rest && !this.closed) this.writeEmitter.fire(rest);
  }

  /** The shell ended (or the user dismissed an error): the terminal closes, with the shell's exit code. */
  private finish(exitCode: number | undefined): void {
    if (this.closed) return;
    this.closed = true;
    this.release();
    this.closeEmitter.fire(exitCode);
    this.disposeEmitters();
  }

  private release(): void {
    clearTimeout(this.heldTimer);
    for (const subscription of this.subscriptions.splice(0)) subscription.dispose();
    const shell = this.shell;
    this.shell = undefined;
    shell?.close().catch((error: unknown) => this.log?.(`${this.name}: closing the shell failed: ${describe(error)}`));
  }

  private disposeEmitters(): void {
    this.writeEmitter.dispose();
    this.closeEmitter.dispose();
  }
}

/** Opens and shows a terminal on a new shell in a session; `open` starts the shell at the terminal's size. */
export function openSandboxTerminal(
  name: string,
  open: OpenShell,
  log?: (message: string) => void,
  redaction?: StreamRedactor,
): vscode.Terminal {
  const pty = new SandboxPseudoterminal(name, open, log, redaction);
  const terminal = vscode.window.createTerminal({ name, pty, iconPath: new vscode.ThemeIcon('vm') });
  terminal.show();
  return terminal;
}

/** The error and what to do about it, in red, then how to get rid of the terminal; the terminal needs CR LF. */
function failureText(error: unknown): string {
  const lines = [
    vscode.l10n.t(
      'Could not open a shell in the sandbox: {0}',
      SandboxError.is(error) ? error.message : describe(error),
    ),
  ];
  if (SandboxError.is(error) && error.hint) lines.push(error.hint);
  const body = lines.map((line) => line.replace(/\r?\n/g, '\r\n')).join('\r\n');
  return `\x1b[31m${body}\x1b[0m\r\n\r\n${vscode.l10n.t('Press any key to close this terminal.')}\r\n`;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
