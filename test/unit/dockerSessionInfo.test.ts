import assert from 'node:assert/strict';
import { SandboxError } from '../../src/core/errors';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { containerCreateOptions } from '../../src/engines/docker/containerConfig';
import {
  containerInspectSchema,
  containerListSchema,
  execInspectSchema,
  readEngineJson,
  readEventLines,
} from '../../src/engines/docker/engineJson';
import { sessionFromInspect, sessionFromSummary, sessionInfo } from '../../src/engines/docker/sessionInfo';

const createdAt = '2026-01-01T00:00:00.000Z';
const spec = resolveSpec({ mode: 'code', runtime: 'bash', workspaceAccess: 'ro', limits: { memoryBytes: '256m' } });
const scope = { kind: 'agent' as const, key: 'reviewer' };

/** The labels open() gives a session's container: what list and attach read back. */
const labels = containerCreateOptions({
  name: 'agent-sandbox-build-0a1b2c3d',
  image: 'agent-sandbox/bash:bookworm',
  spec,
  sessionName: 'build',
  workspaceFolder: '/home/me/project',
  scope,
  client: 'vscode',
  user: { uid: 1000, gid: 1000 },
  createdAt,
  notices: ['a local image replaced one that could not be pulled'],
}).Labels!;

describe('Docker containers as sessions', () => {
  const opened = sessionInfo({
    id: 'f'.repeat(64),
    image: 'agent-sandbox/bash:bookworm',
    state: 'running',
    spec,
    name: 'build',
    workspaceFolder: '/home/me/project',
    scope,
    client: 'vscode',
    createdAt,
    notices: ['a local image replaced one that could not be pulled'],
  });

  it('a session listed or inspected by another process is the one that was opened', () => {
    const listed = sessionFromSummary(
      readEngineJson(
        containerListSchema,
        [{ Id: 'f'.repeat(64), Image: 'agent-sandbox/bash:bookworm', State: 'running', Labels: labels, Ports: [] }],
        'listing containers',
      )[0]!,
    );
    assert.deepEqual(listed, opened);
    const inspected = sessionFromInspect(
      readEngineJson(
        containerInspectSchema,
        {
          Id: 'f'.repeat(64),
          Created: createdAt,
          Config: { Image: 'agent-sandbox/bash:bookworm', Labels: labels, Env: [] },
          State: { Status: 'running', Running: true, Paused: false, OOMKilled: false, ExitCode: 0 },
          HostConfig: { Memory: 256 * 1024 * 1024 },
        },
        'inspecting container ffffffffffff',
      ),
    );
    assert.deepEqual(inspected, opened);
  });

  it('a stopped container is a stopped session; a container without labels (Podman says null) is read too', () => {
    const [stopped, bare] = readEngineJson(
      containerListSchema,
      [
        { Id: 'a'.repeat(64), Image: 'img', State: 'exited', Labels: labels },
        { Id: 'b'.repeat(64), Image: 'img', State: 'running', Labels: null },
      ],
      'listing containers',
    );
    assert.equal(sessionFromSummary(stopped!).state, 'stopped');
    assert.deepEqual(sessionFromSummary(bare!).scope, { kind: 'workspace' });
    assert.equal(sessionFromSummary(bare!).name, undefined);
  });

  it('an answer that is not the Docker Engine API is an engine-error naming the field, with what to check', () => {
    assert.throws(
      () =>
        readEngineJson(
          containerInspectSchema,
          { Id: 'x', Config: {}, State: { Running: 'yes' } },
          'inspecting container x',
        ),
      (error: unknown) =>
        SandboxError.is(error, 'engine-error') &&
        /answer to inspecting container x .*State\.Running/.test(error.message) &&
        /engineHost|DOCKER_HOST/.test(error.hint ?? ''),
    );
    assert.throws(
      () => readEngineJson(containerListSchema, { message: 'page not found' }, 'listing containers'),
      (error: unknown) => SandboxError.is(error, 'engine-error') && /listing containers/.test(error.message),
    );
    assert.equal(readEngineJson(execInspectSchema, { Running: false, ExitCode: 3 }, 'x').ExitCode, 3);
  });

  it('reads event lines old and new, skipping blank, cut and foreign ones', () => {
    const text = [
      '{"Type":"container","Action":"oom","Actor":{"ID":"abc","Attributes":{}},"timeNano":1}',
      '',
      '{"status":"die","id":"abc","time":2}',
      '{"Action": 5}',
      '{"Type":"container","Act',
    ].join('\n');
    assert.deepEqual(
      readEventLines(text).map((event) => event.Action ?? event.status),
      ['oom', 'die'],
    );
  });
});
