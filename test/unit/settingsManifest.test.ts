import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import fc from 'fast-check';
import {
  PACKAGE_JSON,
  PACKAGE_NLS_JSON,
  settingsDrift,
  settingsManifest,
  updatedPackageJson,
} from '../../scripts/generateSettingsManifest';
import { mergeSettings, type SettingSource } from '../../src/core/policy/mergeSettings';
import { parseSettings } from '../../src/core/spec/settings';
import { settingJsonSchemas, type SettingJsonSchema } from '../../src/core/spec/settingsJsonSchema';
import { SIZE_PATTERN, formatSize, parseSize } from '../../src/core/spec/units';
import { withSeed } from '../seed';

const SECTION = 'agentSandbox.';
const nls = JSON.parse(readFileSync(PACKAGE_NLS_JSON, 'utf8')) as Record<string, string>;
const pkg = JSON.parse(readFileSync(PACKAGE_JSON, 'utf8'));
const generated = settingsManifest(nls);
const properties = generated.configuration.properties as Record<string, SettingJsonSchema & { scope?: string }>;
const keys = Object.keys(properties).map((key) => key.slice(SECTION.length));

/** Settings as VS Code hands them to mergeSettings: values per level, groups (`sessions`) as objects. */
function source(user: Record<string, unknown>, workspace: Record<string, unknown> = {}): SettingSource {
  const defaultValue = (key: string) => properties[SECTION + key]?.default;
  const get = (key: string): unknown => {
    if (SECTION + key in properties) return workspace[key] ?? user[key] ?? defaultValue(key);
    const children = keys.filter((child) => child.startsWith(`${key}.`));
    return children.length
      ? Object.fromEntries(children.map((child) => [child.slice(key.length + 1), get(child)]))
      : undefined;
  };
  return {
    levels: <T>(key: string) => ({ user: user[key] as T | undefined, workspace: [workspace[key] as T | undefined] }),
    get,
    defaultValue,
  };
}

/** A valid value of a setting other than its default. */
function otherValue(schema: SettingJsonSchema): unknown {
  if (schema.enum) return schema.enum.find((value) => value !== schema.default);
  switch (schema.type) {
    case 'boolean':
      return !schema.default;
    case 'number':
    case 'integer':
      if (schema.minimum !== undefined && schema.minimum !== schema.default) return schema.minimum;
      if (schema.maximum !== undefined) return schema.maximum;
      return (schema.default as number) + 1;
    case 'string':
      return schema.pattern ? '64m' : 'other';
    case 'array': {
      const items = schema.items as SettingJsonSchema | undefined;
      if (items?.type === 'object') return [{ name: 'OTHER', inside: true }];
      return items?.pattern ? ['other.example'] : ['OTHER_'];
    }
    case 'object': {
      const values = schema.additionalProperties as SettingJsonSchema;
      return values.anyOf ? { 'other.example': '192.0.2.1' } : { '/other': values.enum!.at(-1) };
    }
  }
  throw new Error(`no other value for ${JSON.stringify(schema)}`);
}

/** The value of a setting in the parsed settings (`limits.memory` at settings.limits.memory). */
function at(settings: unknown, key: string): unknown {
  return key
    .split('.')
    .reduce<unknown>((value, part) => (value as Record<string, unknown> | undefined)?.[part], settings);
}

