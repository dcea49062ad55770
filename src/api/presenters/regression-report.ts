import Joi from 'joi';
import type { RegressionReport as Judged } from '../../application/regressions/find-regressions.js';
import { LIKELY_CAUSES } from '../../domain/regression/cause.js';
import { SHIFT_MEASURES } from '../../domain/regression/build-verdict.js';
import { TRIAGE_STATES } from '../../domain/changes/triage.js';
import { MATCHES, modelParameters } from '../../domain/regression/rule.js';
import { SERIES_CLASSES } from '../../domain/regression/series-class.js';
import { MEMORY_SAMPLE_INTERVAL } from '../../domain/resolution.js';
import { RESOURCE_NAMES } from '../../domain/resources.js';
import type {
  ErrorControl,
  Finding,
  ProcessMemoryShift,
  RegressionReport,
  ReportBaseline,
  RerunTest,
  RunContention,
  RunnerShift,
  Since,
  SinceTriage,
} from '../../wire/regression-report.js';
import { membersOf } from '../../wire/schema.js';
import { pagingMembers, type PageUrl, type ResolvedPage } from '../pagination.js';
import { pagingSchemas } from '../schemas.js';

/**
 * A regression report as the API answers it (src/wire/regression-report.ts): what was judged and by which model, then
 * one page of its lists (the page of each list at the same offsets), then the paging links; and its schema.
 */
export function presentRegressionReport(report: Judged, page: ResolvedPage, url: PageUrl): RegressionReport {
  const { offset, limit } = page.slice;
  const slice = <T>(list: readonly T[]) => list.slice(offset, offset + limit);
  return {
    pipeline: report.pipeline,
    build: report.build,
    verdict: report.verdict,
    resources: report.rule.resources,
    model: { name: report.rule.model, ...modelParameters(report.rule) },
    match: report.rule.match,
    baseline: report.baseline,
    compared: report.compared,
    error_control: { method: 'benjamini-hochberg', fdr: report.fdr },
    classes: report.classes,
    shifts: report.shifts,
    process_memory: report.process_memory,
    contention: report.contention,
    insufficient_history: report.insufficient_history,
    no_baseline: report.no_baseline,
    regressions: slice(report.regressions),
    improvements: slice(report.improvements),
    unconfirmed: slice(report.unconfirmed),
    standing: slice(report.standing),
    rerun: slice(report.rerun),
    ...pagingMembers(url, page),
  };
}

/** The longest of the lists decides how many pages the report has. */
export const reportLength = (report: Judged): number =>
  Math.max(
    report.regressions.length,
    report.improvements.length,
    report.unconfirmed.length,
    report.standing.length,
    report.rerun.length,
  );

/** What selects a test for a re-run: its module, its file, its name. */
const testMembers = {
  item_variant: Joi.string().allow('').required(),
  item: Joi.string().allow('').required(),
  item_path: Joi.string()
    .allow('')
    .required()
    .description("The test's module, as pytest-monitor names it (`pkg.test_mod`; no class name)."),
  item_fs_loc: Joi.string().allow('').required().description("The test's file (`pkg/test_mod.py`)."),
  component: Joi.string().allow('').required(),
};

