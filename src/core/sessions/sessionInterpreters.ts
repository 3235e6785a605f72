/**
 * The persistent interpreters this process has reached, per session and language: started on first
 * use, a new one when the last has ended (with a notice that its state was lost).
 */
import type { Sandbox } from '../engine/engine';
import { Interpreter, interpreterName, type InterpreterLanguage } from '../interpreters/interpreter';
import type { PersistentInterpreter } from '../interpreters/persistentInterpreter';

export class SessionInterpreters {
  /** Container id → its interpreters. */
  private readonly byContainer = new Map<string, Map<InterpreterLanguage, PersistentInterpreter>>();

  async get(
    sandbox: Sandbox,
    language: InterpreterLanguage,
    signal?: AbortSignal,
  ): Promise<{ interpreter: PersistentInterpreter; notices: string[] }> {
    const id = sandbox.info.id;
    const mine = this.byContainer.get(id) ?? new Map<InterpreterLanguage, PersistentInterpreter>();
    this.byContainer.set(id, mine);
    const known = mine.get(language);
    if (known?.alive) return { interpreter: known, notices: [] };
    const cap = sandbox.info.spec.limits.maxStdoutBytes;
    // An engine that keeps the interpreter itself says so; others run it as a kernel process.
    const started = sandbox.openInterpreter
      ? await sandbox.openInterpreter(language, cap, signal)
      : await Interpreter.start(sandbox, language, cap, signal);
    mine.set(language, started);
    // The session's kernel outlives this process's client: a new client may find the same state, or a
    // new kernel after the last one ended (said once, by whichever process starts it).
    const ended = started.previousEnd ?? (known && started.callsBefore === 0 ? known.endReason : undefined);
    return {
      interpreter: started,
      notices: ended
        ? [
            `A new ${interpreterName(language)} interpreter was started, so the variables and imports of the last one are gone: ${ended}`,
          ]
        : [],
    };
  }

  /** Ends this process's connections to one session's interpreters. */
  forget(containerId: string): void {
    for (const interpreter of this.byContainer.get(containerId)?.values() ?? []) void interpreter.close();
    this.byContainer.delete(containerId);
  }

  /** Ends this process's connections to every interpreter (the interpreters, and their state, stay). */
  async closeAll(): Promise<void> {
    const all = [...this.byContainer.values()].flatMap((mine) => [...mine.values()]);
    this.byContainer.clear();
    await Promise.all(all.map((interpreter) => interpreter.close()));
  }
}
