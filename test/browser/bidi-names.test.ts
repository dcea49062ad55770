import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { balanced, isolated } from '../../src/dashboard/bidi.js';
import type { RunningService } from '../../src/server.js';
import type { Store } from '../../src/store/store.js';
import { expectClientBuilt, useBrowser } from '../support/browser.js';
import { aContext, aMetric, ciTags } from '../support/builders.js';
import { ApiClient, startTestService } from '../support/service.js';
import { sqliteFixture } from '../support/stores.js';

/**
 * Stored names holding bidirectional controls — a right-to-left override left open (U+202E), an isolate opened and
 * left open (U+2067), a pop-directional-isolate with nothing to pop (U+2069) before an override, a paragraph separator
 * (U+2029) — in every place the dashboard shows names: pipelines, builds, sessions, tests, items, paths, components,
 * tags, SCM references, context fields. On every page that shows them, each is isolated, and the page's own words
 * are drawn in their order: no "ssalc enihcam yb esioN" after a pipeline `release\u202E`.
 *
 * The check, in the page: every text node outside an isolating inline (a <bdi>, or unicode-bidi isolate) holds no
 * bidi control outside a balanced FSI…PDI of its own (`stray`), and the letters and digits of each such text node are
 * drawn left to right, line by line (`reversed`: their boxes, from Range.getBoundingClientRect).
 */

const RLO = '\u202E';
const RLI = '\u2067';
const PDI = '\u2069';
const PS = '\u2029';

const PIPELINE = `release${RLO}`;
const OTHER_PIPELINE = `nigh${PDI}${RLO}tly`;
const BUILDS = 10;
/** The builds of PIPELINE, oldest first: the last two hostile (an override; an isolate left open). */
const buildName = (b: number): string =>
  b === BUILDS ? `b10${RLI}x` : b === BUILDS - 1 ? `b09${RLO}` : `b${String(b).padStart(2, '0')}`;
const HEAVY = `test_heavy${RLO}`;
const STEADY = `test_up[${RLO}live]`;
const COMPONENT = `stor${PDI}${RLO}age`;
const SOLO = `test_solo${RLO}`;
const CONTEXT = aContext({ system_info: `Linux ${RLO}6.1`, machine_node: `runner${RLO}` });

async function post(api: ApiClient, path: string, body: unknown): Promise<void> {
  const res = await api.post(`/api/v1${path}`, body);
  if (res.status !== 201) throw new Error(`POST ${path} → ${res.status} ${res.text}`);
}

async function session(api: ApiClient, id: string, pipeline: string, build: string, day: number): Promise<void> {
  await post(api, '/sessions/', {
    session_h: id,
    run_date: `2026-11-${String(day).padStart(2, '0')}T10:00:00`,
    scm_ref: `abc${RLO}def${day}`,
    description: {
      ...Object.fromEntries(ciTags(pipeline, build).map((t) => [t.key, t.value])),
      runner: `ci${RLO}-7`,
      [`k${RLI}ey`]: `v${PS}${RLO}w`,
    },
  });
}

