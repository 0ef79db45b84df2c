/**
 * Summary statistics for benchmark samples.
 *
 * @module
 */

/** Summary of one series of samples (same unit as the samples). */
export interface Summary {
  /** number of samples */
  n: number;
  min: number;
  /** 50th percentile (nearest rank) */
  median: number;
  mean: number;
  /** 99th percentile (nearest rank) */
  p99: number;
  max: number;
}

/**
 * Nearest-rank percentile of already sorted samples.
 * @param sorted ascending samples, at least one
 * @param p percentile, 0..100
 */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/** Summarise samples (NaN fields for an empty series). */
export function summarize(samples: readonly number[]): Summary {
  const s = [...samples].sort((a, b) => a - b);
  const mean = s.length ? s.reduce((a, b) => a + b, 0) / s.length : NaN;
  return { n: s.length, min: s[0] ?? NaN, median: percentile(s, 50), mean, p99: percentile(s, 99), max: s[s.length - 1] ?? NaN };
}

/** Median of samples. */
export function median(samples: readonly number[]): number {
  return summarize(samples).median;
}

/** Middle-of-two median (an even count averages the two middle samples); NaN for none. */
export function midMedian(samples: readonly number[]): number {
  if (!samples.length) return NaN;
  const s = [...samples].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * A percentile bootstrap confidence interval of the median: `resamples`
 * resamples with replacement (a fixed-seed generator, so a run's interval is
 * reproducible from its samples), their medians' `(1 - level) / 2` and
 * `(1 + level) / 2` quantiles.
 * @param level e.g. 0.95
 */
export function bootstrapMedianCI(samples: readonly number[], level = 0.95, resamples = 4000): { low: number; high: number } {
  if (samples.length < 2) return { low: NaN, high: NaN };
  let seed = 0x9e3779b9;
  const rand = (): number => {
    // mulberry32
    seed = (seed + 0x6d2b79f5) | 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const n = samples.length;
  const meds: number[] = [];
  const draw = new Array<number>(n);
  for (let r = 0; r < resamples; r++) {
    for (let i = 0; i < n; i++) draw[i] = samples[Math.floor(rand() * n)];
    meds.push(midMedian(draw));
  }
  meds.sort((a, b) => a - b);
  const q = (p: number): number => meds[Math.min(resamples - 1, Math.max(0, Math.floor(p * resamples)))];
  return { low: q((1 - level) / 2), high: q((1 + level) / 2) };
}
