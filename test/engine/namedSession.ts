/**
 * A named code-mode session of a folder on any engine, found again or opened: the engine tests'
 * way past SandboxService's policy, to give an engine an exact spec. Finding is core's findSession,
 * the same lookup (scope checked) as every caller's.
 */
import type { OpenOptions, Sandbox, SandboxEngine } from '../../src/core/engine/engine';
import { findSession } from '../../src/core/sessions/findSession';
import type { SandboxSpec } from '../../src/core/spec/spec';

export async function openSession(
  engine: SandboxEngine,
  spec: SandboxSpec,
  options: OpenOptions & { name: string; workspaceFolder: string },
): Promise<{ sandbox: Sandbox; created: boolean }> {
  const existing = await findSession(engine, options.workspaceFolder, options.name, options.signal);
  if (existing) return { sandbox: await engine.attach(existing.id, options.signal), created: false };
  return { sandbox: await engine.open({ ...spec, mode: 'code' }, options), created: true };
}