/** PIPELINE: 10 builds where test_heavy… is steady until the last, 3× heavier there; OTHER_PIPELINE: 2 builds. */
async function seed(api: ApiClient): Promise<void> {
  await post(api, '/contexts/', CONTEXT);
  for (let b = 1; b <= BUILDS; b += 1) {
    const id = `s${b}${RLO}`;
    await session(api, id, PIPELINE, buildName(b), b);
    const steady = 1 + 0.02 * Math.sin(b * 1.7);
    for (const [variant, memory] of [
      [HEAVY, 100 * steady * (b === BUILDS ? 3 : 1)],
      [STEADY, 20 * steady],
    ] as const) {
      await post(
        api,
        '/metrics/',
        aMetric({
          session_h: id,
          context_h: CONTEXT.h,
          item: variant.replace(/\[.*/, ''),
          item_variant: variant,
          item_path: `tests.${RLO}mod`,
          item_fs_loc: `tests/${RLI}x.py`,
          component: COMPONENT,
          total_time: steady,
          user_time: 0.8 * steady,
          kernel_time: 0.05,
          cpu_usage: 0.8,
          mem_usage: memory,
        }),
      );
    }
  }
  for (const [b, build] of [`n1`, `n2${RLO}`].entries()) {
    const id = `n${b}${RLO}`;
    await session(api, id, OTHER_PIPELINE, build, 20 + b);
    await post(api, '/metrics/', aMetric({ session_h: id, context_h: CONTEXT.h, item_variant: STEADY }));
  }
  // A test run outside any pipeline: its page's unit is the session.
  for (let s = 1; s <= 3; s += 1) {
    const id = `solo-${s}${RLO}`;
    await post(api, '/sessions/', { session_h: id, run_date: `2026-11-2${s + 2}T10:00:00`, description: {} });
    await post(api, '/metrics/', aMetric({ session_h: id, context_h: CONTEXT.h, item_variant: SOLO }));
  }
}

interface BidiFindings {
  /** Text nodes holding a bidi control that no isolate contains. */
  stray: string[];
  /** Text nodes outside every isolate whose letters are not drawn left to right. */
  reversed: string[];
  /** document.title holds a control outside its own FSI…PDI. */
  title: string | null;
  /** Whether the page shows a hostile name at all (else the check proves nothing). */
  showsNames: boolean;
}

/**
 * The check of the suite's header comment, run in the page. (No named function inside: tsx would wrap it in a helper
 * the page does not have.)
 */
function bidiFindings(page: Page): Promise<BidiFindings> {
  return page.evaluate(() => {
    const CONTROL = /[\u202A-\u202E\u2066-\u2069]/;
    const stray: string[] = [];
    const reversed: string[] = [];
    let title: string | null = null;
    const range = document.createRange();
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const texts: Array<Text | null> = [null]; // null: the document's title
    for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) texts.push(node as Text);
    for (const node of texts) {
      const text = node === null ? document.title : node.data;
      const parent = node === null ? null : node.parentElement;
      if (node !== null) {
        if (text.trim() === '' || parent === null || ['SCRIPT', 'STYLE', 'NOSCRIPT'].includes(parent.tagName)) continue;
        // Inside an isolating inline — a <bdi>, or an inline of unicode-bidi isolate — within its block: a name,
        // which may draw itself as it likes. (Blocks are isolates too, by the UA's styles: that says nothing about
        // the text inside them, which is their paragraph.)
        let isolated = false;
        for (let e: Element | null = parent; e !== null; e = e.parentElement) {
          const style = getComputedStyle(e);
          if (style.display !== 'inline') break;
          if (e.tagName === 'BDI' || ['isolate', 'isolate-override', 'plaintext'].includes(style.unicodeBidi)) {
            isolated = true;
            break;
          }
        }
        if (isolated) continue;
      }
      // Per UTF-16 unit: inside an isolate (LRI, RLI or FSI … its PDI) the text itself opened.
      const inside: boolean[] = [];
      let outside = '';
      let depth = 0;
      for (let i = 0; i < text.length; i += 1) {
        const unit = text.charAt(i);
        if (/[\u2066-\u2068]/.test(unit)) depth += 1;
        inside.push(depth > 0);
        if (depth === 0) outside += unit;
        if (unit === '\u2069' && depth > 0) depth -= 1;
      }
      if (CONTROL.test(outside)) {
        if (node === null) title = text;
        else stray.push(text);
      }
      if (node === null) continue;
      let last: DOMRect | undefined;
      for (let i = 0; i < text.length; i += 1) {
        if (inside[i] === true || !/[A-Za-z0-9]/.test(text.charAt(i))) continue;
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const box = range.getBoundingClientRect();
        if (box.width === 0) continue;
        if (last !== undefined && Math.abs(box.top - last.top) < 2 && box.left < last.left) {
          reversed.push(text);
          break;
        }
        last = box;
      }
    }
    const showsNames = /[\u202E\u2067\u2069]/.test(document.body.textContent);
    return { stray, reversed, title, showsNames };
  });
}

describe('Dashboard: a stored name made safe to isolate (src/dashboard/bidi.ts)', function () {
  it('drops a PDI with nothing of the name to pop, closes the isolates it leaves open, and keeps one paragraph', function () {
    expect(balanced(`release${RLO}`)).to.equal(`release${RLO}`);
    expect(balanced(`nigh${PDI}${RLO}tly`)).to.equal(`nigh${RLO}tly`);
    expect(balanced(`b10${RLI}x`)).to.equal(`b10${RLI}x${PDI}`);
    expect(balanced(`a${RLI}b${PDI}${PDI}c\u2066`)).to.equal(`a${RLI}b${PDI}c\u2066${PDI}`);
    expect(balanced(`v${PS}${RLO}w\nx`)).to.equal(`v ${RLO}w x`);
    expect(isolated('main')).to.equal('main');
    expect(isolated(`release${RLO}`)).to.equal(`\u2068release${RLO}${PDI}`);
  });
});

