import assert from 'node:assert/strict';
import { CONTAINER_CAPABILITIES, capabilitiesLine, engineLabel } from '../../src/core/engine/engineCapabilities';
import {
  parseEngineChoice,
  probeEngine,
  selectEngine,
  type VirtualConsent,
} from '../../src/core/engine/engineSelection';
import type { EngineCapabilities } from '../../src/core/engine/engine';
import { SandboxError } from '../../src/core/errors';
import { DockerEngine } from '../../src/engines/docker/dockerEngine';

const VIRTUAL: EngineCapabilities = {
  isolation: 'in-process',
  processes: false,
  packages: false,
  network: false,
  languages: ['python', 'bash'],
  memoryLimit: false,
  persistentSessions: false,
};

/** A probe that answers, or fails the way a missing or refusing Docker Engine does. */
function probe(outcome: 'answers' | 'absent' | 'refuses' | 'broken'): { calls: number; run(): Promise<void> } {
  const state = {
    calls: 0,
    async run() {
      state.calls++;
      if (outcome === 'absent')
        throw new SandboxError(
          'engine-unavailable',
          'No Docker Engine answers at unix:///var/run/docker.sock: the socket does not exist.',
          'Start Docker.',
        );
      if (outcome === 'refuses')
        throw new SandboxError(
          'engine-permission',
          'Permission denied on the Docker socket unix:///var/run/docker.sock.',
          'Add your user to the docker group.',
        );
      if (outcome === 'broken')
        throw new SandboxError('engine-error', 'The Docker Engine reported an error: boom', 'Try again.');
    },
  };
  return state;
}

async function select(
  choice: 'auto' | 'docker' | 'virtual',
  outcome: Parameters<typeof probe>[0],
  consent: VirtualConsent,
) {
  const fake = probe(outcome);
  const selection = await selectEngine({ choice, consent, probeDocker: () => fake.run() });
  return { selection, probed: fake.calls };
}

describe('engine selection', () => {
  it('uses Docker under auto when it answers, whatever the consent', async () => {
    for (const consent of ['granted', 'declined', undefined] as const) {
      const { selection, probed } = await select('auto', 'answers', consent);
      assert.equal(selection.kind, 'docker');
      assert.equal(probed, 1);
    }
  });

  it('uses the virtual engine under auto when Docker is absent or refuses the socket, once the user agreed', async () => {
    for (const outcome of ['absent', 'refuses'] as const) {
      const { selection } = await select('auto', outcome, 'granted');
      assert.equal(selection.kind, 'virtual');
      assert.match(
        (selection as { dockerProblem: string }).dockerProblem,
        outcome === 'absent' ? /No Docker Engine answers/ : /Permission denied/,
      );
    }
  });

  it('runs nothing under auto until the user agreed: asks once, and says what to install or change', async () => {
    const { selection } = await select('auto', 'absent', undefined);
    assert.equal(selection.kind, 'none');
    if (selection.kind !== 'none') return;
    assert.equal(selection.ask, true);
    assert.ok(SandboxError.is(selection.error, 'engine-unavailable'));
    assert.match(selection.error.message, /No Docker Engine answers.*asked whether to use the virtual engine/s);
    assert.match(selection.error.hint!, /start Docker.*agentSandbox\.engine to "virtual"/is);
    const declined = (await select('auto', 'refuses', 'declined')).selection;
    assert.equal(declined.kind, 'none');
    if (declined.kind !== 'none') return;
    assert.equal(declined.ask, false);
    assert.match(declined.error.message, /declined/);
    assert.match(declined.error.hint!, /agentSandbox\.engine/);
  });

  it('keeps Docker under auto when it answered with an error of its own (it is there)', async () => {
    assert.equal((await select('auto', 'broken', 'granted')).selection.kind, 'docker');
  });

  it('does not probe when the setting names the engine', async () => {
    assert.deepEqual(
      await select('docker', 'absent', 'granted').then(({ selection, probed }) => [selection.kind, probed]),
      ['docker', 0],
    );
    assert.deepEqual(
      await select('virtual', 'answers', 'declined').then(({ selection, probed }) => [selection.kind, probed]),
      ['virtual', 0],
    );
  });

  it('probes a real dead socket as absent, and a silent engine as absent after the timeout', async () => {
    const dead = new DockerEngine({ host: 'unix:///tmp/agent-sandbox-unit-dead.sock' });
    const selection = await selectEngine({ choice: 'auto', consent: 'granted', probeDocker: () => probeEngine(dead) });
    assert.equal(selection.kind, 'virtual');
    assert.match((selection as { dockerProblem: string }).dockerProblem, /agent-sandbox-unit-dead\.sock/);
    const silent = {
      info: (signal?: AbortSignal) =>
        new Promise<never>((_, reject) =>
          signal?.addEventListener('abort', () => reject(new SandboxError('aborted', 'aborted'))),
        ),
    };
    await assert.rejects(
      probeEngine(silent, 50),
      (error: unknown) =>
        SandboxError.is(error, 'engine-unavailable') && /did not answer within 0.05 s/.test(error.message),
    );
  });

  it('reads the choice from a flag or variable, and names the bad value', () => {
    assert.equal(parseEngineChoice('virtual', '--engine'), 'virtual');
    assert.equal(parseEngineChoice(undefined, '--engine'), undefined);
    assert.equal(parseEngineChoice('', 'AGENT_SANDBOX_ENGINE'), undefined);
    assert.throws(
      () => parseEngineChoice('podman', 'AGENT_SANDBOX_ENGINE'),
      /AGENT_SANDBOX_ENGINE must be one of auto, docker, virtual, not "podman"/,
    );
  });
});

describe('engine capabilities in words', () => {
  it('names a container engine plainly and the virtual engine with its isolation and what it lacks', () => {
    assert.equal(engineLabel('docker', CONTAINER_CAPABILITIES), 'docker');
    assert.equal(
      engineLabel('virtual', VIRTUAL),
      'virtual (in-process isolation, no real processes, no package installs, no network, no memory kill)',
    );
  });

  it('spells the capabilities out for sandbox_open', () => {
    assert.match(
      capabilitiesLine('docker', CONTAINER_CAPABILITIES),
      /^engine docker: isolation by a hardened container · languages python, node, bash, linux · real processes/,
    );
    const line = capabilitiesLine('virtual', VIRTUAL);
    assert.match(line, /lighter than a container/);
    assert.match(
      line,
      /no real processes.*no package installs.*no network.*no memory kill.*sessions end with this process/,
    );
  });
});
