import { expect } from 'chai';
import fc from 'fast-check';
import { ElasticsearchStore } from '../../src/store/elasticsearch/elasticsearch-store.js';
import type { PurgeCounts } from '../../src/store/admin.js';
import type { Metric } from '../../src/domain/records.js';
import { envFor, runAdmin, snapshot } from '../cli/helpers.js';
import { aContext, aMetric, aSession } from '../support/builders.js';
import { forEachStore } from '../support/stores.js';

/**
 * Issue 30, row 4: `purge --before 2000-01-01` dropped the Elasticsearch index of 9999-12, whose "next month"
 * `10000.01` sorted before 2000 — the metrics of sessions it kept were deleted (the dry run said 987, the run deleted
 * 989) —, and years before 1000 made month indices of three-digit years that nothing used or dropped, so that
 * `init --check` failed. Here, over generated run dates — the first and last instants of the years the API takes
 * (2000 to 2099), month and year boundaries, offsets, and the years an older version may have stored (0999, 1000,
 * 1999, 2100, 9999: written to the store directly, past the API's rule) — and cut-offs on and between them, a purge
 * removes exactly the sessions that sort before its cut-off, with their metrics, component pairs and the contexts
 * left without metrics; its dry run counts exactly what it then deletes; what stays is untouched; and on
 * Elasticsearch every month index is named with a four-digit year and `init --check` finds nothing. (It found a purge
 * whose cut-off came after every month index: it dropped them all, and the read alias with them, and then failed.)
 */

interface PlannedMetric {
  context: 'ctx-a' | 'ctx-b';
  component: '' | 'x';
}
interface PlannedSession {
  runDate: string;
  metrics: PlannedMetric[];
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');
const lastDay = (year: number, month: number): number => new Date(Date.UTC(year, month, 0)).getUTCDate();

/** A year the API takes, mostly its ends and the years around now; sometimes one an older version stored. */
const year = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(2000, 2001, 2026, 2027, 2098, 2099) },
  { weight: 1, arbitrary: fc.constantFrom(999, 1000, 1999, 2100, 9999) },
);
const month = fc.constantFrom(1, 2, 11, 12);
/** A date at or next to a month boundary. */
const day = fc
  .tuple(year, month, fc.constantFrom('first', 'second', 'last'))
  .map(
    ([y, m, which]) => `${pad(y, 4)}-${pad(m)}-${pad(which === 'first' ? 1 : which === 'second' ? 2 : lastDay(y, m))}`,
  );
const runDate = fc
  .tuple(day, fc.constantFrom('', 'T00:00:00', 'T23:59:59.999999', 'T12:00:00+05:00', ' 00:00:00.000001'))
  .map(([d, time]) => `${d}${time}`);
const plannedSession: fc.Arbitrary<PlannedSession> = fc.record({
  runDate,
  metrics: fc.array(
    fc.record({
      context: fc.constantFrom('ctx-a' as const, 'ctx-b' as const),
      component: fc.constantFrom('' as const, 'x' as const),
    }),
    { minLength: 0, maxLength: 2 },
  ),
});
/** A cut-off: a date, or a date and time, on or next to a boundary (as `--before` takes it). */
const cutOff = fc.tuple(day, fc.constantFrom('', 'T00:00:00', 'T12:00:00')).map(([d, time]) => `${d}${time}`);

const COUNTS = /(\d+) sessions, (\d+) metrics, (\d+) component-session pairs and (\d+) contexts left without metrics/;

function countsIn(text: string, after: RegExp): PurgeCounts {
  const match = new RegExp(`${after.source}[\\s\\S]*?${COUNTS.source}`).exec(text);
  if (!match) throw new Error(`no counts after ${after.source} in: ${text}`);
  const [sessions, metrics, componentSessions, contexts] = match.slice(-4).map(Number) as [
    number,
    number,
    number,
    number,
  ];
  return { sessions, metrics, componentSessions, contexts };
}

