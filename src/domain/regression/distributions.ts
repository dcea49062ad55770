/**
 * The tails of the distributions the verdict's p-values come from: Student's t (a new value's distance from a centre
 * and spread estimated from n earlier values) and, through it, the normal. Computed in double precision down to
 * p-values of 1e-300, far below the smallest a build of a million series may need.
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
 * df) ≤ p (to 1e-12). Found by bisection once per (p, df) and kept: a walk over 100,000 series asks a few hundred.
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
