import assert from 'node:assert/strict';
import type { SessionInfo, SessionScope } from '../../src/core/engine/engine';
import { pickSession } from '../../src/core/sessions/findSession';
import { resolveSpec } from '../../src/core/spec/resolveSpec';

function session(id: string, name: string, scope: SessionScope): SessionInfo {
  const spec = resolveSpec({ mode: 'code' });
  return {
    id: id.padEnd(64, '0'),
    name,
    engine: 'docker',
    mode: 'code',
    runtime: spec.runtime,
    image: 'img',
    spec,
    workspaceAccess: 'none',
    workspaceFolder: '/ws',
    scope,
    network: false,
    createdAt: '2026-01-01T00:00:00.000Z',
    state: 'running',
    notices: [],
  };
}

describe('finding a session by sandbox_id', () => {
  // An agent's session listed first, as the engine may list it: a lookup by name alone would take it.
  const sessions = [
    session('a1', 'default', { kind: 'agent', key: 'foo' }),
    session('b2', 'default', { kind: 'workflow', key: 'run-1' }),
    session('c3', 'default', { kind: 'workspace' }),
    session('d4', 'build', { kind: 'agent', key: 'bar' }),
  ];

  it("takes a plain name for the workspace scope only, never an agent's or a workflow's session", () => {
    assert.equal(pickSession(sessions, 'default')?.id, sessions[2]!.id);
    assert.equal(pickSession(sessions, 'build'), undefined);
  });

  it('takes a scoped id for exactly that scope and key', () => {
    assert.equal(pickSession(sessions, 'agent:foo/default')?.id, sessions[0]!.id);
    assert.equal(pickSession(sessions, 'workflow:run-1/default')?.id, sessions[1]!.id);
    assert.equal(pickSession(sessions, 'agent:bar/build')?.id, sessions[3]!.id);
    assert.equal(pickSession(sessions, 'agent:other/default'), undefined);
    assert.equal(pickSession(sessions, 'workflow:foo/default'), undefined);
  });

  it('takes a container id of 12 hex digits or more, in any scope', () => {
    assert.equal(pickSession(sessions, sessions[0]!.id.slice(0, 12))?.name, 'default');
    assert.equal(pickSession(sessions, sessions[0]!.id.slice(0, 12))?.scope.kind, 'agent');
  });

  it('refuses an id that can be no session, saying what a name may be', () => {
    assert.throws(
      () => pickSession(sessions, 'agent:foo/'),
      (error: Error) => /is not a valid session name/.test(error.message),
    );
  });
});
