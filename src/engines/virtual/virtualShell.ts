/**
 * A terminal on a virtual sandbox: a small line editor that runs each entered line in the session
 * (there is no TTY or process to attach to). The working directory carries over from line to
 * line; other shell state starts fresh each time, as in `sh -c`.
 */
import type { Sandbox, ShellOptions, ShellSession } from '../../core/engine/engine';
import { ShellOutput } from '../../core/sessions/shellOutput';
import { WORKSPACE_DIR } from '../../core/files/paths';
import { shellQuote } from './shellQuote';

const CWD_MARK = '\x1e';

export async function openVirtualShell(sandbox: Sandbox, options: ShellOptions): Promise<ShellSession> {
  const shell = new VirtualShell(sandbox, options);
  if (options.command) void shell.runProgram(options.command);
  else shell.greet();
  return shell;
}

class VirtualShell extends ShellOutput implements ShellSession {
  private line = '';
  private cwd: string;
  private running: AbortController | undefined;
  /** Input after an escape character, until the sequence ends (arrow keys and the like are ignored). */
  private escape = '';

  constructor(
    private readonly sandbox: Sandbox,
    private readonly options: ShellOptions,
  ) {
    super();
    this.cwd = options.cwd
      ? options.cwd.startsWith('/')
        ? options.cwd
        : `${WORKSPACE_DIR}/${options.cwd}`
      : WORKSPACE_DIR;
  }

  greet(): void {
    this.emit(
      'Virtual sandbox (just-bash): bash builtins and Python in this process, no real processes or network. Each line runs on its own; the directory carries over.\r\n',
    );
    this.prompt();
  }

  async runProgram(argv: readonly string[]): Promise<void> {
    const code = await this.run(argv.map(shellQuote).join(' '));
    this.finish(code);
  }

  write(data: string | Uint8Array): void {
    if (this.exited) return;
    for (const char of typeof data === 'string' ? data : Buffer.from(data).toString('utf8')) this.key(char);
  }

  async resize(): Promise<void> {
    // Nothing inside draws to a terminal size.
  }

  async close(): Promise<void> {
    this.running?.abort(new Error('the terminal was closed'));
    this.finish(null);
  }

  private key(char: string): void {
    if (this.escape || char === '\x1b') {
      this.escape += char;
      if (this.escape.length > 1 && /[A-Za-z~]$/.test(this.escape)) this.escape = '';
      return;
    }
    if (this.running) {
      if (char === '\x03') this.running.abort(new Error('interrupted (Ctrl-C)'));
      return;
    }
    switch (char) {
      case '\r':
      case '\n':
        void this.submit();
        return;
      case '\x7f':
      case '\b':
        if (this.line) {
          this.line = [...this.line].slice(0, -1).join('');
          this.emit('\b \b');
        }
        return;
      case '\x03':
        this.line = '';
        this.emit('^C\r\n');
        this.prompt();
        return;
      case '\x04':
        if (!this.line) this.finish(0);
        return;
      default:
        if (char >= ' ') {
          this.line += char;
          this.emit(char);
        }
    }
  }

  private async submit(): Promise<void> {
    const line = this.line;
    this.line = '';
    this.emit('\r\n');
    const exit = /^\s*exit(?:\s+(\d+))?\s*$/.exec(line);
    if (exit) return this.finish(Number(exit[1] ?? 0));
    if (line.trim()) await this.run(`${line}\n__as_status=$?\nprintf '${CWD_MARK}%s' "$PWD"\nexit $__as_status`);
    if (!this.exited) this.prompt();
  }

  private async run(script: string): Promise<number | null> {
    const controller = new AbortController();
    this.running = controller;
    try {
      const result = await this.sandbox.exec(
        { command: script, cwd: this.cwd, env: this.options.env },
        controller.signal,
      );
      let stdout = result.stdout;
      const mark = stdout.lastIndexOf(CWD_MARK);
      if (mark !== -1) {
        this.cwd = stdout.slice(mark + 1) || this.cwd;
        stdout = stdout.slice(0, mark);
      }
      this.emit(terminalText(stdout + result.stderr));
      if (result.hint && result.outcome !== 'ok' && result.outcome !== 'error')
        this.emit(terminalText(`${result.hint}\n`));
      return result.exitCode;
    } catch (error) {
      this.emit(terminalText(`${(error as Error).message}\n`));
      return null;
    } finally {
      this.running = undefined;
    }
  }

  private prompt(): void {
    const where = this.cwd === WORKSPACE_DIR ? '/workspace' : this.cwd;
    this.emit(`user@sandbox:${where}$ `);
  }
}

/** Terminals need a carriage return before each line feed. */
function terminalText(text: string): string {
  return text.replace(/\r?\n/g, '\r\n');
}
