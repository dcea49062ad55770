/**
 * The builds of the real-client bench (real-client.ts): which of the suite's planted changes (suite/work.py CHANGES)
 * each build's commit holds, and what a person would say of the build. Declared once; the recorder runs it and the
 * scorer reads it.
 *
 * A change planted for one build is reverted in the next, as a gate that failed a change keeps it out; `dep10` (a new
 * dependency) stays, as it would; `kept` is a regression left in place for ten builds, then reverted.
 */

/** What a person would expect the gate to say of a build, and of which test and resource. */
export type Expected =
  /** Nothing happened: pass, nothing named. */
  | { kind: 'quiet' }
  /** A test got slower or heavier: fail, naming it with one of `resources`. */
  | { kind: 'regression'; variant: string; resources: readonly string[] }
  /** Every test's memory moved with the process: named once as the process's, no finding, pass. */
  | { kind: 'process-memory'; mb: number }
  /** Every test slower by the code, on every runner: a shift, failing where the runs were on two hosts. */
  | { kind: 'every-test-slower'; pct: number }
  /** The regression of an earlier build still in place: named again (standing: it failed its own build). */
  | { kind: 'standing'; variant: string; resources: readonly string[]; since: number }
  /** A regression left in place goes: pass, the test named as faster (changes: a step down). */
  | { kind: 'revert'; variant: string; resources: readonly string[] };

export interface BuildPlan {
  build: number;
  /** The commit's subject (its SCM reference is a commit of the recorder's scratch repository). */
  subject: string;
  /** CORPUS_CHANGES: the planted changes its code holds. */
  changes: readonly string[];
  expected: Expected;
  /** A commit that touches only documentation. */
  docsOnly?: boolean;
}

const HOLD40 = { variant: 'test_hold[hold_020mb_0.3s]', resources: ['memory'] } as const;
const CPU30 = { variant: 'test_loop[loop_0.30s]', resources: ['total_time', 'user_time'] } as const;
const SLEEP50 = { variant: 'test_wait[wait_0.40s]', resources: ['total_time'] } as const;
const KEPT = { variant: 'test_loop[loop_0.60s]', resources: ['total_time', 'user_time'] } as const;

/** The first build of the regression left in place, and the first without it (its revert). */
const KEPT_FROM = 46;
const KEPT_UNTIL = 56;
const DEP_FROM = 36;

/** One-build changes: the build, the change, what it is. */
const ONE_BUILD: ReadonlyMap<number, { change: string; subject: string; expected: Expected }> = new Map([
  [
    21,
    {
      change: 'hold40',
      subject: 'cache the parsed fixtures (+40 MB held)',
      expected: { kind: 'regression', ...HOLD40 },
    },
  ],
  [
    26,
    { change: 'cpu30', subject: 'validate every record twice (+30 % CPU)', expected: { kind: 'regression', ...CPU30 } },
  ],
  [
    31,
    { change: 'sleep50', subject: 'longer retry back-off (+50 % wait)', expected: { kind: 'regression', ...SLEEP50 } },
  ],
  [
    41,
    {
      change: 'slow20',
      subject: 'debug logging on (every test +20 %)',
      expected: { kind: 'every-test-slower', pct: 20 },
    },
  ],
]);

/** The schedule of `builds` builds (at least KEPT_UNTIL + 4 for every planted change to be in it). */
export function schedule(builds: number): BuildPlan[] {
  const plans: BuildPlan[] = [];
  for (let build = 1; build <= builds; build += 1) {
    const changes: string[] = [];
    if (build >= DEP_FROM) changes.push('dep10');
    if (build >= KEPT_FROM && build < KEPT_UNTIL) changes.push('kept');
    const once = ONE_BUILD.get(build);
    if (once) changes.push(once.change);
    let expected: Expected = { kind: 'quiet' };
    let subject = `refactor ${build}`;
    let docsOnly = false;
    if (once) ({ expected, subject } = once);
    else if (build === DEP_FROM) {
      expected = { kind: 'process-memory', mb: 10 };
      subject = 'depend on heavy_dependency (keeps 10 MB)';
    } else if (build === KEPT_FROM) {
      expected = { kind: 'regression', ...KEPT };
      subject = 'slower serializer (+50 % CPU, left in place)';
    } else if (build > KEPT_FROM && build < KEPT_UNTIL) {
      expected = { kind: 'standing', ...KEPT, since: KEPT_FROM };
      if (build === 50) {
        subject = 'docs: typo';
        docsOnly = true;
      }
    } else if (build === KEPT_UNTIL) {
      expected = { kind: 'revert', ...KEPT };
      subject = 'revert the slower serializer';
    } else if (build % 7 === 3) {
      subject = `docs: section ${build}`;
      docsOnly = true;
    }
    plans.push({ build, subject, changes, expected, ...(docsOnly ? { docsOnly } : {}) });
  }
  return plans;
}

/** The fewest builds whose schedule holds every planted change, with builds after the last. */
export const MIN_BUILDS = KEPT_UNTIL + 4;
