/** Runs a group's arms round-robin, one call each per iteration, and keeps the times after the warm-up. */
import { differences, ratios, summarize, type Summary } from './stats';

export interface Arm {
  name: string;
  /**
   * One call; throws when the call failed or returned the wrong thing. An arm that times itself (a
   * client that reports each request's time) returns its samples, which then replace the call's time.
   */
  run(): Promise<void | number[]>;
  /** How many samples one call returns (1 when it returns none): a failed call counts that many times. */
  samplesPerCall?: number;
}

export interface Comparison {
  /** The arm that is ours. */
  ours: string;
  baseline: string;
  /**
   * What the target bounds: the time ratio p50(ours) / p50(baseline) at most (the default); the
   * milliseconds ours adds, p50(ours) - p50(baseline), below it ('added'); or the throughput ratio
   * p50(baseline) / p50(ours) of the same transfer at least ('throughput'); or p50(ours) in
   * milliseconds below it ('time', the baseline only shown beside it).
   */
  kind?: 'ratio' | 'added' | 'throughput' | 'time';
  /** The bound the issue sets, when it sets one. */
  target?: number;
}

export interface Group {
  id: string;
  title: string;
  arms: Arm[];
  comparisons: Comparison[];
  iterations: number;
  warmup: number;
  /** Untimed, after every call: lets the pool refill and removals finish, so arms never overlap. */
  settle?(): Promise<void>;
  /** What each sample is, when not one call's latency. */
  unit?: string;
  /** Untimed, after the group: releases what its arms opened. */
  done?(): void;
}

export interface ArmResult {
  name: string;
  samples: number[];
  summary: Summary;
  errors: string[];
}

export interface ComparisonResult extends Comparison {
  /** p50 of ours over p50 of the baseline. */
  p50Ratio: number;
  /** Ours over the baseline within each round, for the spread. */
  ratio: Summary;
  /** What the target is about (see Comparison.kind): the time ratio, the milliseconds added, the throughput ratio, or ours' time. */
  value: number;
  /** The same, sample by sample within each round. */
  spread: Summary;
  met?: boolean;
}

export interface GroupResult {
  id: string;
  title: string;
  unit?: string;
  arms: ArmResult[];
  comparisons: ComparisonResult[];
}

export async function measureGroup(group: Group, log: (line: string) => void): Promise<GroupResult> {
  const samples = new Map<string, number[]>(group.arms.map((arm) => [arm.name, []]));
  const errors = new Map<string, string[]>(group.arms.map((arm) => [arm.name, []]));
  const total = group.warmup + group.iterations;
  for (let iteration = 0; iteration < total; iteration++) {
    // A different arm goes first each round, so that no arm always runs on a cooler (or warmer) engine.
    const order = group.arms.map((_, index) => group.arms[(index + iteration) % group.arms.length]!);
    for (const arm of order) {
      const started = performance.now();
      let failed: string | undefined;
      let own: number[] | void = undefined;
      try {
        own = await arm.run();
      } catch (error) {
        failed = (error as Error).message ?? String(error);
      }
      const elapsed = performance.now() - started;
      await group.settle?.();
      if (iteration < group.warmup) continue;
      if (failed) errors.get(arm.name)!.push(failed);
      const count = arm.samplesPerCall ?? 1;
      if (!failed && own && own.length !== count) failed = `${own.length} samples instead of ${count}`;
      samples.get(arm.name)!.push(...(failed ? Array<number>(count).fill(Number.NaN) : (own ?? [elapsed])));
    }
    log(`  ${group.id}: round ${iteration + 1}/${total}${iteration < group.warmup ? ' (warm-up)' : ''}`);
  }
  group.done?.();
  const arms = group.arms.map((arm) => {
    const values = samples.get(arm.name)!;
    return {
      name: arm.name,
      samples: values,
      summary: summarize(values.filter(Number.isFinite)),
      errors: errors.get(arm.name)!,
    };
  });
  const p50 = (name: string) => arms.find((arm) => arm.name === name)!.summary.p50;
  const comparisons = group.comparisons.map((comparison) => {
    const ours = samples.get(comparison.ours)!;
    const baseline = samples.get(comparison.baseline)!;
    const ratio = ratios(ours, baseline);
    const p50Ratio = p50(comparison.ours) / p50(comparison.baseline);
    const kind = comparison.kind ?? 'ratio';
    const value =
      kind === 'added'
        ? p50(comparison.ours) - p50(comparison.baseline)
        : kind === 'throughput'
          ? 1 / p50Ratio
          : kind === 'time'
            ? p50(comparison.ours)
            : p50Ratio;
    const spread =
      kind === 'added'
        ? differences(ours, baseline)
        : kind === 'throughput'
          ? ratios(baseline, ours)
          : kind === 'time'
            ? summarize(ours.filter(Number.isFinite))
            : ratio;
    const withinTarget =
      comparison.target === undefined
        ? undefined
        : kind === 'added' || kind === 'time'
          ? value < comparison.target
          : kind === 'throughput'
            ? value >= comparison.target
            : value <= comparison.target;
    return {
      ...comparison,
      p50Ratio,
      ratio,
      value,
      spread,
      ...(withinTarget !== undefined ? { met: withinTarget && errors.get(comparison.ours)!.length === 0 } : {}),
    };
  });
  return { id: group.id, title: group.title, unit: group.unit, arms, comparisons };
}
