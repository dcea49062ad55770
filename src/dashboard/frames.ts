import { DEFAULT_RULE } from '../domain/regression/rule.js';
import { balanced, isolated } from './bidi.js';

/**
 * The pages' HTML: the frame of each page — title, headings, the search form, a placeholder per section — which the
 * browser modules fill from the API. Every value interpolated is escaped here, and every stored name shown is isolated
 * (`name`: a <bdi>; in the title, `isolated`), so that it cannot reorder the page's words around it (bidi.ts).
 */

export const DASHBOARD_PATH = '/dashboard';
export const ASSETS_PATH = `${DASHBOARD_PATH}/assets`;
const DOCS_PATH = '/api/v1/docs';

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

/** A stored name as HTML: escaped, balanced, in a <bdi> (of class `id`, the look of names and ids, unless told). */
const name = (text: string, className: string | null = 'id'): string =>
  `<bdi${className ? ` class="${className}"` : ''}>${escapeHtml(balanced(text))}</bdi>`;

/** Text of a page holding stored names, as HTML: made by `named`, never by hand. */
interface NamedText {
  readonly html: string;
}

/** `named\`Pipeline "${pipeline}" has no build "${build}".\``: the words escaped, each name escaped and isolated. */
export function named(words: TemplateStringsArray, ...names: string[]): NamedText {
  return { html: words.map((w, i) => escapeHtml(w) + (i < names.length ? name(names[i] ?? '', null) : '')).join('') };
}

/** The module the pages load, under /dashboard/assets/; null when it is not built (the pages then say so). */
export type ClientEntry = string | null;

interface Frame {
  title: string;
  /** Which page the script draws; none: a page without data (a 404). */
  page?: 'overview' | 'build' | 'compare' | 'variant' | 'cost' | 'noise' | 'changes';
  /** data-* attributes of <main>: what the script needs to know (already decoded from the URL). */
  data?: Record<string, string>;
  /** Breadcrumb trail after "Dashboard": [label as HTML (names isolated), href?]. */
  trail?: Array<[string, string?]>;
  /** The <h1> (HTML, every interpolated value escaped by the caller). */
  heading: string;
  /** The rest of <main>, HTML (likewise). */
  body: string;
}

const CLIENT_MISSING = `    <p class="error" id="client-missing">This page cannot show its data: the dashboard's script is not built on this server (<code>npm run build:dashboard</code> builds it into dist/dashboard). The data is in the API (<a href="${DOCS_PATH}">docs</a>).</p>`;

