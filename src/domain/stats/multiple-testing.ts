/**
 * Error control across a build's series: of m p-values, which are findings. Benjamini–Hochberg at level q: the
 * largest k with p₍ₖ₎ ≤ k·q/m, and every p-value up to p₍ₖ₎. Its guarantee: the expected share of false findings
 * among the findings is at most q (for independent or positively dependent p-values); on a build where nothing
 * changed every finding is false, so the chance that it reports any is at most q, whatever m is.
 */

/**
 * Benjamini–Hochberg's threshold among `pValues` at level `q`: k·q/m for the k it rejects (at least one: a p-value
 * at or below q/m is always rejected). A p-value is a finding when it is at or below the threshold.
 */
export function benjaminiHochbergThreshold(pValues: readonly number[], q: number): number {
  const m = pValues.length;
  if (m === 0) return q;
  const sorted = pValues.filter((p) => !Number.isNaN(p)).sort((a, b) => a - b);
  for (let k = sorted.length; k >= 1; k -= 1) {
    if ((sorted[k - 1] as number) <= (k * q) / m) return (k * q) / m;
  }
  return q / m;
}
