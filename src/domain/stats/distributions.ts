/**
 * The tails of the distributions p-values come from, and their inverses: Student's t (a new value's distance from a
 * centre and spread estimated from n earlier values) and the normal. The tails are computed in double precision down
 * to p-values of 1e-300, far below the smallest a build of a million series may need.
 */

/** ln Γ(x) for x > 0 (Lanczos, g = 7, n = 9: relative error < 1e-15). */
function logGamma(x: number): number {
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const z = x - 1;
  let sum = c[0] as number;
  for (let i = 1; i < 9; i += 1) sum += (c[i] as number) / (z + i);
  const t = z + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(sum);
}

/** The continued fraction of the incomplete beta function (Lentz's method). */
function betaFraction(a: number, b: number, x: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 300; m += 1) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const step = d * c;
    h *= step;
    if (Math.abs(step - 1) < 1e-15) break;
  }
  return h;
}

/** The regularized incomplete beta function I_x(a, b). */
function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log1p(-x));
  return x < (a + 1) / (a + b + 2) ? (front * betaFraction(a, b, x)) / a : 1 - (front * betaFraction(b, a, 1 - x)) / b;
}

/** P(T > t) for Student's t with `df` degrees of freedom (df = Infinity: the normal). */
export function studentTUpper(t: number, df: number): number {
  if (Number.isNaN(t)) return NaN;
  if (!Number.isFinite(df)) return normalUpper(t);
  if (t === Infinity) return 0;
  if (t === -Infinity) return 1;
  const tail = 0.5 * incompleteBeta(df / (df + t * t), df / 2, 0.5);
  return t >= 0 ? tail : 1 - tail;
}

/** P(Z > z) for the standard normal (erfc by its continued fraction in the tail: exact to a few ulps). */
export function normalUpper(z: number): number {
  if (z < 0) return 1 - normalUpper(-z);
  // Through the t distribution's limit would lose the tail; erfc(z/√2)/2 via the complementary gamma function.
  const x = (z * z) / 2;
  if (x === 0) return 0.5;
  if (x < 1.5) return 0.5 - 0.5 * lowerGammaHalf(x);
  return 0.5 * upperGammaHalf(x);
}

/** P(1/2, x), the regularized lower incomplete gamma of a = 1/2, by its series (x small). */
function lowerGammaHalf(x: number): number {
  let sum = 2;
  let term = 2;
  for (let n = 1; n < 200; n += 1) {
    term *= x / (n + 0.5);
    sum += term;
    if (term < sum * 1e-16) break;
  }
  return (sum * Math.exp(-x + 0.5 * Math.log(x))) / Math.sqrt(Math.PI);
}

/** Q(1/2, x), the regularized upper incomplete gamma of a = 1/2, by its continued fraction (x ≥ 1.5). */
function upperGammaHalf(x: number): number {
  const a = 0.5;
  const tiny = 1e-300;
  let b = x + 1 - a;
  let c = 1 / tiny;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < 300; i += 1) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const step = d * c;
    h *= step;
    if (Math.abs(step - 1) < 1e-16) break;
  }
  return (Math.exp(-x + a * Math.log(x)) * h) / Math.sqrt(Math.PI);
}

/** Per upper-tail probability, the critical t by degrees of freedom, as found (tCritical). */
const criticalTs = new Map<number, number[]>();

/**
 * The t whose upper tail with `df` degrees of freedom is `p`: |t| ≥ tCritical(p, df) exactly when studentTUpper(|t|,
 * df) ≤ p (to 1e-12 relative). Found by bisection once per (p, df) and kept: for the few p's of a rule (a walk over
 * 100,000 series asks a few hundred); studentTUpperInverse serves p's that vary.
 */
export function tCritical(p: number, df: number): number {
  let byDf = criticalTs.get(p);
  if (!byDf) criticalTs.set(p, (byDf = []));
  const known = byDf[df];
  if (known !== undefined) return known;
  let low = 0;
  let high = 1;
  while (studentTUpper(high, df) > p) high *= 2;
  while (high - low > 1e-12 * high) {
    const middle = (low + high) / 2;
    if (studentTUpper(middle, df) > p) low = middle;
    else high = middle;
  }
  byDf[df] = high;
  return high;
}

/**
 * The t whose upper tail with `df` degrees of freedom is `p` (0 < p < 0.5), to full double precision (80 halvings of
 * the bracket), capped near 1e12, uncached: for p-values that differ from series to series, where tCritical's cache
 * would grow without end.
 */
export function studentTUpperInverse(p: number, df: number): number {
  let low = 0;
  let high = 1;
  while (studentTUpper(high, df) > p && high < 1e12) high *= 2;
  for (let i = 0; i < 80; i += 1) {
    const mid = (low + high) / 2;
    if (studentTUpper(mid, df) > p) low = mid;
    else high = mid;
  }
  return high;
}

/**
 * Student's t quantile for `p` (0.5 < p < 1) and `df` degrees of freedom by Hill's approximation (ACM Algorithm 396):
 * closed form, within 1e-5 relative of the exact inverses above (tCritical, studentTUpperInverse). The t_test model's
 * limits are defined by it.
 */
export function studentTQuantileHill(p: number, df: number): number {
  const tail = 2 * (1 - p);
  if (df === 1) return Math.tan((Math.PI / 2) * (1 - tail));
  if (df === 2) return Math.sqrt(2 / (tail * (2 - tail)) - 2);
  const a = 1 / (df - 0.5);
  const b = 48 / (a * a);
  let c = (((20700 * a) / b - 98) * a - 16) * a + 96.36;
  const d = ((94.5 / (b + c) - 3) / b + 1) * Math.sqrt((a * Math.PI) / 2) * df;
  let x = d * tail;
  let y = x ** (2 / df);
  if (y > 0.05 + a) {
    x = normalQuantile(tail / 2);
    y = x * x;
    if (df < 5) c += 0.3 * (df - 4.5) * (x + 0.6);
    c = (((0.05 * d * x - 5) * x - 7) * x - 2) * x + b + c;
    y = (((((0.4 * y + 6.3) * y + 36) * y + 94.5) / c - y - 3) / b + 1) * x;
    y = Math.expm1(a * y * y);
  } else {
    y =
      (((1 / (((df + 6) / (df * y) - 0.089 * d - 0.822) * (df + 2) * 3) + 0.5 / (df + 4)) * y - 1) * (df + 1)) /
        (df + 2) +
      1 / y;
  }
  return Math.sqrt(df * y);
}

/** The standard normal quantile of the lower tail `p` (Acklam's rational approximation, |error| < 1.2e-9 refined). */
export function normalQuantile(p: number): number {
  const a = [
    -3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1,
    2.506628277459239,
  ];
  const b = [
    -5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1,
  ];
  const c = [
    -7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968,
    2.938163982698783,
  ];
  const d = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
  const low = 0.02425;
  const poly = (k: number[], x: number) => k.reduce((acc, coefficient) => acc * x + coefficient, 0);
  if (p < low) {
    const q = Math.sqrt(-2 * Math.log(p));
    return poly(c, q) / (poly(d, q) * q + 1);
  }
  if (p > 1 - low) return -normalQuantile(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return (poly(a, r) * q) / (poly(b, r) * r + 1);
}