const findingSchema = membersOf<Finding>({
  ...testMembers,
  context_h: Joi.string()
    .allow(null)
    .required()
    .description('The context measured now; null when compared across machines (match=any).'),
  machine_class: Joi.string()
    .allow(null)
    .required()
    .description('The machine class compared within (GET /classes); null unless match=class.'),
  session_h: Joi.string().required().description('A session that measured it now.'),
  resource: Joi.string()
    .valid(...RESOURCE_NAMES)
    .required(),
  value: Joi.number()
    .required()
    .description(
      "The value now, the runner's shift divided out (`shift_pct`); the median of its runs when the build ran it several times.",
    ),
  baseline: membersOf<Finding['baseline']>({
    n: Joi.number().integer().required().description('Earlier builds (or sessions) that measured it.'),
    mean: Joi.number().required(),
    stddev: Joi.number().required(),
    median: Joi.number().required(),
    min: Joi.number().required(),
    max: Joi.number().required(),
  }).required(),
  limit: Joi.number()
    .required()
    .description(
      "The value one run had to pass to be a finding at the build's error control (the upper one for a regression).",
    ),
  change_pct: Joi.number()
    .allow(null)
    .required()
    .description("Change from the baseline centre (a multimodal series': its nearest mode), in %."),
  likely_cause: Joi.string()
    .valid(...LIKELY_CAUSES)
    .allow(null)
    .required()
    .description(
      'What changed with it: `compute` (user time moved with it), `system` (kernel time), `waiting` (wall time moved ' +
        'while CPU time did not: I/O, locks, sleeps, a busy machine), `memory`; null when the other measures do not tell.',
    ),
  series_class: Joi.string()
    .valid(...SERIES_CLASSES)
    .required()
    .description(
      "The series' class from its history: `steady`, `noisy` (spread ≥ 10 % of its level), `spiky` (values far above " +
        'its level now and then), `multimodal` (two or three levels; a value back at another level is no change).',
    ),
  p_value: Joi.number()
    .allow(null)
    .required()
    .description(
      "Its p-value under its series' model, every run of the build together (spikes allowed for); null for the " +
        'models judged by limits (every model but `robust`).',
    ),
  runs: Joi.number().integer().min(1).required().description('How many runs (sessions) of the build measured it.'),
  shift_pct: Joi.number()
    .required()
    .description("The runner's shift divided out of its first run's value, in % (0 for memory and CPU usage)."),
  since: membersOf<Since>({
    unit: Joi.string().required().description('The build (or session, for a baseline of sessions).'),
    session_h: Joi.string().required().description('The session of that build that measured the test.'),
    scm_ref: Joi.string().allow(null).required().description("The commit of that build's earliest session, if named."),
    triage: membersOf<SinceTriage>({
      id: Joi.string().required().description('The change id (GET /pipelines/{pipeline}/changes/{id}).'),
      state: Joi.string()
        .valid(...TRIAGE_STATES)
        .required()
        .description('What people last said of it: `acknowledged` (ours, being worked on), or `new` (reopened).'),
      by: Joi.string().allow(null).required().description('The token name of that triage; null without a tokens file.'),
    })
      .allow(null)
      .required()
      .description(
        "The triage of the change that began at this build, on the series' machine class (`match=class`), when people " +
          'triaged it; null when nobody did. An accepted or invalid change stands no more.',
      ),
  })
    .allow(null)
    .required()
    .description(
      'A change kept: the earlier build where the level the test still holds began (a step the latest builds kept, ' +
        'not a mode: the test did not go back and forth). Set on `standing` regressions and on improvements kept; ' +
        'null for a change new in this build.',
    ),
})
  .id('Finding')
  .description('A test whose value crossed its limit.');

const shiftSchema = membersOf<RunnerShift>({
  machine_class: Joi.string()
    .allow(null)
    .required()
    .description('The machine class (or context, by `match`) of the tests it was estimated from; null for match=any.'),
  session_h: Joi.string().required().description('The run (session) it was measured in.'),
  measure: Joi.string()
    .valid(...SHIFT_MEASURES)
    .required()
    .description('`wall_time` (total_time) or `cpu_time` (user_time + kernel_time).'),
  change_pct: Joi.number().required().description("Every test's time moved by this much, in % (negative: faster)."),
  interval_pct: Joi.array().items(Joi.number()).length(2).required().description('Its 95 % interval, in %.'),
  series: Joi.number().integer().required().description('How many tests it was estimated from.'),
  seen_before: Joi.boolean()
    .required()
    .description(
      "Seen again: more runners moved the same way past the minimum change than slow runners alone would (at most the `fdr` chance, from how often the window's builds did): the runs of this build, when every one did, once per host, and the builds just before it, once each.",
    ),
  same_host: Joi.boolean()
    .required()
    .description(
      "Every run of this build (two at least) moved the same way, all on one host (execution context, which holds the machine's host name): the same runner seen twice, a slow runner rather than the code. It does not count as seen again.",
    ),
  fails: Joi.boolean()
    .required()
    .description('It fails the gate: a slowdown seen before. A lone shift is the runner until seen again, and passes.'),
})
  .id('RunnerShift')
  .description("The runner's shift on every test's time in one run of the build.");

const processMemorySchema = membersOf<ProcessMemoryShift>({
  machine_class: Joi.string()
    .allow(null)
    .required()
    .description('The machine class (or context, by `match`) of the tests it was estimated from; null for match=any.'),
  session_h: Joi.string().required().description('The run (session) of the build it was estimated in.'),
  change_mb: Joi.number()
    .required()
    .description("How far every test's memory moved in this run against the latest earlier build, in MB."),
  interval_mb: Joi.array().items(Joi.number()).length(2).required().description('Its 95 % interval, MB.'),
  series: Joi.number().integer().required().description('How many tests it was estimated from.'),
})
  .id('ProcessMemoryShift')
  .description(
    "Every test's memory moved together in one run: pytest-monitor's memory is the whole process's peak less its " +
      'RSS at session start, so it holds what the process gathered since (imports at collection, fixtures, caches, ' +
      "what earlier tests kept). That share is taken out of every test's memory before judging; it never fails the " +
      'gate.',
  );

