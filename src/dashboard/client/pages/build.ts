import type { Metric, Session } from '../../../domain/records.js';
import type { ResourceName } from '../../../domain/resources.js';
import { api } from '../api.js';
import { fill, h } from '../dom.js';
import { reportSections } from '../findings.js';
import type { Report as RegressionReport } from '../gate.js';
import { formatDate, formatValue, integer, short } from '../format.js';
import { enc, variantHref } from '../links.js';
import { testName } from '../names.js';
import { RESOURCE } from '../resources.js';
import type { CountAnswer, MetricsPage, SessionIdsPage, SessionsPage } from '../../../wire/listings.js';
import { run } from '../sections.js';
import { table } from '../table.js';

/**
 * A build's page: the gate's verdict, and its regressions, candidates to confirm and improvements (the API's default
 * rule, against the builds before it of its own pipeline or of the `baseline_pipeline` the page's form chose),
 * sessions and heaviest tests.
 */
export async function buildPage({ pipeline = '', build = '' }: DOMStringMap): Promise<void> {
  const base = `/pipelines/${enc(pipeline)}/builds/${enc(build)}`;
  const chosen = new URLSearchParams(location.search).get('baseline_pipeline')?.trim();
  const report = api(
    `${base}/regressions${chosen ? `?baseline_pipeline=${enc(chosen)}` : ''}`,
  ) as Promise<RegressionReport>;

  const heaviest = (id: string, resource: ResourceName) => async () => {
    const top = (await api(`/resources/${resource}${base}/head/20/metrics`)) as MetricsPage;
    const { field, label } = RESOURCE[resource];
    const rows = top.metrics.map((m, i) => ({ ...m, rank: i + 1 }));
    fill(
      id,
      table<Metric & { rank: number }>(
        [
          { label: '#', cell: (m) => m.rank, numeric: true },
          {
            label: 'Test',
            className: 'test',
            cell: (m) =>
              h(
                'a',
                {
                  href: variantHref(m.item_variant, { pipeline, context: m.context_h, component: m.component, build }),
                },
                testName(m.item_variant),
              ),
          },
          { label: 'Component', cell: (m) => m.component || '–' },
          { label, cell: (m) => formatValue(m[field], resource), numeric: true },
          { label: 'Context', cell: (m) => h('code', { title: m.context_h }, short(m.context_h)) },
          { label: 'Session', cell: (m) => h('code', { title: m.session_h }, short(m.session_h)) },
        ],
        rows,
        { empty: 'No metric.' },
      ),
    );
  };

  await run({
    ...reportSections(report, pipeline, build),
    sessions: () => buildSessions(base),
    'heaviest-memory': heaviest('heaviest-memory', 'memory'),
    'heaviest-time': heaviest('heaviest-time', 'total_time'),
  });
}

const SESSIONS_SHOWN = 20;
/** Tags every session of a build has (they name the build): not repeated in the table. */
const BUILD_TAGS = new Set(['pipeline_branch', 'pipeline_build_no']);

type SessionRow = Pick<Session, 'session_h' | 'tags'> & Partial<Session> & { metrics: number };

async function buildSessions(base: string): Promise<void> {
  const listing = (await api(`${base}/sessions?per_page=${SESSIONS_SHOWN}`)) as SessionIdsPage;
  const rows = await Promise.all(
    listing.sessions.map(async (id): Promise<SessionRow> => {
      const [found, metrics] = await Promise.all([
        api(`/sessions/${enc(id)}?per_page=20`) as Promise<SessionsPage>,
        api(`/sessions/${enc(id)}/metrics/count`) as Promise<CountAnswer>,
      ]);
      const session = found.sessions.find((s) => s.session_h === id) ?? { session_h: id, tags: [] };
      return { ...session, metrics: metrics.count };
    }),
  );
  fill(
    'sessions',
    table<SessionRow>(
      [
        { label: 'Session', cell: (s) => h('code', {}, s.session_h) },
        { label: 'Run', cell: (s) => formatDate(s.run_date), key: (s) => s.run_date },
        { label: 'SCM ref', cell: (s) => h('code', { title: s.scm_ref ?? '' }, short(s.scm_ref)) },
        { label: 'Metrics', cell: (s) => integer.format(s.metrics), key: (s) => s.metrics, numeric: true },
        {
          label: 'Tags',
          // Each key and value a child of its own: isolated (dom.ts).
          cell: (s) => {
            const tags = s.tags.filter((t) => !BUILD_TAGS.has(t.key));
            return tags.length === 0 ? '–' : tags.flatMap((t, i) => [i > 0 ? ', ' : null, t.key, '=', t.value]);
          },
        },
      ],
      rows,
      { sort: 'Run', descending: false, empty: 'No session.' },
    ),
    listing.total_page > 1
      ? h('p', { class: 'note' }, `The first ${SESSIONS_SHOWN} of ${listing.total_page * SESSIONS_SHOWN} or so.`)
      : null,
  );
}