describe('Dashboard: stored names holding bidi controls are isolated on every page', function () {
  this.timeout(60_000);
  let store: Store | undefined;
  let service: RunningService | undefined;
  const browser = useBrowser();
  const url = (): string => {
    if (!service) throw new Error('the service did not start');
    return service.url;
  };

  before(async function () {
    expectClientBuilt();
    store = await sqliteFixture.create();
    service = await startTestService(store);
    await seed(new ApiClient(service.url));
  });
  after(async function () {
    await service?.stop();
    if (store) await sqliteFixture.destroy(store);
  });

  const enc = encodeURIComponent;
  const last = buildName(BUILDS);
  const previous = buildName(BUILDS - 1);
  const build = `/dashboard/pipelines/${enc(PIPELINE)}/builds/${enc(last)}`;
  const PAGES: Array<[string, string, { drawn: boolean }]> = [
    ['the overview', '/dashboard/', { drawn: true }],
    ['the overview, searching', '/dashboard/?q=test_', { drawn: true }],
    ['a build', build, { drawn: true }],
    ['a build against another pipeline', `${build}?baseline_pipeline=${enc(OTHER_PIPELINE)}`, { drawn: true }],
    [
      'two builds compared',
      `/dashboard/compare?pipeline=${enc(PIPELINE)}&build=${enc(last)}&base_build=${enc(previous)}`,
      { drawn: true },
    ],
    [
      'a test variant, on its pipeline with a build ringed',
      `/dashboard/variants/${enc(HEAVY)}?pipeline=${enc(PIPELINE)}&build=${enc(last)}`,
      { drawn: true },
    ],
    ['a test variant outside a pipeline', `/dashboard/variants/${enc(SOLO)}`, { drawn: true }],
    ['a pipeline cost', `/dashboard/pipelines/${enc(PIPELINE)}/cost`, { drawn: true }],
    ['a pipeline noise', `/dashboard/pipelines/${enc(PIPELINE)}/noise`, { drawn: true }],
    [
      'a build that does not exist',
      `/dashboard/pipelines/${enc(PIPELINE)}/builds/${enc(`b99${RLO}`)}`,
      { drawn: false },
    ],
  ];

  for (const [what, path, { drawn }] of PAGES) {
    it(`${what}: every name isolated, the page's words in their order`, async function () {
      const { page, problems } = await browser.open();
      await page.goto(`${url()}${path}`);
      if (drawn) {
        await page.locator('main[data-state="ready"]').waitFor();
        expect(await page.locator('main').getAttribute('data-failed'), 'a section failed').to.equal(null);
        expect(problems).to.deep.equal({ consoleErrors: [], pageErrors: [], failedRequests: [] });
      }
      const findings = await bidiFindings(page);
      expect(findings.showsNames, 'the page shows a name holding a bidi control').to.equal(true);
      // stray: text nodes with a bidi control outside any isolate; reversed: text nodes of the page's own words
      // drawn out of order; title: the title, when it holds a name outside FSI…PDI.
      const { stray, reversed, title } = findings;
      expect({ reversed, stray, title }).to.deep.equal({ reversed: [], stray: [], title: null });
    });
  }

  it('shows the names as they are stored, less only the invisible controls that would break the isolation', async function () {
    const { page } = await browser.open();
    await page.goto(`${url()}${build}`);
    await page.locator('main[data-state="ready"]').waitFor();
    // The heading's names: the build's open isolate closed within its <bdi>.
    expect(await page.locator('h1 bdi').allTextContents()).to.deep.equal([`${last}${PDI}`, PIPELINE]);
    // The component's stray PDI dropped, the override kept: it applies inside the name only.
    const headings = await page.locator('#regressions thead th').allInnerTexts();
    const column = headings.findIndex((text) => text.replace(/[▲▼↕]/g, '').trim() === 'Component') + 1;
    const components = await page.locator(`#regressions tbody td:nth-child(${column})`).allTextContents();
    expect(components).to.deep.equal([`stor${RLO}age`]);
  });
});
