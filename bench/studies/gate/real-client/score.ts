import type { BuildPlan, Expected } from './schedule.js';

/**
 * The real-client bench's scoring (real-client.ts): each build's gate report held against what a person would say of
 * it (schedule.ts), and the changes `monitor-admin changes` reported held against what was planted.
 */

export type Style = 'same' | 'fresh';

/** One build judged in one style: the gate's exit, its JSON report, its re-runs, the load beside it. */
export interface BuildRun {
  build: number;
  style: Style;
  commit: string;
  /** The busy processes beside the first run (`same`: beside every run of the build). */
  load: number;
  /** On fresh runners, the load of each run the build made, the first one's first. */
  loads?: number[];
  exit: number;
  report: unknown;
  reruns: number;
  seconds: number;
}

interface Named {
  item_variant: string;
  resource: string;
}

interface GateReport {
  verdict?: string;
  regressions: Named[];
  improvements: Named[];
  unconfirmed?: Named[];
  standing?: Named[];
  shifts?: Array<{ change_pct: number; fails: boolean; measure?: string }>;
  process_memory?: Array<{ change_mb: number }>;
}

/** What a build's report said, against what it should have said. */
interface BuildScore {
  build: number;
  style: Style;
  expected: Expected['kind'];
  subject: string;
  exit: number;
  /** The report named what was planted (for a quiet build: nothing). */
  named: boolean;
  /** The exit a person would give it. */
  rightExit: boolean;
  /** Findings (regressions, unconfirmed, standing) of tests or resources nothing was planted in. */
  falseFindings: number;
  reruns: number;
  /** The load of each run, as `2` (every run) or `2, 0, 1` (a fresh runner each). */
  load: string;
}

const EXIT = { pass: 0, fail: 1 } as const;

const hasTest = (list: readonly Named[] | undefined, variant: string, resources: readonly string[]): boolean =>
  (list ?? []).some((f) => f.item_variant === variant && resources.includes(f.resource));

function scoreBuild(plan: BuildPlan, run: BuildRun): BuildScore {
  const report = (run.report ?? { regressions: [], improvements: [] }) as GateReport;
  const found = [...report.regressions, ...(report.unconfirmed ?? []), ...(report.standing ?? [])];
  const expected = plan.expected;
  const planted = (f: Named): boolean =>
    'variant' in expected && f.item_variant === expected.variant && expected.resources.includes(f.resource);
  const falseFindings = found.filter((f) => !planted(f) && expected.kind !== 'every-test-slower').length;
  let named = false;
  let rightExit = false;
  switch (expected.kind) {
    case 'quiet':
      named = found.length === 0;
      rightExit = run.exit === EXIT.pass;
      break;
    case 'regression':
      named = hasTest(report.regressions, expected.variant, expected.resources);
      rightExit = run.exit === EXIT.fail;
      break;
    case 'standing':
      // Named again, as standing (the build that began it failed) or as a regression: never silent.
      named = hasTest(found, expected.variant, expected.resources);
      rightExit = named && (run.exit === EXIT.pass || run.exit === EXIT.fail);
      break;
    case 'revert':
      named = hasTest(report.improvements, expected.variant, expected.resources);
      rightExit = run.exit === EXIT.pass;
      break;
    case 'process-memory':
      named =
        (report.process_memory ?? []).some((m) => m.change_mb > expected.mb / 2 && m.change_mb < expected.mb * 2) &&
        !found.some((f) => f.resource === 'memory');
      rightExit = run.exit === EXIT.pass;
      break;
    case 'every-test-slower':
      named = (report.shifts ?? []).some((s) => s.change_pct > expected.pct / 2);
      rightExit = run.exit === EXIT.fail;
      break;
  }
  return {
    build: plan.build,
    style: run.style,
    expected: expected.kind,
    subject: plan.subject,
    exit: run.exit,
    named,
    rightExit,
    falseFindings,
    reruns: run.reruns,
    load: (run.loads ?? [run.load]).join(', '),
  };
}

interface Step {
  item_variant: string;
  resource: string;
  build: string;
  before: number;
  after: number;
}

interface ChangesAnswer {
  changes: Array<{ build: string; shared: Array<{ resource: string }>; steps: Step[] }>;
}

/** A CPU-time step within one 10 ms tick of the client's clock: noise, never a change. */
const ONE_TICK_S = 0.011;

/** The changes of a style: each step true when its build planted (or reverted) a change in that test. */
interface ChangesScore {
  style: Style;
  steps: number;
  trueSteps: number;
  oneTick: number;
  sharedAt: string[];
  falseExamples: string[];
}

