import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import type Docker from 'dockerode';
import type { SessionDeath } from '../../src/core/sessions/sessionDeath';
import { ContainerDeathWatcher } from '../../src/engines/docker/events';

const ID = 'a'.repeat(64);
const OTHER = 'b'.repeat(64);
const SPEC = JSON.stringify({ limits: { memoryBytes: 64 * 1024 * 1024 } });

/** A stand-in for the engine's /events endpoint: each call gets a stream the test writes to, or fails. */
class FakeEngine {
  readonly calls: { since?: string }[] = [];
  readonly streams: PassThrough[] = [];
  failures = 0;
  /** Whether the engine answers a ping. */
  up = true;

  ping = () => (this.up ? Promise.resolve('OK') : Promise.reject(new Error('connect ECONNREFUSED')));

  getEvents = (options: { since?: string }) => {
    this.calls.push(options);
    if (this.failures > 0) {
      this.failures--;
      return Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
    }
    const stream = new PassThrough();
    this.streams.push(stream);
    return Promise.resolve(stream);
  };

  get stream(): PassThrough {
    return this.streams.at(-1)!;
  }
}

let clock = Date.parse('2030-01-01T00:00:00Z');
function event(action: string, id: string, attributes: Record<string, string> = {}): string {
  clock += 1000;
  return `${JSON.stringify({ Type: 'container', Action: action, status: action, id, Actor: { ID: id, Attributes: { 'org.agent-sandbox.session': 'work', 'org.agent-sandbox.spec': SPEC, ...attributes } }, time: Math.floor(clock / 1000), timeNano: clock * 1e6 })}\n`;
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  assert.ok(condition(), `timed out waiting for ${what}`);
}