describe('settings manifest: package.json from the zod settings schema', () => {
  it('package.json carries the generated settings and restricted settings', () => {
    const drift = settingsDrift(pkg, generated);
    assert.deepEqual(drift, [], `package.json is out of date (${drift.join('; ')}). Run: npm run manifest`);
    assert.deepEqual(pkg.contributes.configuration, generated.configuration);
    assert.deepEqual(pkg.capabilities.untrustedWorkspaces.restrictedConfigurations, generated.restrictedConfigurations);
  });

  it('names what drifted', () => {
    const changed = structuredClone(pkg);
    changed.contributes.configuration.properties['agentSandbox.limits.cpus'].maximum = 128;
    delete changed.contributes.configuration.properties['agentSandbox.pool.size'];
    changed.contributes.configuration.properties['agentSandbox.limits.gpus'] = { type: 'number' };
    changed.capabilities.untrustedWorkspaces.restrictedConfigurations.pop();
    assert.deepEqual(settingsDrift(changed, generated), [
      'agentSandbox.limits.cpus: maximum differ',
      'agentSandbox.pool.size: missing from package.json',
      'agentSandbox.limits.gpus: in package.json but not in the settings schema',
      'capabilities.untrustedWorkspaces.restrictedConfigurations differs',
    ]);
    assert.deepEqual(settingsDrift({}, generated), ['contributes.configuration is missing or has no properties']);
  });

  it('replaces only the settings and the restricted list when it updates package.json', () => {
    const before = `${JSON.stringify({ name: 'x', capabilities: { untrustedWorkspaces: { supported: 'limited', description: 'd' } }, contributes: { commands: [{ command: 'a' }], configuration: {} }, scripts: { b: 'c' } }, null, 2)}\n`;
    const after = JSON.parse(updatedPackageJson(before, generated));
    assert.deepEqual(Object.keys(after), ['name', 'capabilities', 'contributes', 'scripts']);
    assert.deepEqual(after.contributes.commands, [{ command: 'a' }]);
    assert.equal(after.capabilities.untrustedWorkspaces.description, 'd');
    assert.deepEqual(settingsDrift(after, generated), []);
  });

  it('takes every word from package.nls.json, and every config string there is used', () => {
    assert.throws(
      () => settingsManifest({}),
      /package\.nls\.json has no text for "config\.engine", .*"config\.limits\.memory\.pattern"/,
    );
    const used = JSON.stringify(generated.configuration);
    const unused = Object.keys(nls).filter((key) => key.startsWith('config.') && !used.includes(`"%${key}%"`));
    assert.deepEqual(unused, [], 'strings in package.nls.json that no setting uses');
    for (const [key, property] of Object.entries(properties)) {
      assert.equal(property.markdownDescription, `%config.${key.slice(SECTION.length)}%`, key);
      assert.equal(property.description, undefined, `${key}: the words belong in package.nls.json`);
      if (property.pattern) assert.ok(property.patternErrorMessage, `${key} has a pattern without an error message`);
      if (property.enum)
        assert.equal((property.markdownEnumDescriptions as string[]).length, property.enum.length, key);
    }
  });

  it('gives the defaults the schema gives, each a valid setting', () => {
    const fromManifest = mergeSettings(source({}));
    assert.deepEqual(fromManifest, parseSettings({}));
    for (const key of keys) assert.ok(properties[SECTION + key]!.default !== undefined, `${key} has no default`);
  });

  it('has the bounds of the spec: what the settings editor refuses, the settings refuse too', () => {
    for (const key of keys) {
      const schema = properties[SECTION + key]!;
      const beyond = [
        schema.minimum !== undefined && schema.minimum - (schema.type === 'integer' ? 1 : 0.01),
        schema.exclusiveMinimum !== undefined && schema.exclusiveMinimum,
        schema.maximum !== undefined && schema.maximum + 1,
        schema.pattern !== undefined && '12 parsecs',
        schema.type === 'integer' && (schema.default as number) + 0.5,
      ].filter((value) => value !== false);
      for (const value of beyond)
        assert.throws(
          () => mergeSettings(source({ [key]: value })),
          new RegExp(key.split('.').at(-1)!),
          `${key} = ${JSON.stringify(value)}`,
        );
    }
  });

  it('is read in full: each setting, set in user settings, changes the settings that apply', () => {
    const defaults = parseSettings({});
    for (const key of keys) {
      const value = otherValue(properties[SECTION + key]!);
      const settings = mergeSettings(source({ [key]: value }));
      assert.notDeepEqual(at(settings, key), at(defaults, key), `${key} = ${JSON.stringify(value)} was not read`);
    }
  });

  it('keeps policy settings out of workspace settings: scope machine, ignored there, restricted when untrusted', () => {
    const userOnly = keys.filter((key) => properties[SECTION + key]!.scope === 'machine');
    assert.deepEqual(userOnly, [
      'engine',
      'engineHost',
      'images.python',
      'images.node',
      'images.bash',
      'images.linux',
      'workspaceAccessByFolder',
      'network.allow',
      'network.hosts',
      'envPrefixes',
      'secrets',
      'configWritesAllowedIn',
      'mcp.enabled',
      'terminal.showSecrets',
    ]);
    for (const key of userOnly) {
      const ignored: string[] = [];
      const settings = mergeSettings(source({}, { [key]: otherValue(properties[SECTION + key]!) }), {
        onIgnored: (message) => ignored.push(message),
      });
      assert.deepEqual(settings, parseSettings({}), key);
      assert.match(ignored.join('\n'), new RegExp(`${key.replace('.', '\\.')} is set in workspace settings`), key);
    }
    assert.deepEqual(generated.restrictedConfigurations, [
      ...userOnly.slice(0, 6).map((key) => SECTION + key),
      'agentSandbox.workspaceAccess',
      'agentSandbox.workspaceAccessByFolder',
      'agentSandbox.network.mode',
      'agentSandbox.network.allow',
      'agentSandbox.network.hosts',
      'agentSandbox.envPrefixes',
      'agentSandbox.secrets',
      'agentSandbox.configWritesAllowedIn',
      'agentSandbox.mcp.enabled',
      'agentSandbox.terminal.showSecrets',
    ]);
    assert.equal(properties['agentSandbox.pool.size']!.scope, 'machine-overridable');
  });

  it('checks sizes in the settings editor as the extension parses them', async () => {
    await withSeed(({ seed }) =>
      fc.assert(
        fc.property(
          fc.stringMatching(/^[ 0-9.]{0,6}[kKmMgGtTiIbB xX]{0,4}$/),
          (text) => SIZE_PATTERN.test(text) === (text === text.trim() && parseSize(text) !== undefined),
        ),
        { seed, numRuns: Number(process.env.FUZZ_RUNS ?? 500) },
      ),
    );
    for (const text of ['512m', '1g', '1.5GiB', '256MB', '100', '10kb', '2T'])
      assert.ok(SIZE_PATTERN.test(text) && parseSize(text) !== undefined, text);
    for (const text of [' 1g', '1 g b', 'lots', '1x', '.5g', '']) assert.ok(!SIZE_PATTERN.test(text), text);
  });

  it('lists every setting once, with the schema of settingJsonSchemas', () => {
    assert.deepEqual(keys, [...settingJsonSchemas().keys()]);
    assert.equal(new Set(keys).size, keys.length);
  });
});

