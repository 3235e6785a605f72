/**
 * The listener side of an interactive shell, shared by every engine's terminal: output that arrives
 * before anyone listens is held (up to a cap), and the exit is reported once, also to late listeners.
 */
const PENDING_CAP_CHARS = 1024 * 1024;

export abstract class ShellOutput {
  protected exited = false;
  protected exitCode: number | null = null;
  private pending: string[] = [];
  private pendingChars = 0;
  private readonly dataListeners = new Set<(data: string) => void>();
  private readonly exitListeners = new Set<(exitCode: number | null) => void>();

  onData(listener: (data: string) => void): { dispose(): void } {
    this.dataListeners.add(listener);
    if (this.pending.length) {
      const held = this.pending.join('');
      this.pending = [];
      this.pendingChars = 0;
      listener(held);
    }
    return { dispose: () => this.dataListeners.delete(listener) };
  }

  onExit(listener: (exitCode: number | null) => void): { dispose(): void } {
    if (this.exited) {
      listener(this.exitCode);
      return { dispose: () => undefined };
    }
    this.exitListeners.add(listener);
    return { dispose: () => this.exitListeners.delete(listener) };
  }

  protected emit(text: string): void {
    if (!text) return;
    if (this.dataListeners.size === 0) {
      this.pending.push(text);
      this.pendingChars += text.length;
      while (this.pendingChars > PENDING_CAP_CHARS && this.pending.length > 1)
        this.pendingChars -= this.pending.shift()!.length;
      return;
    }
    for (const listener of [...this.dataListeners]) listener(text);
  }

  protected finish(exitCode: number | null): void {
    if (this.exited) return;
    this.exited = true;
    this.exitCode = exitCode;
    const listeners = [...this.exitListeners];
    this.exitListeners.clear();
    for (const listener of listeners) listener(exitCode);
  }
}
