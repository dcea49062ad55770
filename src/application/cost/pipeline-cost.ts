import { ExactSum } from '../../domain/cost/exact-sum.js';
import {
  changePct,
  COST_MEASURES,
  NO_COST,
  totalsOf,
  type BuildCost,
  type CostChange,
  type CostMeasure,
  type CostShare,
  type ShareMeasure,
} from '../../domain/cost/totals.js';
import type { SeriesReader } from '../../store/store.js';
import { periodBuilds, type Period } from './pipeline-builds.js';

/**
 * A pipeline's cost over a period: each build's totals in the order the builds started, with the change from the
 * first to the last; and the tests or components that account for most of it.
 */

export interface PipelineTrend {
  pipeline: string;
  /** Oldest first. */
  builds: BuildCost[];
  /** From the first to the last build that measured a test; null with fewer than two such builds. */
  change: Record<CostMeasure, CostChange> | null;
}

export async function pipelineTrend(series: SeriesReader, pipeline: string, period: Period): Promise<PipelineTrend> {
  const runs = await periodBuilds(series, pipeline, period);
  const rows = await series.costRows({ pipeline, builds: runs.map((run) => run.build) }, ['unit']);
  const byBuild = new Map(rows.map((row) => [row.unit, totalsOf(row)]));
  const builds = runs.map((run) => ({
    build: run.build,
    started: run.started,
    totals: byBuild.get(run.build) ?? { ...NO_COST },
  }));
  const measured = builds.filter((b) => b.totals.tests > 0);
  const first = measured[0];
  const last = measured[measured.length - 1];
  const change =
    first && last && measured.length >= 2
      ? (Object.fromEntries(
          COST_MEASURES.map((m) => [
            m,
            { first: first.totals[m], last: last.totals[m], change_pct: changePct(first.totals[m], last.totals[m]) },
          ]),
        ) as Record<CostMeasure, CostChange>)
      : null;
  return { pipeline, builds, change };
}

export interface Costliest {
  pipeline: string;
  /** The builds looked at, oldest first. */
  builds: string[];
  by: ShareMeasure;
  /** The period's total of `by`. */
  total: number;
  /** Every test (or component), highest `by` first. */
  ranked: CostShare[];
}

/** The tests (`of: 'tests'`) or components of the pipeline's builds in the period, by their share of `by`. */
export async function costliest(
  series: SeriesReader,
  pipeline: string,
  period: Period,
  choice: { of: 'tests' | 'components'; by: ShareMeasure },
): Promise<Costliest> {
  const runs = await periodBuilds(series, pipeline, period);
  const builds = runs.map((run) => run.build);
  const rows = await series.costRows(
    { pipeline, builds },
    choice.of === 'tests' ? ['component', 'item_variant'] : ['component'],
  );
  const shares = rows.map((row) => ({
    item_variant: row.item_variant,
    component: row.component ?? '',
    totals: totalsOf(row),
  }));
  // Summed exactly: the same total whatever order the store gives the rows in.
  const sum = new ExactSum();
  for (const share of shares) sum.add(share.totals[choice.by]);
  const total = sum.value();
  const ranked = shares
    .map((share) => ({ ...share, share_pct: total === 0 ? 0 : (share.totals[choice.by] / total) * 100 }))
    .sort(
      (a, b) =>
        b.totals[choice.by] - a.totals[choice.by] ||
        compareText(a.component, b.component) ||
        compareText(a.item_variant ?? '', b.item_variant ?? ''),
    );
  return { pipeline, builds, by: choice.by, total, ranked };
}

const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
