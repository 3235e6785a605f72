import assert from 'node:assert/strict';
import { sandboxSpecSchema } from '../../src/core/spec/spec';
import { SandboxError } from '../../src/core/errors';
import { specFromFrontmatter } from '../../src/core/spec/frontmatterSpec';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { parseSettings, specFromSettings } from '../../src/core/spec/settings';
import { DEFAULT_LIMITS } from '../../src/core/spec/spec';
import { MiB, GiB, parseSize } from '../../src/core/spec/units';

describe('sandbox spec', () => {
  it('fills in the product defaults', () => {
    const spec = resolveSpec();
    assert.equal(spec.mode, 'compute');
    assert.equal(spec.runtime, 'python');
    assert.equal(spec.timeoutSeconds, 120);
    assert.equal(spec.network, false);
    assert.equal(spec.workspaceAccess, 'none');
    assert.deepEqual(spec.limits, { ...DEFAULT_LIMITS });
    assert.equal(spec.limits.memoryBytes, 512 * MiB);
    assert.equal(spec.limits.cpus, 1);
    assert.equal(spec.limits.pids, 256);
    assert.equal(spec.limits.maxStdoutBytes, MiB);
  });

  it('lets later layers win and merges limits and env key by key', () => {
    const spec = resolveSpec(
      { runtime: 'node', limits: { memoryBytes: '1g', cpus: 2 }, env: { A: '1' } },
      { limits: { cpus: 0.5 }, env: { B: '2' } },
    );
    assert.equal(spec.runtime, 'node');
    assert.equal(spec.limits.memoryBytes, GiB);
    assert.equal(spec.limits.cpus, 0.5);
    assert.deepEqual(spec.env, { A: '1', B: '2' });
  });

  it('rejects bad values with every problem named', () => {
    assert.throws(
      () => resolveSpec({ limits: { memoryBytes: '12 parsecs', pids: 1 }, timeoutSeconds: -1 }),
      (error: unknown) => {
        assert.ok(SandboxError.is(error, 'invalid-input'));
        assert.match(error.message, /limits\.memoryBytes: "12 parsecs" is not a memory size; write it like 512m or 1g/);
        assert.match(error.message, /limits\.pids/);
        assert.match(error.message, /timeoutSeconds/);
        return true;
      },
    );
  });

  it('allows runtime linux only in code mode', () => {
    assert.throws(() => resolveSpec({ runtime: 'linux' }), /runtime linux is only available in code mode/);
    assert.equal(resolveSpec({ runtime: 'linux', mode: 'code' }).runtime, 'linux');
  });

  it('rejects environment variable names a shell cannot hold', () => {
    assert.throws(() => resolveSpec({ env: { '1BAD': 'x' } }), /environment variable names/);
  });
});

describe('sizes', () => {
  it('reads sizes as people write them', () => {
    assert.equal(parseSize('512m'), 512 * MiB);
    assert.equal(parseSize('1g'), GiB);
    assert.equal(parseSize('256MiB'), 256 * MiB);
    assert.equal(parseSize('1.5GB'), 1.5 * GiB);
    assert.equal(parseSize(1024), 1024);
    assert.equal(parseSize('lots'), undefined);
    assert.equal(parseSize('12 parsecs'), undefined);
  });
});

describe('frontmatter sandbox block', () => {
  it('reads the shorthand', () => {
    assert.deepEqual(specFromFrontmatter('python'), { runtime: 'python' });
  });

  it("reads Station's object form with its spellings", () => {
    const layer = specFromFrontmatter({
      mode: 'code',
      session: 'workflow',
      runtime: 'node',
      timeout_seconds: 30,
      allow_network: true,
      npm_packages: ['lodash'],
      limits: { memory_mb: 256, cpu_millicores: 500, max_files: 20, max_file_size_bytes: 1000, max_stdout_bytes: 4096 },
    });
    const spec = resolveSpec(layer);
    assert.equal(spec.mode, 'code');
    assert.equal(spec.runtime, 'node');
    assert.equal(spec.timeoutSeconds, 30);
    assert.equal(spec.network, true);
    assert.deepEqual(spec.npmPackages, ['lodash']);
    assert.equal(spec.limits.memoryBytes, 256 * MiB);
    assert.equal(spec.limits.cpus, 0.5);
    assert.equal(spec.limits.maxFiles, 20);
    assert.equal(spec.limits.maxStdoutBytes, 4096);
  });

  it('prefers limits.timeout_seconds and reads memory like 512m', () => {
    const spec = resolveSpec(
      specFromFrontmatter({ timeout_seconds: 10, limits: { timeout_seconds: 20, memory: '1g', cpu: 1.5 } }),
    );
    assert.equal(spec.timeoutSeconds, 20);
    assert.equal(spec.limits.memoryBytes, GiB);
    assert.equal(spec.limits.cpus, 1.5);
  });

  it('reports a misspelled runtime as invalid input', () => {
    assert.throws(
      () => specFromFrontmatter('pyhton'),
      (error: unknown) => SandboxError.is(error, 'invalid-input') && /sandbox block/.test(error.message),
    );
  });
});

describe('settings', () => {
  it('turns settings into a spec layer with defaults', () => {
    const settings = parseSettings({
      limits: { memory: '1g' },
      network: { mode: 'full' },
      images: { python: 'my/python:1' },
    });
    const spec = resolveSpec(specFromSettings(settings));
    assert.equal(spec.limits.memoryBytes, GiB);
    assert.equal(spec.limits.pids, 256);
    assert.equal(spec.network, true);
    assert.equal(settings.images.python, 'my/python:1');
  });

  it('rejects a bad setting with its name', () => {
    assert.throws(() => parseSettings({ workspaceAccess: 'everything' }), /workspaceAccess/);
  });
});

describe('package names', () => {
  it('takes names from the index, with versions and extras', () => {
    const spec = sandboxSpecSchema.parse({
      pipPackages: ['pandas', 'numpy==2.1.0', 'requests[socks]>=2.31,<3', 'scikit-learn~=1.5'],
      npmPackages: ['lodash', 'lodash@4', '@types/node@^22.1.0', 'left-pad@1.3.0'],
    });
    assert.equal(spec.pipPackages.length, 4);
    assert.equal(spec.npmPackages.length, 4);
  });

  for (const name of [
    './evil',
    '/tmp/pkg',
    '~/pkg',
    '../x',
    'git+https://example.invalid/x.git',
    'https://example.invalid/x.whl',
    'file:///tmp/x',
    'pkg@https://example.invalid/x.tgz',
    'x @ file:///tmp/x',
    '-e.',
    '--index-url=http://example.invalid',
  ]) {
    it(`refuses the pip package "${name}"`, () => {
      assert.throws(() => sandboxSpecSchema.parse({ pipPackages: [name] }), /not a path, URL or git repository/);
    });
  }

  for (const name of [
    './evil',
    '/tmp/pkg',
    'user/repo',
    'github:user/repo',
    'git+ssh://git@example.invalid/x.git',
    'https://example.invalid/x.tgz',
    'file:../x',
    'npm:lodash',
    'x@npm:lodash',
    'x@file:../y',
    'x@git+https://example.invalid/r',
    '@scope/name/../x',
    '--registry=http://example.invalid',
  ]) {
    it(`refuses the npm package "${name}"`, () => {
      assert.throws(
        () => sandboxSpecSchema.parse({ npmPackages: [name] }),
        /not a path, URL, tarball or git repository/,
      );
    });
  }
});
