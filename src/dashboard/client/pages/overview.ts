import type { Session } from '../../../domain/records.js';
import { api } from '../api.js';
import { errorNode, fill, h } from '../dom.js';
import { formatDate, integer, short } from '../format.js';
import { buildHref, DASHBOARD, enc, pipelineHref, variantHref } from '../links.js';
import type { BuildsPage, CountAnswer, MetricsPage, PipelinesPage, SessionsPage } from '../../../wire/listings.js';
import { run } from '../sections.js';
import { table } from '../table.js';

/** The overview: counts, a search over test variants, the recent builds and the pipelines. */
export async function overview(): Promise<void> {
  const query = new URLSearchParams(location.search);
  const recent = recentSessions();
  await run({
    counts,
    search: () => search(query.get('q') ?? ''),
    recent: async () => {
      const builds = latestBuilds(await recent);
      fill(
        'recent',
        table(
          [
            { label: 'Build', cell: (b) => h('a', { href: buildHref(b.pipeline, b.build) }, b.build) },
            { label: 'Pipeline', cell: (b) => b.pipeline },
            { label: 'Run', cell: (b) => formatDate(b.runDate) },
            { label: 'SCM ref', cell: (b) => h('code', { title: b.scmRef ?? '' }, short(b.scmRef)) },
            { label: 'Sessions', cell: (b) => integer.format(b.sessions), numeric: true },
          ],
          builds.slice(0, 15),
          {
            empty:
              'No session of a pipeline yet: sessions join one with the tags pipeline_branch and pipeline_build_no.',
          },
        ),
      );
    },
    pipelines: () => pipelines(Number(query.get('page') ?? '1') || 1, recent),
  });
}

const COUNTED = [
  ['contexts', '/contexts/count', 'execution contexts'],
  ['sessions', '/sessions/count', 'sessions'],
  ['metrics', '/metrics/count', 'metrics'],
  ['components', '/components/count', 'components'],
] as const;

async function counts(): Promise<void> {
  const answers = await Promise.all(COUNTED.map(async ([, path]) => (await api(path)) as CountAnswer));
  fill(
    'counts',
    h(
      'dl',
      { class: 'tiles' },
      COUNTED.map(([name, , label], i) =>
        h(
          'div',
          { class: 'tile', 'data-count': name },
          h('dt', {}, label),
          h('dd', {}, integer.format(answers[i]?.count ?? 0)),
        ),
      ),
    ),
  );
}

/** The latest sessions (at least 200 when there are as many), oldest first: two pages from the end at most. */
async function recentSessions(size = 200): Promise<Session[]> {
  const last = (await api(`/sessions/?page=-1&per_page=${size}`)) as SessionsPage;
  if (last.sessions.length >= size || last.total_page < 2) return last.sessions;
  const before = (await api(`/sessions/?page=-2&per_page=${size}`)) as SessionsPage;
  return [...before.sessions, ...last.sessions];
}

interface RecentBuild {
  pipeline: string;
  build: string;
  runDate: string;
  scmRef: string | null;
  sessions: number;
}

const tagOf = (session: Session, key: string): string | null =>
  session.tags.find((tag) => tag.key === key)?.value ?? null;

/** Builds of those sessions, the most recently run first. */
function latestBuilds(sessions: readonly Session[]): RecentBuild[] {
  const builds = new Map<string, RecentBuild>();
  for (const session of [...sessions].reverse()) {
    const pipeline = tagOf(session, 'pipeline_branch');
    const build = tagOf(session, 'pipeline_build_no');
    if (!pipeline || !build) continue;
    const key = JSON.stringify([pipeline, build]);
    const known = builds.get(key);
    if (known) known.sessions += 1;
    else builds.set(key, { pipeline, build, runDate: session.run_date, scmRef: session.scm_ref, sessions: 1 });
  }
  return [...builds.values()];
}

const PIPELINES_PER_PAGE = 20;