function render(frame: Frame, client: ClientEntry): string {
  const drawn = frame.page !== undefined && client !== null;
  const data = Object.entries({ ...(drawn ? { page: frame.page } : {}), ...frame.data })
    .map(([key, value]) => ` data-${key}="${escapeHtml(value)}"`)
    .join('');
  const trail = [
    `<a href="${DASHBOARD_PATH}/">Dashboard</a>`,
    ...(frame.trail ?? []).map(([label, href]) =>
      href ? `<a href="${escapeHtml(href)}">${label}</a>` : `<span>${label}</span>`,
    ),
  ].join(' <span class="sep">›</span> ');
  const scripts = drawn
    ? `
  <script src="${ASSETS_PATH}/uPlot.iife.min.js"></script>
  <script type="module" src="${ASSETS_PATH}/${client}"></script>`
    : '';
  const body = frame.page !== undefined && client === null ? CLIENT_MISSING : frame.body;
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${escapeHtml(frame.title)} · monitor-server</title>
  <link rel="icon" type="image/svg+xml" href="${ASSETS_PATH}/favicon.svg">
  <link rel="stylesheet" href="${ASSETS_PATH}/uPlot.min.css">
  <link rel="stylesheet" href="${ASSETS_PATH}/dashboard.css">
</head>
<body>
  <header class="top">
    <a class="brand" href="${DASHBOARD_PATH}/">monitor-server</a>
    <nav><a href="${DASHBOARD_PATH}/">Dashboard</a> <a href="${DOCS_PATH}">API docs</a></nav>
  </header>
  <main id="app"${data} data-state="${frame.page !== undefined && client === null ? 'unavailable' : 'loading'}">
    <p class="trail">${trail}</p>
    <noscript><p class="error">The tables and plots of this page need JavaScript; the data is in the API (<a href="${DOCS_PATH}">docs</a>).</p></noscript>
    ${frame.heading}
${body}
  </main>${scripts}
</body>
</html>
`;
}

/** The default rule in words, as the variant page draws it. */
const RULE_SUMMARY = `${DEFAULT_RULE.model}, the ${DEFAULT_RULE.window} builds before, ${DEFAULT_RULE.parameters.threshold} ${DEFAULT_RULE.model} σ, at least ${DEFAULT_RULE.minChangePct} % and a floor`;

/** A section the script fills: its heading, and a placeholder until the data arrives. */
const section = (id: string, heading: string, note = ''): string =>
  `    <section id="${id}">
      <h2>${heading}</h2>${note ? `\n      <p class="note">${note}</p>` : ''}
      <div class="content"><p class="loading">Loading…</p></div>
    </section>`;

export function overviewPage(query: string, client: ClientEntry): string {
  return render(
    {
      title: 'Dashboard',
      page: 'overview',
      heading: '<h1>Test resource usage</h1>',
      body: `${section('counts', 'Stored')}
    <section id="search">
      <h2>Find a test</h2>
      <form method="get" action="${DASHBOARD_PATH}/" role="search">
        <input type="search" name="q" value="${escapeHtml(query)}" placeholder="test_sleep*" aria-label="variant pattern" maxlength="2048">
        <button type="submit">Search</button>
      </form>
      <p class="note">Matches test variants anywhere in their name, case-insensitively: <code>*</code> or <code>%</code> any run of characters, <code>?</code> or <code>_</code> one character, <code>\\</code> before one of them matches it literally.</p>
      <div class="content"></div>
    </section>
${section('recent', 'Recent builds', 'The builds of the latest sessions stored, newest first.')}
${section('pipelines', 'Pipelines')}`,
    },
    client,
  );
}

/**
 * The forms that choose what a build is compared with: the builds of another pipeline (this page again, with
 * `?baseline_pipeline=`), or one other build (the compare page). Plain GET forms with labels: they work from the
 * keyboard and without the script.
 */
function baselineForms(pipeline: string, build: string, baselinePipeline: string): string {
  const field = (name: string, label: string, value: string, placeholder: string) =>
    `<label>${label} <input type="text" name="${name}" value="${escapeHtml(value)}" placeholder="${escapeHtml(placeholder)}" maxlength="256"></label>`;
  return `    <section id="baseline-choice">
      <h2>Compare with</h2>
      <form method="get" action="${escapeHtml(buildPath(pipeline, build))}" class="choice" id="baseline-pipeline-form">
        ${field('baseline_pipeline', 'Builds of pipeline', baselinePipeline, pipeline)}
        <button type="submit">Compare</button>
        <span class="note">The builds before this one of that pipeline (empty: its own, ${name(pipeline)}), e.g. <code>main</code> for a branch.</span>
      </form>
      <form method="get" action="${DASHBOARD_PATH}/compare" class="choice" id="compare-form">
        <input type="hidden" name="pipeline" value="${escapeHtml(pipeline)}">
        <input type="hidden" name="build" value="${escapeHtml(build)}">
        ${field('base_build', 'Another build', '', 'build id')}
        ${field('base_pipeline', 'of pipeline', '', pipeline)}
        <button type="submit">Compare</button>
        <span class="note">This build against that one alone (empty pipeline: ${name(pipeline)}).</span>
      </form>
    </section>`;
}

const buildPath = (pipeline: string, build: string): string =>
  `${DASHBOARD_PATH}/pipelines/${encodeURIComponent(pipeline)}/builds/${encodeURIComponent(build)}`;

type PipelinePage = 'cost' | 'noise' | 'changes';

const pipelinePath = (pipeline: string, page: PipelinePage): string =>
  `${DASHBOARD_PATH}/pipelines/${encodeURIComponent(pipeline)}/${page}`;

/**
 * Links to a pipeline's pages (what its suite costs, how noisy its machine classes are, the builds its tests changed
 * at), but the one shown.
 */
function pipelineLinks(pipeline: string, current?: PipelinePage): string {
  const links = (
    [
      ['cost', 'What the suite costs'],
      ['noise', 'Noise by machine class'],
      ['changes', 'Changes by build'],
    ] as const
  )
    .filter(([page]) => page !== current)
    .map(([page, label]) => `<a href="${escapeHtml(pipelinePath(pipeline, page))}" data-link="${page}">${label}</a>`);
  return `    <p class="pipeline-links">Pipeline ${name(pipeline)}: ${links.join(' · ')}</p>`;
}

/** What the candidates of a report are (the build and compare pages' section "To confirm"). */
const UNCONFIRMED_NOTE =
  'Tests past their limit that a single run cannot confirm: their history, or the suite’s, has spikes of that size. Re-run them in the same build.';

/** What a standing regression is (the build and compare pages' section "Standing"). */
const STANDING_NOTE =
  'Regressions an earlier build began (Since) and this one still holds: reported on every build that holds them, they do not fail it.';

/**
 * A build's page: the verdict first (with the runner's shift, when every test moved together), then the regressions,
 * the candidates to confirm and the improvements. `baselinePipeline` is the one the page's form chose (empty: the
 * build's own).
 */
export function buildFrame(pipeline: string, build: string, client: ClientEntry, baselinePipeline = ''): string {
  return render(
    {
      title: `Build ${isolated(build)} of ${isolated(pipeline)}`,
      page: 'build',
      data: { pipeline, build },
      trail: [[`pipeline ${name(pipeline, null)}`], [`build ${name(build, null)}`]],
      heading: `<h1>Build ${name(build)} of ${name(pipeline)}</h1>`,
      body: `${pipelineLinks(pipeline)}
${section('summary', 'Verdict')}
${section('regressions', 'Regressions', `Tests that got slower or heavier than in the builds before this one (the API’s default rule: each test on its machine class against its last ${DEFAULT_RULE.window} builds).`)}
${section('unconfirmed', 'To confirm', UNCONFIRMED_NOTE)}
${section('standing', 'Standing', STANDING_NOTE)}
${section('improvements', 'Improvements')}
${baselineForms(pipeline, build, baselinePipeline)}
${section('sessions', 'Sessions')}
${section('heaviest-memory', 'Heaviest tests by memory')}
${section('heaviest-time', 'Slowest tests by total time')}`,
    },
    client,
  );
}

/** Two builds compared directly: `build` of `pipeline` (the head) against `baseBuild` of `basePipeline`. */
export function compareFrame(
  head: { pipeline: string; build: string },
  base: { pipeline: string; build: string },
  client: ClientEntry,
): string {
  const which = (b: { pipeline: string; build: string }) =>
    `build <a class="id" href="${escapeHtml(buildPath(b.pipeline, b.build))}">${name(b.build, null)}</a> of ${name(b.pipeline)}`;
  return render(
    {
      title: `Build ${isolated(head.build)} of ${isolated(head.pipeline)} against ${isolated(base.build)} of ${isolated(base.pipeline)}`,
      page: 'compare',
      data: { pipeline: head.pipeline, build: head.build, 'base-pipeline': base.pipeline, 'base-build': base.build },
      trail: [
        [`pipeline ${name(head.pipeline, null)}`],
        [`build ${name(head.build, null)}`, buildPath(head.pipeline, head.build)],
        ['compare'],
      ],
      heading: `<h1>Compare ${which(head)} with ${which(base)}</h1>`,
      body: `${section('summary', 'Verdict')}
${section('regressions', 'Regressions', 'Tests that got slower or heavier in the first build than in the second (the API’s default rule, with that one build as the baseline).')}
${section('unconfirmed', 'To confirm', UNCONFIRMED_NOTE)}
${section('standing', 'Standing', STANDING_NOTE)}
${section('improvements', 'Improvements')}`,
    },
    client,
  );
}

export function variantFrame(variant: string, client: ClientEntry): string {
  return render(
    {
      title: isolated(variant),
      page: 'variant',
      data: { variant },
      trail: [[`test ${name(variant, null)}`]],
      heading: `<h1>Test ${name(variant)}</h1>`,
      body: `${section('about', 'Series')}
${section('plots', 'Across builds', `One value per build (the median when measured more than once). The band is the baseline the API judges a build by (its default rule: ${RULE_SUMMARY}); red points are regressions, green ones improvements; dashed lines mark the builds the test changed level at.`)}
${section('points', 'Values')}`,
    },
    client,
  );
}

/**
 * A page of a pipeline's suite (cost, noise, changes): its trail runs through the pipeline's cost page, and its links
 * lead to the others; `sections` follow them.
 */
function pipelineFrame(
  pipeline: string,
  page: PipelinePage,
  words: { title: string; heading: string },
  sections: string,
  client: ClientEntry,
): string {
  const pipelineCrumb: [string, string?] = [`pipeline ${name(pipeline, null)}`];
  if (page !== 'cost') pipelineCrumb.push(pipelinePath(pipeline, 'cost'));
  return render(
    {
      title: words.title,
      page,
      data: { pipeline },
      trail: [pipelineCrumb, [page]],
      heading: `<h1>${words.heading}</h1>`,
      body: `${pipelineLinks(pipeline, page)}\n${sections}`,
    },
    client,
  );
}

/** What a pipeline's suite costs: its totals per build over its recent builds, the costliest tests, the creeping. */
export const costFrame = (pipeline: string, client: ClientEntry): string =>
  pipelineFrame(
    pipeline,
    'cost',
    { title: `Cost of ${isolated(pipeline)}`, heading: `What the suite of ${name(pipeline)} costs` },
    `${section('trend', 'Per build', 'The totals of each of the last 30 builds, over the tests they measured (module metrics overlap their tests and are left out).')}
${section('tests', 'Costliest tests', 'The 10 tests that took the most CPU time over those builds, with their share of the total.')}
${section('components', 'Components', 'Each component’s share of the CPU time over those builds.')}
${section('creep', 'Creeping tests', 'Tests whose cost grows build after build (a robust slope of the log values, significant by the Mann–Kendall test, over the last 20 builds): a few % a build never trips a regression against the builds just before, yet adds up.')}`,
    client,
  );

/** How much each machine class that ran a pipeline's tests varies from build to build, noisiest first. */
export const noiseFrame = (pipeline: string, client: ClientEntry): string =>
  pipelineFrame(
    pipeline,
    'noise',
    { title: `Noise of ${isolated(pipeline)}`, heading: `Noise by machine class, pipeline ${name(pipeline)}` },
    section(
      'classes',
      'Machine classes',
      'For every test measured in at least 3 of the last 30 builds on a class, the robust coefficient of variation (1.4826 × MAD / median) of its total time across builds; per class, their median and 90th percentile. A noisy class makes verdicts on it less sure.',
    ),
    client,
  );

/** The builds at which a pipeline's tests changed level, the largest CPU cost first (the API's order). */
export const changesFrame = (pipeline: string, client: ClientEntry): string =>
  pipelineFrame(
    pipeline,
    'changes',
    { title: `Changes of ${isolated(pipeline)}`, heading: `Which build changed the tests of ${name(pipeline)}` },
    section(
      'changes',
      'Builds with changes',
      'Each test on each machine class, one value per build, walked oldest build first for the builds where its level steps up or down and stays there (a slow runner, every test of a build slower together, is told apart and is no change; a spike is no level). The builds are listed largest first: by the CPU-seconds their changes add to each build, then by how many tests changed.',
    ),
    client,
  );

/** A page saying what is missing; a message naming what was asked for is made by `named`. */
export function missingPage(title: string, message: string | NamedText): string {
  return render(
    {
      title,
      trail: [[escapeHtml(title)]],
      heading: `<h1>${escapeHtml(title)}</h1>`,
      body: `    <p class="error">${typeof message === 'string' ? escapeHtml(message) : message.html}</p>
    <p><a href="${DASHBOARD_PATH}/">Back to the dashboard</a></p>`,
    },
    null,
  );
}
