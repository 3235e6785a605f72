/** Sizes as people write them (`512m`, `1g`, `256MiB`, `1.5GB`) turned into bytes, and back. */
export const KiB = 1024;
export const MiB = 1024 * KiB;
export const GiB = 1024 * MiB;

const UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: KiB,
  kb: KiB,
  kib: KiB,
  m: MiB,
  mb: MiB,
  mib: MiB,
  g: GiB,
  gb: GiB,
  gib: GiB,
  t: 1024 * GiB,
  tb: 1024 * GiB,
  tib: 1024 * GiB,
};

/**
 * What parseSize accepts, as a pattern for places that check text without running code (VS Code's
 * settings editor, the panel's form): a number, then an optional unit, without surrounding spaces.
 */
export const SIZE_PATTERN = /^\d+(\.\d+)?(\s*([kKmMgGtT]([iI]?[bB])?|[bB]))?$/;

/** Parses a size; returns undefined when the text is not a size. Units are binary, as Docker's are. */
export function parseSize(text: string | number): number | undefined {
  if (typeof text === 'number') return Number.isFinite(text) && text >= 0 ? Math.floor(text) : undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
  if (!match) return undefined;
  const factor = UNITS[match[2]!.toLowerCase()];
  if (factor === undefined) return undefined;
  return Math.floor(Number(match[1]) * factor);
}

export function formatSize(bytes: number): string {
  for (const [unit, size] of [
    ['GiB', GiB],
    ['MiB', MiB],
    ['KiB', KiB],
  ] as const) {
    if (bytes >= size) {
      const value = bytes / size;
      return `${Number.isInteger(value) ? value : value.toFixed(1)} ${unit}`;
    }
  }
  return `${bytes} bytes`;
}

/** A size as people write it in settings, exact: `512m`, `1g`, `1536m`; bytes when no unit divides it. */
export function formatSizeSetting(bytes: number): string {
  for (const [unit, size] of [
    ['t', 1024 * GiB],
    ['g', GiB],
    ['m', MiB],
    ['k', KiB],
  ] as const) {
    if (bytes >= size && bytes % size === 0) return `${bytes / size}${unit}`;
  }
  return String(bytes);
}
