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
