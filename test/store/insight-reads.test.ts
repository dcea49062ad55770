import { expect } from 'chai';
import type { Metric } from '../../src/domain/records.js';
import type { SeriesReader, Store } from '../../src/store/store.js';
import { aContext, aMetric, aSession, ciTags } from '../support/builders.js';
import { forEachStore } from '../support/stores.js';

/**
 * The measures of a scope at sizes the contract's small data never reaches: builds of a few and of many sessions
 * (the Elasticsearch store reads up to 64 session × context groups one by one and merges them, more in one pass)
 * and a session of more metrics than one page of Elasticsearch answers. Every metric comes back once, with its own
 * session, context, build and measures; a session's metrics in the order they were stored, a build's sessions in the
 * order they began (run summaries hold a session's metrics together) — regressions name the earliest session of a
 * build that measured a test.
 */
forEachStore((fixture) => {
  describe('store: measures of a large scope', function () {
    this.timeout(120_000);
    let store: Store;
    const other = aContext({ h: 'ctx-other' });

    beforeEach(async function () {
      store = await fixture().create();
      await store.createContext(aContext());
      await store.createContext(other);
    });
    afterEach(async function () {
      await fixture().destroy(store);
    });

    const create = async (metrics: Metric[]) => {
      for (let i = 0; i < metrics.length; i += 500) {
        await Promise.all(metrics.slice(i, i + 500).map((m) => store.createMetric(m)));
      }
    };
    const summary = (rows: Awaited<ReturnType<SeriesReader['measureRows']>>) =>
      rows.map((r) => [r.session_h, r.context_h, r.build, r.item_variant, r.item, r.component, ...r.values].join(' '));
    /** The metrics as a build's reads give them: session after session (in the order they began), each in order. */
    const bySessionThenStored = (metrics: Metric[]): Metric[] => {
      const sessions = [...new Set(metrics.map((m) => m.session_h))];
      return sessions.flatMap((h) => metrics.filter((m) => m.session_h === h));
    };
    const expected = (metrics: Metric[], build: string | null) =>
      bySessionThenStored(metrics).map((m) =>
        [m.session_h, m.context_h, build, m.item_variant, m.item, m.component, m.total_time, m.mem_usage].join(' '),
      );

    for (const count of [6, 80]) {
      it(`reads a build of ${count} sessions on two contexts, every metric once, session by session in the order stored`, async function () {
        const sessions = Array.from({ length: count }, (_, s) => `s${String(s).padStart(2, '0')}`);
        for (const h of sessions) await store.createSession(aSession({ session_h: h, tags: ciTags('main', '7') }));
        await store.createSession(aSession({ session_h: 'elsewhere', tags: ciTags('main', '8') }));
        // Interleaved as concurrent CI jobs write: round after round, one metric per session.
        const metrics: Metric[] = [];
        for (let round = 0; round < 3; round += 1) {
          sessions.forEach((h, s) =>
            metrics.push(
              aMetric({
                session_h: h,
                context_h: s % 2 === 0 ? aContext().h : other.h,
                item: `test_${round}`,
                item_variant: `test_${round}[${s}]`,
                component: `c${s % 3}`,
                total_time: round + s / 100,
                mem_usage: s,
              }),
            ),
          );
        }
        for (const m of metrics) await store.createMetric(m);
        await store.createMetric(aMetric({ session_h: 'elsewhere', item_variant: 'not in build 7' }));
        const rows = await store.series.measureRows({ pipeline: 'main', builds: ['7'] }, ['total_time', 'mem_usage']);
        expect(summary(rows)).to.deep.equal(expected(metrics, '7'));
      });
    }

    it('reads a session of more than 10,000 metrics, every metric once, in the order stored', async function () {
      await store.createSession(aSession({ session_h: 'big', tags: ciTags('main', '9') }));
      const metrics = Array.from({ length: 10_050 }, (_, i) =>
        aMetric({
          session_h: 'big',
          item: `t${i % 7}`,
          item_variant: `v${i}`,
          total_time: i / 1000,
          mem_usage: i % 13,
        }),
      );
      await create(metrics);
      const byBuild = await store.series.measureRows({ pipeline: 'main', builds: ['9'] }, ['total_time', 'mem_usage']);
      expect(summary(byBuild)).to.deep.equal(expected(metrics, '9'));
      const bySession = await store.series.measureRows({ sessions: ['big'] }, ['total_time', 'mem_usage']);
      expect(bySession).to.have.length(metrics.length);
    });
  });
});
