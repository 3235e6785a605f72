/**
 * A `copy` session whose changes the user has neither applied nor discarded is not closed behind
 * their back: closing it is refused (the tool says so in its result), and closing every session,
 * idle and lifetime collection, making room and orphan removal keep it open and say why. Only the
 * user discards the changes, by asking for it (agent-sandbox close --discard).
 */
import type { Sandbox, SandboxEngine, SessionInfo } from '../engine/engine';
import { SandboxError, errorMessage } from '../errors';
import type { CopyChange } from '../files/copyChanges';
import { pendingCopyChanges } from '../files/copyPending';
import { changeCounts, someChanges } from '../files/copySummary';
import { heldText } from './copyHeldText';
import { defaultStateDir } from './leases';
import { sandboxIdOf } from './sessions';
export { heldText };

/** A copy session's unapplied changes (one listing of its /workspace); none for other sessions. */
export type UnappliedChanges = (sandbox: Sandbox, signal?: AbortSignal) => Promise<CopyChange[]>;

export const unappliedChanges: UnappliedChanges = (sandbox, signal) =>
  pendingCopyChanges(sandbox, defaultStateDir(), signal);

/** A session kept open so that its changes are not lost. */
export interface HeldSession {
  session: SessionInfo;
  changes: CopyChange[];
  /** Why its changes could not be listed, when they could not (it is kept open all the same). */
  problem?: string;
}

/** Where the user reviews a session's changes, for every client. */
export function reviewPlaces(sandboxId: string): string {
  return `in VS Code under Source Control › "Sandbox changes"; elsewhere with agent-sandbox diff --session ${sandboxId} and agent-sandbox apply --session ${sandboxId}`;
}

/** Closing was refused: it would lose changes the user has not applied or discarded. */
export class ChangesAwaitReview extends SandboxError {
  constructor(
    readonly session: SessionInfo,
    readonly changes: CopyChange[],
  ) {
    const id = sandboxIdOf(session);
    super(
      'permission-denied',
      `Session "${id}" was not closed: its copy of the folder has ${changeCounts(changes)} not applied to the folder, which closing would lose. Review them ${reviewPlaces(id)}.`,
      `Apply or discard them, then close it; or close it losing them: agent-sandbox close --session ${id} --discard.`,
    );
  }
}

/**
 * The changes closing `session` would lose: none unless it is a running copy session, and none
 * when it turns out dead (its private /workspace went with it). Throws what listing them threw.
 */
export async function changesAtRisk(
  engine: SandboxEngine,
  session: SessionInfo,
  unapplied: UnappliedChanges,
  options: { sandbox?: Sandbox; signal?: AbortSignal } = {},
): Promise<CopyChange[]> {
  if (session.workspaceAccess !== 'copy' || session.state !== 'running') return [];
  try {
    const sandbox = options.sandbox ?? (await engine.attach(session.id, options.signal));
    return await unapplied(sandbox, options.signal);
  } catch (error) {
    if (SandboxError.is(error, 'session-dead') || SandboxError.is(error, 'session-not-found')) return [];
    throw error;
  }
}

/** For a close the user did not ask for by name: the hold that keeps it open, or undefined when it may close. */
export async function holdOf(
  engine: SandboxEngine,
  session: SessionInfo,
  unapplied: UnappliedChanges,
  options: { sandbox?: Sandbox; signal?: AbortSignal } = {},
): Promise<HeldSession | undefined> {
  try {
    const changes = await changesAtRisk(engine, session, unapplied, options);
    return changes.length ? { session, changes } : undefined;
  } catch (error) {
    if (SandboxError.is(error, 'aborted')) throw error;
    return { session, changes: [], problem: errorMessage(error).split('\n')[0] };
  }
}

/**
 * Before a close the user (or a tool) asked for: throws ChangesAwaitReview when it would lose
 * changes; with `discard`, closes anyway, and the notice says what was discarded.
 */
export async function checkClose(
  engine: SandboxEngine,
  session: SessionInfo,
  unapplied: UnappliedChanges,
  options: { sandbox?: Sandbox; signal?: AbortSignal; discard?: boolean },
): Promise<string[]> {
  if (!options.discard) {
    const changes = await changesAtRisk(engine, session, unapplied, options);
    if (changes.length) throw new ChangesAwaitReview(session, changes);
    return [];
  }
  const held = await holdOf(engine, session, unapplied, options);
  if (!held) return [];
  if (held.problem) return [`Closed without listing its copy's changes first (${held.problem}).`];
  return [`Discarded ${changeCounts(held.changes)} not applied to the folder: ${someChanges(held.changes)}.`];
}

/** The holds of one SandboxService: each kept session named in its log once. */
export class CopyHolds {
  private readonly said = new Set<string>();

  constructor(
    private readonly context: () => {
      engine(): SandboxEngine;
      unappliedChanges?: UnappliedChanges;
      log?(level: 'info' | 'warn', message: string): void;
    },
  ) {}

  /** For a close nobody asked for by name (idle, lifetime, room, a connection's end, closing all). */
  async hold(session: SessionInfo, sandbox?: Sandbox, signal?: AbortSignal): Promise<HeldSession | undefined> {
    const context = this.context();
    const hold = await holdOf(context.engine(), session, this.unapplied(), { sandbox, signal });
    if (hold && !this.said.has(session.id)) {
      this.said.add(session.id);
      context.log?.('warn', heldText(hold));
    }
    return hold;
  }

  /** See checkClose. */
  beforeClose(
    session: SessionInfo,
    options: { sandbox?: Sandbox; signal?: AbortSignal; discard?: boolean },
  ): Promise<string[]> {
    return checkClose(this.context().engine(), session, this.unapplied(), options);
  }

  forget(containerId: string): void {
    this.said.delete(containerId);
  }

  private unapplied(): UnappliedChanges {
    return this.context().unappliedChanges ?? unappliedChanges;
  }
}
