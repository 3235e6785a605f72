import assert from 'node:assert/strict';
import { collectSecrets } from '../../src/core/secrets/secrets';

describe('secrets from the host environment', () => {
  it('takes only prefixed variables, with the prefix stripped', () => {
    const env = {
      AGENT_SANDBOX_ENV_API_KEY: 'x1',
      STN_CODE_DB_PASSWORD: 'x2',
      AGENT_SANDBOX_TEST_NOT_INJECTED: 'no',
      AGENT_SANDBOX_IMAGE_PYTHON: 'no',
      HOME: '/root',
      PATH: '/usr/bin',
      agent_sandbox_env_lower: 'no',
      UNSET: undefined,
    };
    assert.deepEqual(collectSecrets(env), { API_KEY: 'x1', DB_PASSWORD: 'x2' });
  });

  it('skips names that end up empty or invalid', () => {
    const env = {
      AGENT_SANDBOX_ENV_: 'empty',
      AGENT_SANDBOX_ENV_1ST: 'digit',
      'AGENT_SANDBOX_ENV_A-B': 'dash',
      'STN_CODE_A B': 'space',
      STN_CODE__OK: 'fine',
      AGENT_SANDBOX_ENV_EMPTY_VALUE: '',
    };
    assert.deepEqual(collectSecrets(env), { _OK: 'fine', EMPTY_VALUE: '' });
  });

  it('lets the first prefix win when two give the same name', () => {
    assert.deepEqual(collectSecrets({ STN_CODE_TOKEN: 'second', AGENT_SANDBOX_ENV_TOKEN: 'first' }), {
      TOKEN: 'first',
    });
    assert.deepEqual(
      collectSecrets({ STN_CODE_TOKEN: 'second', AGENT_SANDBOX_ENV_TOKEN: 'first' }, [
        'STN_CODE_',
        'AGENT_SANDBOX_ENV_',
      ]),
      { TOKEN: 'second' },
    );
    assert.deepEqual(collectSecrets({ MY_X: '1' }, ['MY_', '']), { X: '1' });
  });
});
