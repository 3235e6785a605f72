/** Percentiles and per-iteration ratios for the benchmark. */

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (rank - low);
}

export interface Summary {
  n: number;
  p10: number;
  p50: number;
  p90: number;
  min: number;
  max: number;
}

export function summarize(values: readonly number[]): Summary {
  return {
    n: values.length,
    p10: percentile(values, 10),
    p50: percentile(values, 50),
    p90: percentile(values, 90),
    min: Math.min(...values),
    max: Math.max(...values),
  };
}

/** Ours divided by the baseline, iteration by iteration (both measured in the same round). */
export function ratios(ours: readonly number[], baseline: readonly number[]): Summary {
  const each = ours.map((value, index) => value / baseline[index]!).filter((value) => Number.isFinite(value));
  return summarize(each);
}

/** Ours minus the baseline, sample by sample (both measured in the same round). */
export function differences(ours: readonly number[], baseline: readonly number[]): Summary {
  const each = ours.map((value, index) => value - baseline[index]!).filter((value) => Number.isFinite(value));
  return summarize(each);
}

export function ms(value: number): string {
  if (!Number.isFinite(value)) return '–';
  return value >= 100 ? value.toFixed(0) : value.toFixed(1);
}

export function ratio(value: number): string {
  return Number.isFinite(value) ? `${value.toFixed(2)}×` : '–';
}
