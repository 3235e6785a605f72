/** The main job with no container engine: the CLI falls back to the virtual engine and says so. */
import assert from 'node:assert/strict';
import { runCliText } from './cliRunner';

function cli(args: string[], env: NodeJS.ProcessEnv) {
  return runCliText(args, { env: { AGENT_SANDBOX_ENGINE: '', ...env } });
}

describe('the CLI without a container engine', function () {
  const dead = { DOCKER_HOST: 'unix:///tmp/agent-sandbox-dead-engine.sock' };

  it('runs the main job (run --code) in the virtual engine and names it on stderr', async () => {
    const result = await cli(['run', '--code', 'print(6*7)'], dead);
    assert.equal(result.stdout, '42\n', result.stderr);
    assert.equal(result.code, 0);
    assert.match(
      result.stderr,
      /No Docker Engine answers at unix:\/\/\/tmp\/agent-sandbox-dead-engine\.sock.*Using the virtual engine instead/,
    );
    assert.match(result.stderr, /virtual engine/i);
  });

  it('reports the engine in --json, and follows --engine and AGENT_SANDBOX_ENGINE', async () => {
    const json = await cli(['run', '--json', '--runtime', 'bash', '--code', 'echo $((6*7))'], dead);
    assert.equal(JSON.parse(json.stdout).engine, 'virtual');
    const flagged = await cli(['run', '--engine', 'virtual', '--code', 'print(6*7)'], {});
    assert.equal(flagged.stdout, '42\n', flagged.stderr);
    assert.doesNotMatch(flagged.stderr, /No Docker Engine answers/);
    const fromEnv = await cli(['engine', '--json'], { AGENT_SANDBOX_ENGINE: 'virtual' });
    assert.equal(JSON.parse(fromEnv.stdout).kind, 'virtual');
  });

  it('with --engine docker, fails and says how to fix it instead of falling back', async () => {
    const result = await cli(['run', '--engine', 'docker', '--code', 'print(1)'], dead);
    assert.equal(result.code, 125);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /No Docker Engine answers/);
    const usage = await cli(['run', '--engine', 'podman', '--code', 'print(1)'], {});
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /--engine must be one of auto, docker, virtual/);
  });
});
