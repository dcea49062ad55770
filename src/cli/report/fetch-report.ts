import type { CreepFinding } from '../../domain/cost/creep.js';
import type { BuildCost, CostChange, CostShare } from '../../domain/cost/totals.js';
import type { ComponentCost, CostliestTests, CreepReport, PipelineCostTrend, UnitCost } from '../../wire/cost.js';
import { costOptionOf } from '../../wire/cost-query.js';
import { pages, unknownPipeline } from '../pipeline-listing.js';
import type { Remote } from '../remote.js';

/**
 * The cost report as `report` reads it from the service's cost routes: the pipeline's totals per build over the
 * period (every page), the latest build's totals and components (every page), the `top` costliest tests and up to
 * `top` creeping tests (pages followed until that many). The paging members are dropped.
 */

interface LatestBuild extends BuildCost {
  components: ComponentCost[];
}

export interface CostReport {
  pipeline: string;
  /** The builds of the period, oldest first, and the dates that bounded it when given. */
  period: { builds: string[]; since?: string; until?: string };
  /** The last build of the period, or null when the period holds none. */
  latest: LatestBuild | null;
  /** Each build's totals, oldest first. */
  trend: BuildCost[];
  /** Per total, the first and last measured build's value and the change in %; null with fewer than two. */
  change: Record<string, CostChange> | null;
  /** The `top` tests that cost the period most of `by`, highest first. */
  top_tests: { by: string; total: number; tests: CostShare[] };
  /** The creeping tests, largest change first, at most `top`. */
  creep: {
    builds: string[];
    resources: string[];
    judged: number;
    insufficient_history: number;
    /** More tests creep than the list holds (it holds at most `top`). */
    more: boolean;
    creeping: CreepFinding[];
  };
}

export interface ReportRequest {
  pipeline: string;
  /** Not given: the service's default period. */
  builds?: number;
  since?: string;
  until?: string;
  top: number;
  by?: string;
}

/** The route parameters as the options that set them, for the service's 400 messages. */
const optionOf = (parameter: string): string =>
  parameter === 'pipeline' || parameter === 'build' ? '--pipeline' : (costOptionOf(parameter) ?? parameter);

const LISTING = { optionOf, what: 'a cost report' };

/** The period's parameters: those given only, the service applies its defaults to the others. */
const periodQuery = (request: ReportRequest): URLSearchParams => {
  const query = new URLSearchParams();
  if (request.builds !== undefined) query.set('builds', String(request.builds));
  if (request.since !== undefined) query.set('since', request.since);
  if (request.until !== undefined) query.set('until', request.until);
  return query;
};

export async function fetchReport(remote: Remote, request: ReportRequest): Promise<CostReport> {
  const pipeline = `/pipelines/${encodeURIComponent(request.pipeline)}`;
  const trend = await pages<PipelineCostTrend, 'builds'>(
    remote,
    `${pipeline}/cost`,
    periodQuery(request),
    'builds',
    LISTING,
  ).catch((error: unknown) => {
    throw unknownPipeline(error, request.pipeline);
  });
  const builds = trend.list;
  const last = builds.at(-1);
  let latest: LatestBuild | null = null;
  if (last !== undefined) {
    const unit = await pages<UnitCost, 'components'>(
      remote,
      `${pipeline}/builds/${encodeURIComponent(last.build)}/cost`,
      new URLSearchParams(),
      'components',
      LISTING,
    );
    latest = {
      build: last.build,
      started: last.started,
      totals: unit.first.totals,
      components: unit.list,
    };
  }
  const costliest = periodQuery(request);
  if (request.by !== undefined) costliest.set('by', request.by);
  const tests = await pages<CostliestTests, 'tests'>(remote, `${pipeline}/cost/tests`, costliest, 'tests', {
    ...LISTING,
    enough: request.top,
  });
  // Without --builds, creep is judged over the creep rule's own number of builds (its default, tuned for it).
  const creep = await pages<CreepReport, 'creeping'>(remote, `${pipeline}/creep`, periodQuery(request), 'creeping', {
    ...LISTING,
    enough: request.top,
  });
  const creeping = creep.list;
  return {
    pipeline: request.pipeline,
    period: {
      builds: builds.map((b) => b.build),
      ...(request.since === undefined ? {} : { since: request.since }),
      ...(request.until === undefined ? {} : { until: request.until }),
    },
    latest,
    trend: builds,
    change: trend.first.change ?? null,
    top_tests: {
      by: tests.first.by,
      total: tests.first.total,
      tests: tests.list.slice(0, request.top),
    },
    creep: {
      builds: creep.first.builds,
      resources: creep.first.resources,
      judged: creep.first.judged,
      insufficient_history: creep.first.insufficient_history,
      more: creep.more,
      creeping: creeping.slice(0, request.top),
    },
  };
}
