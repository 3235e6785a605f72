/**
 * Writes `contributes.configuration` and the untrusted-workspace `restrictedConfigurations` in
 * package.json from the zod settings schema (src/core/spec/settings.ts) and the policy of
 * src/core/policy/settingsLevels.ts, leaving every other key as it is. The words stay in
 * package.nls.json, by key: `config.<setting>` for the description, `config.<setting>.<value>` for
 * each value of a choice, `config.<setting>.pattern` for a pattern's error. `--check` only compares,
 * and exits 1 when they differ. `npm run manifest` runs it after the tools' generator.
 *
 *   npx tsx scripts/generateSettingsManifest.ts [--check]
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MACHINE_SETTINGS, TIGHTEN_ONLY_CHOICES, USER_ONLY_SETTINGS } from '../src/core/policy/settingsLevels';
import { settingJsonSchemas, type SettingJsonSchema } from '../src/core/spec/settingsJsonSchema';
import { applyGenerated } from './generatedFile';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
export const PACKAGE_JSON = resolve(ROOT, 'package.json');
export const PACKAGE_NLS_JSON = resolve(ROOT, 'package.nls.json');
export const SECTION = 'agentSandbox';
const TITLE = 'Agent Sandbox';

export type SettingContribution = Record<string, unknown>;

export interface SettingsManifest {
  /** `contributes.configuration` */
  configuration: { title: string; properties: Record<string, SettingContribution> };
  /** `capabilities.untrustedWorkspaces.restrictedConfigurations` */
  restrictedConfigurations: string[];
}

/** A key of the policy lists names the setting or its group (`images` for `images.python`). */
const listed = (list: readonly string[], key: string) =>
  list.some((name) => key === name || key.startsWith(`${name}.`));

/**
 * The manifest's settings from the schema. Pure: reads no file. Throws, naming every missing
 * string, when package.nls.json lacks one.
 */
export function settingsManifest(nls: Readonly<Record<string, string>>): SettingsManifest {
  const missing: string[] = [];
  const text = (key: string) => {
    if (!(key in nls)) missing.push(key);
    return `%${key}%`;
  };
  const properties: Record<string, SettingContribution> = {};
  const schemas = settingJsonSchemas();
  for (const [key, schema] of schemas) properties[`${SECTION}.${key}`] = contribution(key, schema, nls, text);
  const unknown = [...USER_ONLY_SETTINGS, ...TIGHTEN_ONLY_CHOICES, ...MACHINE_SETTINGS].filter(
    (name) => ![...schemas.keys()].some((key) => listed([name], key)),
  );
  if (unknown.length)
    throw new Error(`settingsLevels.ts names settings the schema does not have: ${unknown.join(', ')}`);
  if (missing.length)
    throw new Error(`package.nls.json has no text for ${missing.map((key) => `"${key}"`).join(', ')}: add it.`);
  return {
    configuration: { title: TITLE, properties },
    restrictedConfigurations: [...schemas.keys()]
      .filter((key) => listed(USER_ONLY_SETTINGS, key) || listed(TIGHTEN_ONLY_CHOICES, key))
      .map((key) => `${SECTION}.${key}`),
  };
}

function contribution(
  key: string,
  schema: SettingJsonSchema,
  nls: Readonly<Record<string, string>>,
  text: (key: string) => string,
): SettingContribution {
  const { type, default: byDefault, enum: values, pattern, ...rest } = schema;
  const entry: SettingContribution = { type, default: byDefault };
  if (values) {
    entry.enum = values;
    // Each value of a choice is explained, or none is (a value left out is a mistake).
    const described = values.filter((value) => `config.${key}.${String(value)}` in nls);
    if (described.length)
      entry.markdownEnumDescriptions = values.map((value) => text(`config.${key}.${String(value)}`));
  }
  Object.assign(entry, rest);
  entry.markdownDescription = text(`config.${key}`);
  if (pattern !== undefined) {
    entry.pattern = pattern;
    entry.patternErrorMessage = text(`config.${key}.pattern`);
  }
  if (listed(USER_ONLY_SETTINGS, key)) entry.scope = 'machine';
  else if (listed(MACHINE_SETTINGS, key)) entry.scope = 'machine-overridable';
  return entry;
}

interface PackageJson {
  contributes?: { configuration?: unknown };
  capabilities?: { untrustedWorkspaces?: { restrictedConfigurations?: unknown } };
}

/** One line per difference between package.json and the generated settings; empty when equal. */
export function settingsDrift(pkg: PackageJson, expected: SettingsManifest): string[] {
  const drift: string[] = [];
  const actual = pkg.contributes?.configuration as SettingsManifest['configuration'] | undefined;
  if (!actual || typeof actual !== 'object' || typeof actual.properties !== 'object' || !actual.properties)
    return ['contributes.configuration is missing or has no properties'];
  if (actual.title !== expected.configuration.title) drift.push('contributes.configuration.title differs');
  const have = actual.properties;
  const want = expected.configuration.properties;
  for (const [key, wanted] of Object.entries(want)) {
    const had = have[key] as Record<string, unknown> | undefined;
    if (!had) {
      drift.push(`${key}: missing from package.json`);
      continue;
    }
    const keywords = new Set([...Object.keys(wanted), ...Object.keys(had)]);
    const changed = [...keywords].filter((keyword) => JSON.stringify(had[keyword]) !== JSON.stringify(wanted[keyword]));
    if (changed.length) drift.push(`${key}: ${changed.join(', ')} differ`);
  }
  for (const key of Object.keys(have))
    if (!(key in want)) drift.push(`${key}: in package.json but not in the settings schema`);
  if (!drift.length && JSON.stringify(actual) !== JSON.stringify(expected.configuration))
    drift.push('the settings are listed in a different order');
  const restricted = pkg.capabilities?.untrustedWorkspaces?.restrictedConfigurations;
  if (JSON.stringify(restricted) !== JSON.stringify(expected.restrictedConfigurations))
    drift.push('capabilities.untrustedWorkspaces.restrictedConfigurations differs');
  return drift;
}

/** package.json's text with only the settings and the restricted list replaced (2-space indent, trailing newline). */
export function updatedPackageJson(text: string, manifest: SettingsManifest): string {
  const pkg = JSON.parse(text) as Record<string, Record<string, unknown> | undefined>;
  const untrusted = (pkg.capabilities?.untrustedWorkspaces ?? { supported: 'limited' }) as Record<string, unknown>;
  pkg.capabilities = {
    ...pkg.capabilities,
    untrustedWorkspaces: { ...untrusted, restrictedConfigurations: manifest.restrictedConfigurations },
  };
  pkg.contributes = { ...pkg.contributes, configuration: manifest.configuration };
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

function main(args: readonly string[]): number {
  const text = readFileSync(PACKAGE_JSON, 'utf8');
  const manifest = settingsManifest(JSON.parse(readFileSync(PACKAGE_NLS_JSON, 'utf8')) as Record<string, string>);
  return applyGenerated(
    {
      what: 'package.json settings',
      file: PACKAGE_JSON,
      text,
      next: updatedPackageJson(text, manifest),
      drift: settingsDrift(JSON.parse(text) as PackageJson, manifest),
      rerun: 'npx tsx scripts/generateSettingsManifest.ts',
      summary: `${Object.keys(manifest.configuration.properties).length} settings`,
    },
    args.includes('--check'),
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    process.exitCode = main(process.argv.slice(2));
  } catch (error) {
    console.error((error as Error).message);
    process.exitCode = 1;
  }
}