describe('container death watcher', () => {
  let engine: FakeEngine;
  let watcher: ContainerDeathWatcher;
  let deaths: SessionDeath[];

  beforeEach(() => {
    engine = new FakeEngine();
    watcher = new ContainerDeathWatcher(engine as unknown as Pick<Docker, 'getEvents' | 'ping'>, {
      retryMs: 5,
      maxRetryMs: 40,
      dieGraceMs: 20,
    });
    deaths = [];
    watcher.onDeath((death) => deaths.push(death));
  });
  afterEach(() => watcher.dispose());

  async function started(): Promise<void> {
    watcher.start();
    await until(() => watcher.isConnected, 'the stream');
  }

  it('calls nothing until started, and subscribes once', async () => {
    assert.equal(engine.calls.length, 0);
    await started();
    watcher.start();
    assert.equal(engine.calls.length, 1);
    assert.deepEqual((engine.calls[0] as { filters?: unknown }).filters, {
      type: ['container'],
      label: ['org.agent-sandbox.managed=1'],
      // Podman's names of die and destroy too.
      event: ['die', 'oom', 'destroy', 'kill', 'died', 'remove'],
    });
  });

  it('reads events split across chunks anywhere, even inside a character', async () => {
    await started();
    const text = Buffer.from(event('oom', ID) + event('die', ID, { exitCode: '137', note: 'ü€' }));
    for (let i = 0; i < text.length; i += 7) engine.stream.write(text.subarray(i, i + 7));
    await until(() => deaths.length === 1, 'the death');
    assert.deepEqual(deaths[0], {
      id: ID,
      name: 'work',
      reason: { kind: 'oom', at: deaths[0]!.reason.at, memoryBytes: 64 * 1024 * 1024 },
    });
  });

  it('tells a main process OOM from a command OOM, and a kill from outside from a crash', async () => {
    await started();
    // An OOM of a command run in the container, which lives on; later it is killed from outside.
    engine.stream.write(event('oom', ID));
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(watcher.reasonFor(ID), undefined);
    engine.stream.write(event('kill', ID, { signal: '9' }) + event('die', ID, { exitCode: '137' }));
    await until(() => watcher.reasonFor(ID) !== undefined, 'the kill');
    assert.deepEqual(watcher.reasonFor(ID), {
      kind: 'signal',
      at: watcher.reasonFor(ID)!.at,
      signal: 'SIGKILL',
      fromOutside: true,
    });

    engine.stream.write(event('die', OTHER, { exitCode: '139' }));
    await until(() => watcher.reasonFor(OTHER) !== undefined, 'the crash');
    assert.equal(watcher.reasonFor(OTHER)!.kind, 'segfault');
    engine.stream.write(event('die', OTHER, { exitCode: '3' }));
    await until(() => watcher.reasonFor(OTHER)!.kind === 'exit', 'the exit');
    assert.equal((watcher.reasonFor(OTHER) as { exitCode: number }).exitCode, 3);
    assert.equal(watcher.reasonFor(OTHER.slice(0, 12))!.kind, 'exit');
  });

  it('reports a removal from outside once, and its own removals never', async () => {
    await started();
    // docker rm -f: kill, die and destroy in a row make one report.
    engine.stream.write(
      event('kill', ID, { signal: '9' }) + event('die', ID, { exitCode: '137' }) + event('destroy', ID),
    );
    await until(() => deaths.length === 1, 'the removal');
    await new Promise((resolve) => setTimeout(resolve, 40));
    assert.equal(deaths.length, 1);
    assert.equal(deaths[0]!.reason.kind, 'removed');
    assert.equal((deaths[0]!.reason as { before?: { kind: string } }).before?.kind, 'signal');

    watcher.markRemoving(OTHER.slice(0, 12));
    engine.stream.write(
      event('kill', OTHER, { signal: '9' }) + event('die', OTHER, { exitCode: '137' }) + event('destroy', OTHER),
    );
    await until(() => watcher.reasonFor(OTHER) !== undefined, 'the close');
    await new Promise((resolve) => setTimeout(resolve, 40));
    assert.equal(watcher.reasonFor(OTHER)!.kind, 'closed');
    assert.equal(deaths.length, 1);
  });

  it("reads Podman's events: died and remove, an exit code in containerExitCode, a kill that names no signal", async () => {
    await started();
    engine.stream.write(event('kill', ID) + event('died', ID, { containerExitCode: '137' }));
    await until(() => watcher.reasonFor(ID)?.kind === 'signal', 'the kill');
    assert.deepEqual(
      { ...watcher.reasonFor(ID), at: undefined },
      { kind: 'signal', at: undefined, signal: 'SIGKILL', fromOutside: true },
    );
    engine.stream.write(event('died', OTHER, { containerExitCode: '3' }) + event('remove', OTHER));
    await until(() => deaths.some((death) => death.id === OTHER && death.reason.kind === 'removed'), 'the removal');
    const removed = deaths.find((death) => death.id === OTHER)!.reason as {
      before?: { kind: string; exitCode: number };
    };
    assert.deepEqual([removed.before?.kind, removed.before?.exitCode], ['exit', 3]);
  });

  it('says when Agent Sandbox stopped a container itself', async () => {
    await started();
    watcher.markStopping(ID, 'its processes could not be stopped');
    engine.stream.write(event('kill', ID, { signal: '9' }) + event('die', ID, { exitCode: '137' }));
    await until(() => deaths.length === 1, 'the stop');
    assert.deepEqual(deaths[0]!.reason, {
      kind: 'stopped',
      at: deaths[0]!.reason.at,
      why: 'its processes could not be stopped',
    });
  });

  it('waits a moment for the event a failed call is ahead of', async () => {
    await started();
    const settled = watcher.settle(ID, 'removed', 2000);
    setTimeout(() => engine.stream.write(event('destroy', ID)), 20);
    assert.equal((await settled)?.kind, 'removed');
    assert.equal(await watcher.settle(OTHER, 'removed', 30), undefined);
  });

  it('reconnects with backoff when the engine goes away, resuming where it left off', async () => {
    await started();
    engine.stream.write(event('die', OTHER, { exitCode: '1' }));
    await until(() => watcher.reasonFor(OTHER) !== undefined, 'the first event');
    const lastSeen = clock;
    engine.failures = 3;
    engine.up = false;
    engine.stream.end();
    // Between the end of the stream and the reconnection, whatever the timers' delays.
    const whileDown = Date.now();
    await until(() => engine.calls.length === 5 && watcher.isConnected, 'the reconnection');
    assert.ok(
      Math.abs(Number(engine.calls[4]!.since) * 1000 - lastSeen) <= 1,
      `resumed from ${engine.calls[4]!.since}`,
    );

    // A container that stopped while the stream was down is put down to the engine going away.
    const during = new Date(whileDown).toISOString();
    assert.deepEqual(watcher.explain(ID, during), { kind: 'engine-stopped', at: during });
    assert.equal(watcher.explain(ID, '2001-01-01T00:00:00Z'), undefined);

    // Events the engine replays from before the drop are not reported twice; new ones are.
    const before = deaths.length;
    const fresh = event('die', ID, { exitCode: '2' });
    engine.stream.write(fresh);
    await until(() => deaths.length === before + 1, 'the new event');
    engine.stream.write(fresh);
    await new Promise((resolve) => setTimeout(resolve, 40));
    assert.equal(deaths.length, before + 1);
  });

  it('follows again at once a stream that ended while the engine answers: no outage (Podman rotating its event log)', async () => {
    watcher.dispose();
    watcher = new ContainerDeathWatcher(engine as unknown as Pick<Docker, 'getEvents' | 'ping'>, {
      retryMs: 5,
      dieGraceMs: 20,
      streamLivedMs: 0,
    });
    await started();
    engine.stream.write(event('kill', ID, { signal: '9' }) + event('die', ID, { exitCode: '137' }));
    await until(() => watcher.reasonFor(ID) !== undefined, 'the death');
    const lastSeen = clock;
    engine.stream.end();
    await until(() => engine.calls.length === 2 && watcher.isConnected, 'the stream again');
    assert.ok(
      Math.abs(Number(engine.calls[1]!.since) * 1000 - lastSeen) <= 1,
      `resumed from ${engine.calls[1]!.since}`,
    );
    const now = new Date().toISOString();
    assert.equal(watcher.reasonFor(ID)?.kind, 'signal', 'a kill from outside, not the engine stopping');
    assert.notEqual(watcher.explain(OTHER, now)?.kind, 'engine-stopped');

    // The same end with the engine gone is an outage, as before.
    engine.up = false;
    engine.failures = 1;
    engine.stream.end();
    await until(() => engine.calls.length === 4 && watcher.isConnected, 'the reconnection');
    assert.equal(watcher.reasonFor(ID)?.kind, 'engine-stopped');
  });

  it('stops for good on dispose', async () => {
    await started();
    watcher.dispose();
    assert.equal(engine.stream.destroyed, true);
    await new Promise((resolve) => setTimeout(resolve, 40));
    assert.equal(engine.calls.length, 1);
    assert.equal(watcher.isConnected, false);
  });
});
