import type { SessionInfo } from '../engine/engine';
import { resolveSpec } from '../spec/resolveSpec';
import { parseSandboxId } from './sessions';

/** What close() reports for a session that had already died and disappeared. */
export function deadPlaceholder(sandboxId: string): SessionInfo {
  const { scope, name } = parseSandboxId(sandboxId);
  const spec = resolveSpec({ mode: 'code' });
  return {
    id: '',
    name,
    engine: 'docker',
    mode: 'code',
    runtime: spec.runtime,
    image: '',
    spec,
    workspaceAccess: 'none',
    scope,
    network: false,
    createdAt: '',
    state: 'stopped',
    notices: [],
  };
}
