/** Latency samples and their summary. Latencies are kept in milliseconds; runs are bounded, so arrays are too. */

export interface LatencySummary {
  count: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))] as number;
}

export function summarize(latenciesMs: number[]): LatencySummary {
  const sorted = Float64Array.from(latenciesMs).sort();
  const values = Array.from(sorted);
  return {
    count: values.length,
    p50: percentile(values, 50),
    p95: percentile(values, 95),
    p99: percentile(values, 99),
    max: values.length > 0 ? (values[values.length - 1] as number) : Number.NaN,
  };
}

export const fmt = (value: number | undefined, digits = 1): string =>
  value === undefined || !Number.isFinite(value) ? '—' : value.toFixed(digits);

export const fmtInt = (value: number | undefined): string =>
  value === undefined || !Number.isFinite(value) ? '—' : Math.round(value).toLocaleString('en-US');