function scoreChanges(plans: readonly BuildPlan[], style: Style, answer: ChangesAnswer): ChangesScore {
  const byBuild = new Map(plans.map((plan) => [String(plan.build), plan]));
  /** The test variants whose level a build's code changed, against the build before (null: every test). */
  const changedAt = (build: string): Set<string> | null => {
    const plan = byBuild.get(build);
    const before = byBuild.get(String(Number(build) - 1));
    if (!plan) return new Set();
    const now = new Set(plan.changes);
    const then = new Set(before?.changes ?? []);
    const moved = [...now, ...then].filter((c) => now.has(c) !== then.has(c));
    if (moved.some((c) => c === 'dep10' || c === 'slow20')) return null;
    const variants: Record<string, string> = {
      hold40: 'test_hold[hold_020mb_0.3s]',
      cpu30: 'test_loop[loop_0.30s]',
      sleep50: 'test_wait[wait_0.40s]',
      kept: 'test_loop[loop_0.60s]',
    };
    return new Set(moved.map((c) => variants[c] as string));
  };
  let steps = 0;
  let trueSteps = 0;
  let oneTick = 0;
  const falseExamples: string[] = [];
  const sharedAt: string[] = [];
  for (const change of answer.changes) {
    if (change.shared.length > 0) sharedAt.push(`${change.build} (${change.shared.map((s) => s.resource).join(', ')})`);
    for (const step of change.steps) {
      steps += 1;
      const changed = changedAt(step.build);
      const isTrue = changed === null || changed.has(step.item_variant);
      if (isTrue) trueSteps += 1;
      else if (falseExamples.length < 8)
        falseExamples.push(`${step.item_variant} ${step.resource} at ${step.build}: ${step.before} → ${step.after}`);
      if (step.resource.endsWith('_time') && Math.abs(step.after - step.before) <= ONE_TICK_S) oneTick += 1;
    }
  }
  return { style, steps, trueSteps, oneTick, sharedAt, falseExamples };
}

export interface Scores {
  builds: BuildScore[];
  changes: ChangesScore[];
}

export function scoreRuns(
  plans: readonly BuildPlan[],
  runs: readonly BuildRun[],
  changes: ReadonlyMap<Style, unknown>,
): Scores {
  const byBuild = new Map(plans.map((plan) => [plan.build, plan]));
  return {
    builds: runs.map((run) => scoreBuild(byBuild.get(run.build) as BuildPlan, run)),
    changes: [...changes].map(([style, answer]) => scoreChanges(plans, style, answer as ChangesAnswer)),
  };
}

const pct = (n: number, of: number): string => (of === 0 ? '–' : `${((100 * n) / of).toFixed(1)} %`);

/** The report's tables: quiet builds, each planted build, the changes. */
export function scoreTables({ builds, changes }: Scores): string {
  const lines: string[] = [];
  const styles = [...new Set(builds.map((b) => b.style))];
  lines.push(
    '| re-runs | quiet builds | failed | nothing named | re-runs asked (builds) | planted named | right exit |',
  );
  lines.push('|---|--:|--:|--:|--:|--:|--:|');
  for (const style of styles) {
    const mine = builds.filter((b) => b.style === style);
    const quiet = mine.filter((b) => b.expected === 'quiet');
    const planted = mine.filter((b) => b.expected !== 'quiet');
    const failed = quiet.filter((b) => !b.rightExit).length;
    lines.push(
      `| ${style} runner | ${quiet.length} | ${failed} (${pct(failed, quiet.length)}) | ` +
        `${quiet.filter((b) => b.named).length} | ${mine.filter((b) => b.reruns > 0).length} | ` +
        `${planted.filter((b) => b.named).length} of ${planted.length} | ${planted.filter((b) => b.rightExit).length} of ${planted.length} |`,
    );
  }
  lines.push(
    '',
    '| build | commit | expected | re-runs | exit | named | right exit | false findings | load | re-runs made |',
  );
  lines.push('|--:|---|---|---|--:|---|---|--:|--:|--:|');
  for (const b of builds.filter((b) => b.expected !== 'quiet' || !b.rightExit || b.falseFindings > 0))
    lines.push(
      `| ${b.build} | ${b.subject} | ${b.expected} | ${b.style} | ${b.exit} | ${b.named ? 'yes' : '**no**'} | ` +
        `${b.rightExit ? 'yes' : '**no**'} | ${b.falseFindings} | ${b.load} | ${b.reruns} |`,
    );
  lines.push('', '| changes, re-runs | steps | true | precision | one-tick steps | shared at | false, for example |');
  lines.push('|---|--:|--:|--:|--:|---|---|');
  for (const c of changes)
    lines.push(
      `| ${c.style} runner | ${c.steps} | ${c.trueSteps} | ${pct(c.trueSteps, c.steps)} | ${c.oneTick} | ` +
        `${c.sharedAt.join('; ') || '–'} | ${c.falseExamples.join('; ') || '–'} |`,
    );
  return lines.join('\n');
}
