import assert from 'node:assert/strict';
import { tightenAccess, tightenNumber, tightenOrdered, userOnly } from '../../src/core/policy/settingsLevels';
import { NETWORK_MODES } from '../../src/core/spec/settings';
import { parseSize } from '../../src/core/spec/units';

const measure = (value: unknown) =>
  typeof value === 'number' ? value : typeof value === 'string' ? parseSize(value) : undefined;

describe('settings levels: a workspace may tighten the policy, never loosen it', () => {
  it('takes the smallest workspace access of the user level and every workspace level', () => {
    assert.equal(tightenAccess({ user: 'rw', workspace: ['ro', undefined] }, 'none').value, 'ro');
    assert.equal(tightenAccess({ user: 'rw', workspace: [undefined, 'none'] }, 'none').value, 'none');
    const loosened = tightenAccess({ user: undefined, workspace: ['rw'] }, 'none');
    assert.equal(loosened.value, 'none');
    assert.match(loosened.ignored ?? '', /more than your user settings allow/);
    assert.equal(tightenAccess({ user: 'ro', workspace: ['rw', undefined] }, 'none').value, 'ro');
  });

  it('raises the network mode only from the user level; a workspace may lower full to allowlist or off', () => {
    const mode = (user: string | undefined, ...workspace: (string | undefined)[]) =>
      tightenOrdered('network.mode', NETWORK_MODES, { user, workspace }, 'off');
    assert.equal(mode(undefined, 'full').value, 'off');
    assert.match(
      mode(undefined, 'allowlist').ignored ?? '',
      /network\.mode "allowlist" in workspace settings is more than/,
    );
    assert.equal(mode('allowlist', 'full').value, 'allowlist');
    assert.equal(mode('full', 'allowlist').value, 'allowlist');
    assert.equal(mode('full', undefined, 'off').value, 'off');
    assert.equal(mode('full', undefined, undefined).value, 'full');
  });

  it('lets a workspace lower a limit, never raise it above the user value or the default', () => {
    assert.equal(tightenNumber('limits.memory', { user: undefined, workspace: ['4g'] }, '512m', measure).value, '512m');
    assert.equal(
      tightenNumber('limits.memory', { user: undefined, workspace: ['256m'] }, '512m', measure).value,
      '256m',
    );
    assert.equal(tightenNumber('limits.memory', { user: '2g', workspace: ['1g', '4g'] }, '512m', measure).value, '1g');
    assert.equal(tightenNumber('timeoutSeconds', { user: 60, workspace: [3600] }, 120, measure).value, 60);
  });

  it('passes a value it cannot compare on to validation rather than using it to loosen', () => {
    assert.equal(tightenAccess({ user: 'none', workspace: ['everything'] }, 'none').value, 'everything');
    assert.equal(tightenNumber('limits.memory', { workspace: ['lots'] }, '512m', measure).value, 'lots');
  });

  it('reads user-only settings from the user level and reports a workspace value', () => {
    const engineHost = userOnly('engineHost', { user: undefined, workspace: ['tcp://attacker:2375'] });
    assert.equal(engineHost.value, undefined);
    assert.match(engineHost.ignored ?? '', /engineHost is set in workspace settings/);
    assert.deepEqual(userOnly('images', { user: { python: 'x' }, workspace: [] }).value, { python: 'x' });
  });
});