forEachStore((fixture) => {
  describe('monitor-admin purge at every boundary of the run dates', function () {
    this.timeout(900_000);

    it('removes exactly what is before its cut-off, and its dry run counts exactly what it deletes', async function () {
      const elasticsearch = fixture().name === 'elasticsearch';
      const property = fc.asyncProperty(
        fc.array(plannedSession, { minLength: 1, maxLength: 6 }),
        cutOff,
        async (planned, before) => {
          const store = await fixture().create();
          try {
            const env = envFor(store);
            for (const h of ['ctx-a', 'ctx-b', 'ctx-unused']) await store.createContext(aContext({ h }));
            const metrics: Metric[] = [];
            for (const [i, session] of planned.entries()) {
              await store.createSession(aSession({ session_h: `s${i}`, run_date: session.runDate, tags: [] }));
              for (const [j, m] of session.metrics.entries()) {
                const metric = aMetric({
                  session_h: `s${i}`,
                  context_h: m.context,
                  component: m.component,
                  item: `t${i}-${j}`,
                });
                await store.createMetric(metric);
                metrics.push(metric);
              }
            }
            const stored = await snapshot(store);

            // What is before the cut-off: run dates compared as written.
            const purged = new Set(planned.flatMap((s, i) => (s.runDate < before ? [`s${i}`] : [])));
            const gone = metrics.filter((m) => purged.has(m.session_h));
            const expected: PurgeCounts = {
              sessions: purged.size,
              metrics: gone.length,
              componentSessions: new Set(gone.filter((m) => m.component !== '').map((m) => m.session_h)).size,
              contexts: ['ctx-a', 'ctx-b'].filter(
                (h) =>
                  gone.some((m) => m.context_h === h) &&
                  !metrics.some((m) => m.context_h === h && !purged.has(m.session_h)),
              ).length,
            };

            const dry = await runAdmin(['purge', '--before', before, '--dry-run'], { env });
            expect(dry.code, dry.stderr).to.equal(0);
            expect(countsIn(dry.stderr, /sessions with run_date before/), `dry run, ${dry.stderr}`).to.deep.equal(
              expected,
            );
            const run = await runAdmin(['purge', '--before', before, '--yes'], { env });
            expect(run.code, run.stderr).to.equal(0);
            const deleted = expected.sessions === 0 ? { ...expected } : countsIn(run.stderr, /deleted/);
            expect(deleted, `purge, ${run.stderr}`).to.deep.equal(expected);

            const after = await snapshot(store);
            expect(after.sessions).to.deep.equal(stored.sessions.filter((s) => !purged.has(s.session_h)));
            expect(after.metrics).to.deep.equal(stored.metrics.filter((m) => !purged.has(m.session_h)));
            expect(after.contexts.map((c) => c.h)).to.deep.equal(
              ['ctx-a', 'ctx-b', 'ctx-unused'].filter(
                (h) =>
                  h === 'ctx-unused' ||
                  after.metrics.some((m) => m.context_h === h) ||
                  !gone.some((m) => m.context_h === h),
              ),
            );

            if (store instanceof ElasticsearchStore) {
              const indices = Object.keys(await store.client.indices.getAlias({ name: store.names.alias('metrics') }));
              for (const index of indices) expect(store.names.monthOfIndex(index), index).to.match(/^\d{4}\.\d{2}$/);
            }
            const check = await runAdmin(['init', '--check'], { env });
            expect(check.code, `init --check: ${check.stdout}${check.stderr}`).to.equal(0);
          } finally {
            await fixture().destroy(store);
          }
        },
      );
      const examples: Array<[PlannedSession[], string]> = [
        // The case: a session of 9999-12 is kept by a cut-off of 2000, and so are its metrics.
        [
          [
            { runDate: '9999-12-15T10:00:00', metrics: [{ context: 'ctx-a', component: 'x' }] },
            { runDate: '1999-12-31T23:59:59', metrics: [{ context: 'ctx-b', component: '' }] },
          ],
          '2000-01-01',
        ],
        // A year before 1000: its month is written with four digits, and init --check finds nothing.
        [[{ runDate: '0999-02-10', metrics: [{ context: 'ctx-a', component: '' }] }], '2000-01-01'],
        // A cut-off after every month that has an index: the read alias keeps one (Elasticsearch).
        [[{ runDate: '2000-01-01', metrics: [{ context: 'ctx-a', component: 'x' }] }], '2099-12-31'],
        // The first and last instants the API takes, cut at both ends of the years.
        [
          [
            { runDate: '2000-01-01T00:00:00', metrics: [{ context: 'ctx-a', component: '' }] },
            { runDate: '2099-12-31T23:59:59.999999', metrics: [{ context: 'ctx-b', component: 'x' }] },
          ],
          '2099-12-31',
        ],
      ];
      await fc.assert(property, { numRuns: elasticsearch ? 12 : 40, examples });
    });
  });
});
