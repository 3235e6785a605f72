/**
 * Each setting's JSON schema, by its key as VS Code names it without the `agentSandbox.` section
 * (`limits.memory`), generated from the settings schema: what settings.json may hold (`io: 'input'`).
 * VS Code's manifest (scripts/generateSettingsManifest.ts) and the panel's form (its bounds) read it.
 */
import { z } from 'zod';
import { settingsSchema } from './settings';

export interface SettingJsonSchema {
  type?: string;
  default?: unknown;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  pattern?: string;
  [keyword: string]: unknown;
}

let cached: ReadonlyMap<string, SettingJsonSchema> | undefined;

/** Keys in the settings' order; nested objects (limits, sessions, images, pool) become `parent.child`. */
export function settingJsonSchemas(): ReadonlyMap<string, SettingJsonSchema> {
  cached ??= build();
  return cached;
}

function build(): Map<string, SettingJsonSchema> {
  const root = z.toJSONSchema(settingsSchema, { io: 'input' }) as SettingJsonSchema;
  const settings = new Map<string, SettingJsonSchema>();
  const visit = (schema: SettingJsonSchema, prefix: string) => {
    for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, SettingJsonSchema>)) {
      const key = prefix + name;
      if (property.type === 'object' && property.properties) visit(property, `${key}.`);
      else settings.set(key, clean(property) as SettingJsonSchema);
    }
  };
  visit(root, '');
  return settings;
}

/** The schema of one setting; throws for a key that is no setting. */
export function settingJsonSchema(key: string): SettingJsonSchema {
  const schema = settingJsonSchemas().get(key);
  if (!schema) throw new Error(`agentSandbox.${key} is not a setting`);
  return schema;
}

/** The bounds of a number setting, as the panel's form checks them. */
export function numberBounds(key: string): {
  minimum?: number;
  exclusiveMinimum?: number;
  maximum?: number;
  integer: boolean;
} {
  const { type, minimum, exclusiveMinimum, maximum } = settingJsonSchema(key);
  if (type !== 'number' && type !== 'integer') throw new Error(`agentSandbox.${key} is not a number`);
  return {
    ...(minimum !== undefined ? { minimum } : {}),
    ...(exclusiveMinimum !== undefined ? { exclusiveMinimum } : {}),
    ...(maximum !== undefined ? { maximum } : {}),
    integer: type === 'integer',
  };
}

/**
 * Without what says nothing in settings.json: `$schema`, `propertyNames` (keys are strings anyway), the
 * descriptions (the words are package.nls.json's), and zod's safe-integer bounds on integers nobody bounded.
 */
function clean(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(clean);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(
        ([keyword, inner]) =>
          !['$schema', 'propertyNames', 'description'].includes(keyword) &&
          !(/^(minimum|maximum)$/.test(keyword) && Math.abs(inner as number) >= Number.MAX_SAFE_INTEGER),
      )
      .map(([keyword, inner]) => [keyword, clean(inner)]),
  );
}