async function pipelines(page: number, recentSessions: Promise<Session[]>): Promise<void> {
  const listing = (await api(`/pipelines/?per_page=${PIPELINES_PER_PAGE}&page=${page}`)) as PipelinesPage;
  const recent = latestBuilds(await recentSessions);
  const rows = await Promise.all(
    listing.pipelines.map(async (pipeline) => {
      const count = (await api(`/pipelines/${enc(pipeline)}/builds?per_page=1`)) as BuildsPage;
      let builds = recent.filter((b) => b.pipeline === pipeline).map((b) => b.build);
      let byName = false;
      if (builds.length === 0 && count.total_page > 0) {
        // Not among the latest sessions: its last builds in the API's order (by name).
        const last = (await api(`/pipelines/${enc(pipeline)}/builds?page=-1&per_page=5`)) as BuildsPage;
        builds = last.builds.map((b) => b.id).reverse();
        byName = true;
      }
      return { pipeline, count: count.total_page, builds: builds.slice(0, 6), byName };
    }),
  );
  const pager: Node[] = [];
  if (listing.total_page > 1) {
    const link = (n: number, label: string) => h('a', { href: `${DASHBOARD}/?page=${n}` }, label);
    pager.push(
      h(
        'p',
        { class: 'pager' },
        page > 1 ? link(page - 1, '← previous') : null,
        ` page ${page} of ${listing.total_page} `,
        page < listing.total_page ? link(page + 1, 'next →') : null,
      ),
    );
  }
  fill(
    'pipelines',
    table(
      [
        { label: 'Pipeline', cell: (r) => h('span', { class: 'id' }, r.pipeline) },
        { label: 'Builds', cell: (r) => integer.format(r.count), numeric: true },
        {
          label: 'Latest builds',
          cell: (r) =>
            h(
              'span',
              { class: 'links' },
              r.builds.flatMap((b, i) => [i > 0 ? ' ' : null, h('a', { href: buildHref(r.pipeline, b) }, b)]),
              r.byName ? h('span', { class: 'note' }, ' (last by name: none among the latest sessions)') : null,
            ),
        },
        {
          label: 'Cost',
          cell: (r) =>
            r.count > 0
              ? h(
                  'span',
                  { class: 'links' },
                  h('a', { href: pipelineHref(r.pipeline, 'cost'), 'data-link': 'cost' }, 'cost'),
                  ' ',
                  h('a', { href: pipelineHref(r.pipeline, 'noise'), 'data-link': 'noise' }, 'noise'),
                  ' ',
                  h('a', { href: pipelineHref(r.pipeline, 'changes'), 'data-link': 'changes' }, 'changes'),
                )
              : '–',
        },
      ],
      rows,
      { empty: 'No pipeline yet.' },
    ),
    pager,
  );
}

interface Found {
  variant: string;
  item: string;
  component: string;
  path: string;
  metrics: number;
}

/** The variants a pattern matches, from the first page of matching metrics, and further pages on request. */
async function search(pattern: string): Promise<void> {
  if (pattern === '') return;
  const path = `/variants/like/${enc(pattern)}/metrics`;
  const [first, count] = await Promise.all([
    api(`${path}?per_page=500`) as Promise<MetricsPage>,
    api(`${path}/count`) as Promise<CountAnswer>,
  ]);
  const found = new Map<string, Found>();
  const results = h('div');
  const more = h('button', { type: 'button' }, 'Look further');
  let next = first.next_url;
  let seen = 0;
  const show = (metrics: MetricsPage['metrics']) => {
    seen += metrics.length;
    for (const m of metrics) {
      const key = JSON.stringify([m.item_variant, m.component]);
      const known = found.get(key);
      if (known) known.metrics += 1;
      else
        found.set(key, {
          variant: m.item_variant,
          item: m.item,
          component: m.component,
          path: m.item_path,
          metrics: 1,
        });
    }
    results.replaceChildren(
      h(
        'p',
        { class: 'note', id: 'search-summary' },
        `${integer.format(found.size)} test variant${found.size === 1 ? '' : 's'} among the first ${integer.format(seen)} of ${integer.format(count.count)} matching metrics.`,
      ),
      table<Found>(
        [
          {
            label: 'Variant',
            cell: (r) => h('a', { href: variantHref(r.variant, { component: r.component }) }, r.variant),
            key: (r) => r.variant,
          },
          { label: 'Item', cell: (r) => r.item },
          { label: 'Module', cell: (r) => r.path },
          { label: 'Component', cell: (r) => r.component || '–', key: (r) => r.component },
          { label: 'Metrics seen', cell: (r) => integer.format(r.metrics), key: (r) => r.metrics, numeric: true },
        ],
        [...found.values()],
        { empty: ['No test variant matches "', pattern, '".'] },
      ),
    );
    more.hidden = !next;
  };
  more.addEventListener('click', () => {
    if (!next) return;
    more.disabled = true;
    (api(next) as Promise<MetricsPage>)
      .then((page) => {
        next = page.next_url;
        show(page.metrics);
      })
      .catch((error: unknown) => results.append(errorNode(error)))
      .finally(() => {
        more.disabled = false;
      });
  });
  show(first.metrics);
  fill('search', results, more);
}
