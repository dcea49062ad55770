import { expect } from 'chai';
import { RESOURCES } from '../../../src/domain/resources.js';
import type { Metric } from '../../../src/domain/records.js';
import type { CostKey, CostRow, MeasureRow } from '../../../src/store/store.js';
import type { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { summarize, type RunSummary } from '../../../src/store/summary/run-summary.js';
import { CostGroups, eachSummaryRow, recordCost } from '../../../src/store/summary/summary-reads.js';
import { aMetric, aSession, ciTags } from '../../support/builders.js';
import { memoryStore, pipelineRecords, write } from '../../support/memory-store.js';

/**
 * The analyses' reads from run summaries: the rows and exact cost sums the metrics themselves would give — whatever
 * order the terms come in, however the records split a session, and when two records hold the same metric.
 */

const head = (session_h: string, build: string) => ({
  session_h,
  pipeline: 'main',
  build,
  run_date: '2026-11-22T05:10:45',
});

/** Times whose floating-point sum depends on the order of its terms. */
const TIMES = [1e16, 1, 0.1, -0, 3.3, 1e-3, 2 ** 53, 0.7];

const metricsOf = (session_h: string, times = TIMES): Metric[] =>
  times.map((total_time, i) =>
    aMetric({
      session_h,
      item_variant: `test_${i}`,
      component: i % 2 === 0 ? 'api' : '',
      total_time,
      user_time: total_time / 3,
      kernel_time: total_time / 11,
      mem_usage: 100 - i,
    }),
  );

const rowsOf = (summaries: RunSummary[], overlapping: boolean, kind?: string): MeasureRow[] => {
  const rows: MeasureRow[] = [];
  eachSummaryRow(summaries, [RESOURCES.total_time], { overlapping, kind }, (row) => rows.push(row));
  return rows;
};

const sorted = (rows: CostRow[]): CostRow[] =>
  [...rows].sort((a, b) =>
    `${a.unit}/${a.component}/${a.item_variant}` < `${b.unit}/${b.component}/${b.item_variant}` ? -1 : 1,
  );

describe('store/summary/summary-reads', function () {
  it('gives one row per metric with its series and build', function () {
    const metrics = metricsOf('s1').slice(0, 3);
    const rows = rowsOf([summarize(head('s1', '4'), metrics)], false);
    expect(rows).to.deep.equal(
      metrics.map((m) => ({
        item_variant: m.item_variant,
        item: m.item,
        component: m.component,
        context_h: m.context_h,
        session_h: 's1',
        build: '4',
        values: [m.total_time],
      })),
    );
  });

  it('takes the metrics of one kind only when asked', function () {
    const metrics = [aMetric({ kind: 'module', item_variant: 'm' }), aMetric({ item_variant: 'f' })];
    expect(rowsOf([summarize(head('s1', '4'), metrics)], false, 'function').map((r) => r.item_variant)).to.deep.equal([
      'f',
    ]);
    expect(rowsOf([summarize(head('s1', '4'), metrics)], false, 'package')).to.deep.equal([]);
  });

  it("counts a metric held by two records of its session once (a body written again), another session's apart", function () {
    const metrics = metricsOf('s1');
    const first = summarize(head('s1', '4'), metrics.slice(0, 5));
    const again = summarize(head('s1', '4'), metrics.slice(3));
    const otherSession = summarize(head('s2', '4'), metricsOf('s2'));
    const rows = rowsOf([first, again, otherSession], true);
    expect(rows.filter((r) => r.session_h === 's1').map((r) => r.item_variant)).to.have.members(
      metrics.map((m) => m.item_variant),
    );
    expect(rows.filter((r) => r.session_h === 's2')).to.have.length(TIMES.length);
  });

  it('sums cost exactly: the same rows from records, from their kept totals and term by term in reverse', function () {
    const summaries = [
      summarize(head('s1', '1'), metricsOf('s1')),
      summarize(head('s2', '2'), metricsOf('s2').reverse()),
    ];
    for (const keys of [[], ['unit'], ['component'], ['unit', 'component']] as CostKey[][]) {
      const fromRecords = new CostGroups('build', keys, false).add(summaries).rows();
      const fromTotals = new CostGroups('build', keys, false);
      for (const summary of [...summaries].reverse()) fromTotals.addTotals(summary, recordCost(summary));
      const termByTerm = new CostGroups('build', keys, false);
      for (const summary of summaries)
        for (const m of [...metricsOf(summary.session_h)].reverse())
          termByTerm.addMeasures(
            keys.includes('unit') ? summary.build : null,
            keys.includes('component') ? m.component : null,
            null,
            m.total_time,
            m.user_time,
            m.kernel_time,
            m.mem_usage,
          );
      expect(sorted(fromTotals.rows()), keys.join()).to.deep.equal(sorted(fromRecords));
      expect(sorted(termByTerm.rows()), keys.join()).to.deep.equal(sorted(fromRecords));
    }
    const [total] = new CostGroups('build', [], false).add(summaries).rows();
    // Both sessions hold every time: twice their sum.
    expect(total?.total_time).to.equal(2 * (1e16 + 2 ** 53) + 2 * (1 + 0.1 + 3.3 + 1e-3 + 0.7));
    expect(total?.tests).to.equal(2 * TIMES.length);
    expect(total?.mem_max).to.equal(100);
  });

  it('sums the cost of tests only (kind "function")', function () {
    const metrics = [aMetric({ kind: 'module', total_time: 50 }), aMetric({ item_variant: 'f', total_time: 2 })];
    expect(
      new CostGroups('session', [], false).add([summarize(head('s1', '1'), metrics)]).rows(),
    ).to.deep.include.members([
      {
        unit: null,
        component: null,
        item_variant: null,
        tests: 1,
        total_time: 2,
        user_time: 0.01,
        kernel_time: 0.002,
        mem_max: 0.5,
        mem_sum: 0.5,
      },
    ]);
  });

  describe('on a store: the answer from run summaries is the answer from metrics', function () {
    let fromSummaries: SqliteStore;
    let fromMetrics: SqliteStore;
    before(async function () {
      fromSummaries = await memoryStore(true);
      fromMetrics = await memoryStore(false);
      // Build 1: 1000 metrics in one transaction (a summary written with them), then 200 more (pending); build 2:
      // single creates (pending). Pending sessions are summarized by the first read of their scope.
      const large = pipelineRecords('main', 1, () =>
        Array.from({ length: 1200 }, (_, i) => ({
          item_variant: `t${i}`,
          component: `c${i % 4}`,
          total_time: TIMES[i % TIMES.length] as number,
          user_time: i * 1e-3,
          mem_usage: (i * 7) % 13,
        })),
      );
      for (const store of [fromSummaries, fromMetrics]) {
        await write(store, large.slice(0, 2));
        await write(store, large.slice(2, 1002));
        await write(store, large.slice(1002));
        await store.createSession(
          aSession({ session_h: 'small', run_date: '2026-11-03T08:00:00', tags: ciTags('main', '2') }),
        );
        for (let i = 0; i < 20; i += 1)
          await store.createMetric(
            aMetric({ session_h: 'small', item_variant: `t${i}`, total_time: TIMES[i % 8] as number }),
          );
      }
      expect(await fromSummaries.pendingSummaries()).to.equal(2);
    });
    after(async function () {
      await fromSummaries.close();
      await fromMetrics.close();
    });

    it('gives the same cost sums, to the last bit, by every key', async function () {
      const scope = { pipeline: 'main', builds: ['1', '2'] };
      for (const keys of [[], ['unit'], ['component'], ['unit', 'component', 'item_variant']] as CostKey[][])
        expect(sorted(await fromSummaries.series.costRows(scope, keys)), keys.join()).to.deep.equal(
          sorted(await fromMetrics.series.costRows(scope, keys)),
        );
      expect(await fromSummaries.pendingSummaries(), 'the pending session summarized by the read').to.equal(0);
    });

    it('gives the same measure rows', async function () {
      const fields = [RESOURCES.total_time, RESOURCES.memory];
      const key = (r: MeasureRow) => `${r.build}/${r.item_variant}/${r.values.join()}`;
      const scope = { pipeline: 'main', builds: ['1', '2'] };
      const [a, b] = await Promise.all([fromSummaries, fromMetrics].map((s) => s.series.measureRows(scope, fields)));
      expect(a?.map(key).sort()).to.deep.equal(b?.map(key).sort());
      expect(a).to.have.length(1220);
    });
  });
});