describe("README's table of defaults", () => {
  it('says what the settings schema gives', () => {
    const readme = readFileSync(resolve(dirname(PACKAGE_JSON), 'README.md'), 'utf8');
    const table = /^## Defaults\n([\s\S]*?)\n## /m.exec(readme)?.[1];
    assert.ok(table, 'README.md has a Defaults section');
    const rows = new Map(
      [...table.matchAll(/^\| ([^|]+) \| ([^|]+) \|$/gm)].map((match) => [match[1]!.trim(), match[2]!.trim()]),
    );
    const settings = parseSettings({});
    const { limits } = settings;
    const count = (n: number) => n.toLocaleString('en-US');
    const expected: Record<string, string> = {
      'memory (no swap)': formatSize(limits.memory),
      CPUs: String(limits.cpus),
      processes: String(limits.pids),
      'time per call': `${settings.timeoutSeconds} s`,
      'stdout / stderr kept per call': `${formatSize(limits.maxStdoutBytes)} each`,
      'file size / files per operation (file tools)': `${formatSize(limits.maxFileSizeBytes)} / ${limits.maxFiles}`,
      'disk per writable place (`/tmp`, `$HOME`, `/workspace`, ...)': formatSize(limits.disk),
      'files and folders per writable place': count(limits.inodes),
      network: settings.network.mode === 'off' ? 'off' : settings.network.mode,
      workspace: settings.workspaceAccess,
    };
    assert.equal(limits.maxStderrBytes, limits.maxStdoutBytes, 'the table gives one figure for both');
    for (const [row, value] of Object.entries(expected)) {
      assert.ok(rows.has(row), `README's Defaults table has no row "${row}"`);
      assert.ok(rows.get(row)!.startsWith(value), `README says ${row} is "${rows.get(row)}", the schema ${value}`);
    }
  });
});
