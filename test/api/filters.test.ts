import { expect } from 'chai';
import { aSession, sessionAsRead, type SessionRead } from '../support/builders.js';
import { forEachStore } from '../support/stores.js';
import {
  expectError,
  expectListing,
  getListing,
  getMetrics,
  getOk,
  items,
  seedContext,
  seedMetrics,
  seedSession,
  useService,
  V1,
} from './helpers.js';

/** Filters by SCM reference (prefix of the session's scm_ref) and by scope (the metric's kind). */
forEachStore((fixture) => {
  describe('API: filters', function () {
    const api = useService(fixture);

    describe('by SCM reference', function () {
      beforeEach(async function () {
        await seedContext(api());
        const refs: Array<[string, string | null]> = [
          ['s1', 'abcdef'],
          ['s2', 'abzzzz'],
          ['s3', null],
          ['s4', 'xab'],
          ['s5', 'refs/heads/main'],
          ['s6', 'ab%_'],
        ];
        for (const [session_h, scm_ref] of refs) await seedSession(api(), { session_h, scm_ref });
        await seedMetrics(api(), [
          { item: 'a', session_h: 's1' },
          { item: 'b', session_h: 's2' },
          { item: 'c', session_h: 's3' },
          { item: 'd', session_h: 's4' },
          { item: 'e', session_h: 's1' },
          { item: 'f', session_h: 's5' },
        ]);
      });

      it('lists the metrics of the sessions whose scm_ref starts with <scm>, in insertion order, and counts them', async function () {
        expect(items(await getMetrics(api(), `${V1}/filters/scm/ab/metrics`))).to.deep.equal(['a', 'b', 'e']);
        expect(items(await getMetrics(api(), `${V1}/filters/scm/abcdef/metrics`))).to.deep.equal(['a', 'e']);
        expect(await getOk(api(), `${V1}/filters/scm/ab/metrics/count`)).to.deep.equal({ count: 3 });
        expect(await getOk(api(), `${V1}/filters/scm/abz/metrics/count`)).to.deep.equal({ count: 1 });
      });

      it('lists the sessions whose scm_ref starts with <scm>, in insertion order', async function () {
        expectListing(
          await api().get(`${V1}/filters/scm/ab/sessions`),
          'sessions',
          [
            aSession({ session_h: 's1', scm_ref: 'abcdef' }),
            aSession({ session_h: 's2', scm_ref: 'abzzzz' }),
            aSession({ session_h: 's6', scm_ref: 'ab%_' }),
          ].map(sessionAsRead),
        );
      });

      it('matches case-sensitively and literally, "%", "_" and "/" included', async function () {
        expect(await getOk(api(), `${V1}/filters/scm/AB/metrics/count`)).to.deep.equal({ count: 0 });
        expect(await getOk(api(), `${V1}/filters/scm/a_/metrics/count`)).to.deep.equal({ count: 0 });
        const sessions = async (scm: string) =>
          (
            await getListing<SessionRead>(api(), `${V1}/filters/scm/${encodeURIComponent(scm)}/sessions`, 'sessions')
          ).map((s) => s.session_h);
        expect(await sessions('ab%')).to.deep.equal(['s6']);
        expect(await sessions('%')).to.deep.equal([]);
        expect(await sessions('refs/heads/')).to.deep.equal(['s5']);
        expect(items(await getMetrics(api(), `${V1}/filters/scm/refs%2Fheads%2Fmain/metrics`))).to.deep.equal(['f']);
      });

      it('answers 200 with an empty listing and a zero count when nothing matches', async function () {
        expectListing(await api().get(`${V1}/filters/scm/nothing/metrics`), 'metrics', []);
        expectListing(await api().get(`${V1}/filters/scm/nothing/sessions`), 'sessions', []);
        expect(await getOk(api(), `${V1}/filters/scm/nothing/metrics/count`)).to.deep.equal({ count: 0 });
      });
    });

    it('answers a scope without metrics with 200, an empty listing and a zero count', async function () {
      expectListing(await api().get(`${V1}/filters/scope/package/metrics`), 'metrics', []);
      expect(await getOk(api(), `${V1}/filters/scope/package/metrics/count`)).to.deep.equal({ count: 0 });
    });

    describe('by scope', function () {
      beforeEach(async function () {
        await seedContext(api());
        await seedSession(api());
        await seedMetrics(api(), [
          { item: 'f1', kind: 'function' },
          { item: 'm1', kind: 'module' },
          { item: 'f2', kind: 'function' },
          { item: 'p1', kind: 'package' },
          { item: 'c1', kind: 'class' },
          { item: 'F', kind: 'Function' },
        ]);
      });

      it('lists and counts the metrics whose kind equals the scope, for function, module and package', async function () {
        const expected: Record<string, string[]> = { function: ['f1', 'f2'], module: ['m1'], package: ['p1'] };
        for (const [scope, names] of Object.entries(expected)) {
          expect(items(await getMetrics(api(), `${V1}/filters/scope/${scope}/metrics`)), scope).to.deep.equal(names);
          expect(await getOk(api(), `${V1}/filters/scope/${scope}/metrics/count`)).to.deep.equal({
            count: names.length,
          });
        }
      });

      it('answers 400 naming scope for any other scope, however it is spelled', async function () {
        for (const scope of ['class', 'Function', 'functions', 'func%25', '%20function']) {
          expectError(await api().get(`${V1}/filters/scope/${scope}/metrics`), 400, 'scope');
          expectError(await api().get(`${V1}/filters/scope/${scope}/metrics/count`), 400, 'scope');
        }
      });
    });
  });
});
