import { expect } from 'chai';
import type { Build } from '../../src/domain/records.js';
import { ciTags } from '../support/builders.js';
import { forEachStore } from '../support/stores.js';
import { create, expectListing, getListing, getOk, seedContext, seedSession, useService, V1 } from './helpers.js';

/**
 * Pipelines and builds: a session belongs to pipeline P and build B when its tags hold
 * pipeline_branch = P and pipeline_build_no = B; values compare as strings.
 */
forEachStore((fixture) => {
  describe('API: pipelines', function () {
    const api = useService(fixture);

    beforeEach(async function () {
      await seedContext(api());
      const sessions: Array<[string, Array<{ key: string; value: string }>]> = [
        ['s4', ciTags('main', '10')],
        ['s2', ciTags('main', '9')],
        ['s1', ciTags('main', '9')],
        ['s3', ciTags('release/1.0', '1')],
        [
          's5',
          [
            { key: 'pipeline_branch', value: '' },
            { key: 'pipeline_build_no', value: '3' },
          ],
        ],
        ['s6', []],
        ['s7', [{ key: 'pipeline_branch', value: 'nobuild' }]],
        ['s8', [{ key: 'pipeline_build_no', value: '5' }]],
        ['s9', ciTags('Main', '9')],
      ];
      for (const [session_h, tags] of sessions) await seedSession(api(), { session_h, tags });
      // The client sends strings, but a numeric build tag posted by hand must be queryable too.
      await create(api(), 'sessions', {
        session_h: 's10',
        run_date: '2026-01-01T00:00:00',
        description: { pipeline_branch: 'numeric', pipeline_build_no: 42 },
      });
    });

    it('lists the distinct non-empty pipelines in byte order', async function () {
      expectListing(await api().get(`${V1}/pipelines/`), 'pipelines', [
        'Main',
        'main',
        'nobuild',
        'numeric',
        'release/1.0',
      ]);
    });

    it('pages the pipelines in the same order', async function () {
      const page = (p: number) => getListing<string>(api(), `${V1}/pipelines/?per_page=2&page=${p}`, 'pipelines');
      expect(await page(1)).to.deep.equal(['Main', 'main']);
      expect(await page(2)).to.deep.equal(['nobuild', 'numeric']);
      expect(await page(3)).to.deep.equal(['release/1.0']);
      expect(await page(-3)).to.deep.equal(['Main', 'main']);
    });

    it('lists the builds of a pipeline as {id, sessions} in byte order, sessions in byte order', async function () {
      expectListing(
        await api().get(`${V1}/pipelines/main/builds`),
        'builds',
        [
          { id: '10', sessions: ['s4'] },
          { id: '9', sessions: ['s1', 's2'] },
        ],
        { total_page: 1 },
        { pipeline: 'main' },
      );
      expectListing(
        await api().get(`${V1}/pipelines/Main/builds/`),
        'builds',
        [{ id: '9', sessions: ['s9'] }],
        { total_page: 1 },
        { pipeline: 'Main' },
      );
    });

    it('addresses a pipeline holding "/" as %2F, and a numeric build tag as its string', async function () {
      expectListing(
        await api().get(`${V1}/pipelines/release%2F1.0/builds`),
        'builds',
        [{ id: '1', sessions: ['s3'] }],
        { total_page: 1 },
        { pipeline: 'release/1.0' },
      );
      expectListing(
        await api().get(`${V1}/pipelines/numeric/builds`),
        'builds',
        [{ id: '42', sessions: ['s10'] }],
        { total_page: 1 },
        { pipeline: 'numeric' },
      );
      expectListing(
        await api().get(`${V1}/pipelines/numeric/builds/42/sessions`),
        'sessions',
        ['s10'],
        { total_page: 1 },
        { pipeline: 'numeric', build: '42' },
      );
    });

    it('pages the builds', async function () {
      const last = await getOk(api(), `${V1}/pipelines/main/builds?per_page=1&page=-1`);
      expect(last).to.deep.equal({
        pipeline: 'main',
        builds: [{ id: '9', sessions: ['s1', 's2'] }],
        prev_url: `${V1}/pipelines/main/builds?per_page=1&page=1`,
        next_url: null,
        total_page: 2,
      });
    });

    it('lists the session ids of one build in byte order', async function () {
      expectListing(
        await api().get(`${V1}/pipelines/main/builds/9/sessions`),
        'sessions',
        ['s1', 's2'],
        { total_page: 1 },
        { pipeline: 'main', build: '9' },
      );
      expectListing(
        await api().get(`${V1}/pipelines/release%2F1.0/builds/1/sessions/`),
        'sessions',
        ['s3'],
        { total_page: 1 },
        { pipeline: 'release/1.0', build: '1' },
      );
    });

    it('answers an unknown pipeline, a pipeline without builds, or an unknown build with 200 and an empty listing', async function () {
      expectListing(
        await api().get(`${V1}/pipelines/nope/builds`),
        'builds',
        [],
        { total_page: 0 },
        { pipeline: 'nope' },
      );
      expectListing(
        await api().get(`${V1}/pipelines/nobuild/builds`),
        'builds',
        [],
        { total_page: 0 },
        { pipeline: 'nobuild' },
      );
      expectListing(
        await api().get(`${V1}/pipelines/main/builds/11/sessions`),
        'sessions',
        [],
        { total_page: 0 },
        { pipeline: 'main', build: '11' },
      );
      expectListing(
        await api().get(`${V1}/pipelines/main/builds/9%20/sessions`),
        'sessions',
        [],
        { total_page: 0 },
        { pipeline: 'main', build: '9 ' },
      );
    });

    it('ties a session to no pipeline when its pipeline tag is missing or empty, and to no build without a build tag', async function () {
      const sessions: string[] = [];
      for (const pipeline of await getListing<string>(api(), `${V1}/pipelines/`, 'pipelines')) {
        const builds = await getListing<Build>(
          api(),
          `${V1}/pipelines/${encodeURIComponent(pipeline)}/builds`,
          'builds',
        );
        for (const build of builds) sessions.push(...build.sessions);
      }
      expect(sessions.sort()).to.deep.equal(['s1', 's10', 's2', 's3', 's4', 's9']);
    });
  });
});