const contentionSchema = membersOf<RunContention>({
  machine_class: Joi.string()
    .allow(null)
    .required()
    .description('The machine class (or context, by `match`) of the tests it was read from; null for match=any.'),
  session_h: Joi.string().required().description('The run (session) of the build it was read in.'),
  excess_pct: Joi.number()
    .required()
    .description(
      'The wall time each CPU second took beyond the usual, in % of that second: +65 means 1.65 s of wall time per ' +
        "second of CPU time where the tests' usual is 1 s. Negative: the runner was less busy than usual.",
    ),
  series: Joi.number().integer().required().description('How many CPU-bound tests it was read from.'),
})
  .id('RunContention')
  .description(
    "The runner's contention in one run: its cores were shared with other busy processes, so its CPU-bound tests " +
      '(CPU time at least 80 % of wall time, 0.1 s of CPU or more) waited for the CPU, their wall time stretched and ' +
      "their CPU time not. Read from those tests against each one's usual wait (four at least), and taken out of " +
      "every test's wall time by the CPU time that test used, before the runner's shift is estimated: a CPU loop " +
      'loses all of its stretch, a sleep keeps its wall time. It never fails the gate.',
  );

const rerunSchema = membersOf<RerunTest>({
  ...testMembers,
  reason: Joi.string()
    .valid('confirm', 'reference')
    .required()
    .description(
      "`confirm`: an unconfirmed finding's test; `reference`: a steady test that places the re-run's runner.",
    ),
})
  .id('RerunTest')
  .description('A test to re-run, as a new session of the same build.');

export const reportSchema = membersOf<RegressionReport>({
  pipeline: Joi.string().allow(null).required(),
  build: Joi.string().allow(null).required(),
  resources: Joi.array().items(Joi.string()).required(),
  model: Joi.object({ name: Joi.string().required() })
    .unknown(true)
    .required()
    .description('The model and its parameters.'),
  match: Joi.string()
    .valid(...MATCHES)
    .required()
    .description('Which earlier runs of a test counted.'),
  baseline: membersOf<ReportBaseline>({
    kind: Joi.string().valid('builds', 'sessions').required(),
    pipeline: Joi.string().allow(null).required().description('The pipeline of the baseline builds.'),
    tags: Joi.array()
      .items(Joi.object({ key: Joi.string().allow('').required(), value: Joi.string().allow('').required() }))
      .required()
      .description('The tags every baseline build holds.'),
    units: Joi.array()
      .items(Joi.string())
      .required()
      .description('The builds (or sessions) compared with, oldest first; empty when there was none.'),
  })
    .required()
    .description('What the build was compared with.'),
  verdict: Joi.string()
    .valid('pass', 'fail', 'confirm')
    .required()
    .description(
      "`fail`: a regression at the build's error control, or a slowdown of every test seen again; `confirm`: " +
        'findings a re-run of the tests in `rerun` (a new session of the same build) confirms or dismisses — asked ' +
        'even where `regressions` already fails the build, so that its report names every regression it holds; ' +
        '`pass`: neither.',
    ),
  compared: Joi.number()
    .integer()
    .required()
    .description('Tests × resources judged: the family the error control is over.'),
  error_control: membersOf<ErrorControl>({
    method: Joi.string().valid('benjamini-hochberg').required(),
    fdr: Joi.number()
      .required()
      .description('The false discovery rate: on a build where nothing changed, the chance of any finding at all.'),
  }).required(),
  classes: Joi.object(Object.fromEntries(SERIES_CLASSES.map((c) => [c, Joi.number().integer().required()])))
    .required()
    .description(
      'How many of the series with enough history fell in each class. `unresolved`: below what the measure resolves ' +
        `(the memory of a test shorter than memory_profiler's sampling interval, ${MEMORY_SAMPLE_INTERVAL} s): counted, ` +
        'never judged, not in `compared`.',
    ),
  shifts: Joi.array()
    .items(shiftSchema)
    .required()
    .description("The runner's shift of each run of the build, where past the minimum change."),
  process_memory: Joi.array()
    .items(processMemorySchema)
    .required()
    .description(
      "Each run where every test's memory moved together (the process's share) by at least the memory floor.",
    ),
  contention: Joi.array()
    .items(contentionSchema)
    .required()
    .description(
      'Each run whose CPU-bound tests waited for the CPU at least 10 % more (or less) than usual: taken out of ' +
        'every wall time before judging.',
    ),
  insufficient_history: Joi.number().integer().required().description('Tests × resources with too little history.'),
  no_baseline: Joi.number()
    .integer()
    .required()
    .description('Of those, the tests × resources no baseline build or session measured at all.'),
  regressions: Joi.array().items(findingSchema).required().description('Worst first.'),
  improvements: Joi.array().items(findingSchema).required().description('Best first.'),
  unconfirmed: Joi.array()
    .items(findingSchema)
    .required()
    .description(
      'Regressions one run cannot confirm (spikes of that size happen): a re-run confirms or dismisses them.',
    ),
  standing: Joi.array()
    .items(findingSchema)
    .required()
    .description(
      'Regressions an earlier build began (`since`) and this build still holds: reported on every build that holds ' +
        'them, and no cause to fail it (the build where the change began failed). A value back at the old level is ' +
        'no finding.',
    ),
  rerun: Joi.array()
    .items(rerunSchema)
    .required()
    .description('The tests to re-run when the verdict is `confirm`: the unconfirmed and a few reference tests.'),
  ...pagingSchemas,
}).id('RegressionReport');
