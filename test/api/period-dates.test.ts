import { expect } from 'chai';
import { routeGroups } from '../../src/api/app.js';
import { loadConfig } from '../../src/config.js';
import { aContext, aMetric, aSession, ciTags } from '../support/builders.js';
import { forEachStore } from '../support/stores.js';
import { create, getOk, sessionBody, useService } from './helpers.js';

/**
 * Issue 40, point 4: `since` and `until` were compared with `run_date` as text, so one instant written three ways
 * selected three periods. Every route that takes a period (found in the route table: each one with `since` and
 * `until`) is asked with the same instant in several spellings, on builds dated in several spellings around it:
 * each answer holds the same builds, in the order they started, on every store.
 */

/** The builds of `main`, in the order they are stored, each dated in its own spelling; UTC in the comment. */
const BUILDS: ReadonlyArray<[build: string, runDate: string]> = [
  ['1', '2026-11-10T09:00:00'], // 09:00:00 (no offset: UTC)
  ['2', '2026-11-10T10:59:59+01:00'], // 09:59:59, though its text sorts after the boundary's
  ['3', '2026-11-10T10:00:00'], // 10:00:00, the boundary itself
  ['4', '2026-11-10T11:00:00.5+01:00'], // 10:00:00.5
  ['5', '2026-11-10T10:00:00.000001Z'], // 10:00:00.000001, a microsecond after the boundary
  ['6', '2026-11-10 12:00:00'], // 12:00:00, though a space sorts before "T"
];

/** 2026-11-10T10:00:00 UTC, written as clients and people write it. */
const BOUNDARY = [
  '2026-11-10T10:00:00',
  '2026-11-10T10:00:00.000',
  '2026-11-10T10:00:00Z',
  '2026-11-10T10:00:00.000000000+00:00',
  '2026-11-10T11:00+01:00',
  '2026-11-10 10:00:00',
  '2026-11-10T05:00:00-0500',
];

/** In the order they started: since the boundary (inclusive), and before it. */
const SINCE = ['3', '5', '4', '6'];
const UNTIL = ['1', '2'];

/** Every GET route of the API that takes a period, its path filled in. */
function periodRoutes(): string[] {
  const { groups } = routeGroups(loadConfig({}));
  return groups
    .flatMap((group) => group.routes.map((route) => ({ group, route })))
    .filter(({ route }) => route.query?.since !== undefined && route.query.until !== undefined)
    .map(({ group, route }) =>
      `${group.prefix}${route.path}`.replace('{pipeline}', 'main').replace('{variant}', 'test_a'),
    );
}

/**
 * The builds a route's answer says its period holds: the list of those that give one (cost, cost of the tests and
 * components, creep, noise), else the count, first and last of `period` (changes).
 */
function periodOf(body: unknown): string[] {
  const answer = body as { builds?: Array<string | { build: string }>; period?: Record<string, unknown> };
  if (Array.isArray(answer.builds)) return answer.builds.map((b) => (typeof b === 'string' ? b : b.build));
  if (answer.period) {
    const { builds, first, last } = answer.period as { builds: number; first: string | null; last: string | null };
    return [String(builds), first ?? '', last ?? ''];
  }
  throw new Error(`no period in ${JSON.stringify(body)}`);
}

/** What a route says the period of `builds` is, in its own form (see periodOf). */
function expected(path: string, builds: readonly string[]): string[] {
  return path.includes('/changes') ? [String(builds.length), builds[0] ?? '', builds.at(-1) ?? ''] : [...builds];
}

forEachStore((fixture) => {
  describe('API: a period is of instants, however its dates are written (since, until)', function () {
    this.timeout(120_000);
    const api = useService(fixture);

    beforeEach(async function () {
      for (const [build, runDate] of BUILDS) {
        const context = aContext({ h: `ctx-${build}` });
        await create(api(), 'contexts', context);
        const session = `s-${build}`;
        await create(
          api(),
          'sessions',
          sessionBody(aSession({ session_h: session, run_date: runDate, tags: ciTags('main', build) })),
        );
        await create(
          api(),
          'metrics',
          aMetric({ session_h: session, context_h: context.h, item: 'test_a', item_variant: 'test_a' }),
        );
      }
    });

    it('finds every period route in the route table', function () {
      expect(periodRoutes()).to.have.length.of.at.least(7);
    });

    it('selects the same builds, in the order they started, for every spelling of the boundary on every period route', async function () {
      const routes = periodRoutes();
      for (const path of routes) {
        const whole = periodOf(await getOk(api(), path));
        expect(whole, `${path}: every build, in the order they started`).to.deep.equal(
          expected(path, ['1', '2', '3', '5', '4', '6']),
        );
        for (const boundary of BOUNDARY) {
          const at = encodeURIComponent(boundary);
          const since = periodOf(await getOk(api(), `${path}?since=${at}`));
          expect(since, `${path}?since=${boundary}`).to.deep.equal(expected(path, SINCE));
          const until = periodOf(await getOk(api(), `${path}?until=${at}`));
          expect(until, `${path}?until=${boundary}`).to.deep.equal(expected(path, UNTIL));
        }
      }
    });

    it('reads a date without a time as its midnight UTC, and tells a fraction of a microsecond apart', async function () {
      for (const path of periodRoutes()) {
        expect(periodOf(await getOk(api(), `${path}?until=2026-11-10`)), path).to.deep.equal(expected(path, []));
        expect(periodOf(await getOk(api(), `${path}?since=2026-11-11`)), path).to.deep.equal(expected(path, []));
        // Build 5 started at 10:00:00.000001: not before 10:00:00.0000009, before 10:00:00.0000011.
        const just = periodOf(
          await getOk(api(), `${path}?since=2026-11-10T10:00:00.0000009Z&until=2026-11-10T10:00:00.0000011Z`),
        );
        expect(just, path).to.deep.equal(expected(path, ['5']));
      }
    });
  });
});
