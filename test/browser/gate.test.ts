import { expect } from 'chai';
import type { Page } from 'playwright-core';
import type { RunningService } from '../../src/server.js';
import type { Store } from '../../src/store/store.js';
import { column, expectClientBuilt, NO_PROBLEMS, ready, useBrowser } from '../support/browser.js';
import { aContext, aMetric, ciTags } from '../support/builders.js';
import { startTestService } from '../support/service.js';
import { sqliteFixture } from '../support/stores.js';

/**
 * The gate a team can leave on, as the build and variant pages show it (issue 32), on the real service over data whose
 * answer is known — three pipelines of 12 builds on one machine, every test steady (±2 %) but where said:
 *
 * - "gate": build 12 ran on a slow runner — every time 38 % longer — and test_bloat holds 3× its memory there, the
 *   two tests of long names 2× and 1.8× (regressions). The shift is new (builds 10 and 11 were not slow): it is
 *   reported and does not fail; the memory does.
 * - "slow": builds 10, 11 and 12 all 40 % slower: seen before, build 12's shift fails the gate.
 * - "flaky": test_spiky's time is 3× its level in build 5, and again in build 12: a single run cannot tell a
 *   regression from its spike, it is a candidate to confirm by a re-run.
 *
 * Among the tests of "gate", parametrized names long and short, and test_modes, whose memory is 50 or 80 MB from build
 * to build (multimodal).
 */

const BUILDS = 12;
const CONTEXT = aContext();
const SHORT_NAME = 'test_case_1865[p3]';
const LONG_NAME = 'test_storage_roundtrip_of_a_document[compressed-zstd-level-19-with-dictionary-and-checksums]';
/** Every test steady: its level, ±2 % from build to build, each test in its own phase. */
const steady = (level: number, build: number, phase: number) => level * (1 + 0.02 * Math.sin(build * 1.7 + phase));

interface TestSpec {
  variant: string;
  time: number;
  memory: number;
  /** The time of build `b`, as a factor of the level (1 by default). */
  timeAt?: (build: number) => number;
  memoryAt?: (build: number) => number;
}

const UNIT_TESTS: TestSpec[] = Array.from({ length: 12 }, (_, i) => ({
  variant: `test_unit_${i}`,
  time: 0.3 + 0.15 * i,
  memory: 20 + 3 * i,
}));

const PIPELINES: Record<
  string,
  {
    tests: TestSpec[];
    runner: (build: number) => number;
    process?: (build: number) => number;
    /** The runner's contention: each CPU second of a test took this many wall seconds more (CPU time unchanged). */
    contention?: (build: number) => number;
  }
> = {
  gate: {
    tests: [
      ...UNIT_TESTS,
      { variant: SHORT_NAME, time: 0.8, memory: 30, memoryAt: (b) => (b === BUILDS ? 2 : 1) },
      { variant: LONG_NAME, time: 1.1, memory: 35, memoryAt: (b) => (b === BUILDS ? 1.8 : 1) },
      { variant: 'test_bloat', time: 0.6, memory: 40, memoryAt: (b) => (b === BUILDS ? 3 : 1) },
      { variant: 'test_modes', time: 0.5, memory: 50, memoryAt: (b) => (b % 2 === 0 ? 1.6 : 1) },
    ],
    runner: (b) => (b === BUILDS ? 1.38 : 1),
  },
  slow: { tests: UNIT_TESTS, runner: (b) => (b >= BUILDS - 2 ? 1.4 : 1) },
  flaky: {
    tests: [
      ...UNIT_TESTS,
      { variant: 'test_spiky', time: 0.7, memory: 25, timeAt: (b) => ([5, 12].includes(b) ? 3 : 1) },
    ],
    runner: () => 1,
  },
  // Memory is the whole process (issue 41): from build 12 a dependency keeps 10 MB in every test, and test_grown
  // holds 40 MB more of its own.
  process: {
    tests: [
      ...UNIT_TESTS,
      { variant: 'test_grown', time: 0.6, memory: 30, memoryAt: (b) => (b === BUILDS ? 70 / 30 : 1) },
    ],
    runner: () => 1,
    process: (b) => (b === BUILDS ? 10 : 0),
  },
  // A busy runner (issue 41): every fourth build, and the last, on cores shared with other work, each CPU second of
  // a test taking 60 % more wall time.
  busy: { tests: UNIT_TESTS, runner: () => 1, contention: (b) => (b % 4 === 0 || b === BUILDS ? 0.6 : 0) },
};

/** The data set, as one POST /bulk body (NDJSON). */
function seedLines(): string {
  const lines: unknown[] = [{ type: 'context', ...CONTEXT }];
  let day = 0;
  for (const [pipeline, { tests, runner, process, contention }] of Object.entries(PIPELINES)) {
    for (let b = 1; b <= BUILDS; b += 1) {
      day += 1;
      const sessionH = `${pipeline}-${String(b).padStart(3, '0')}`;
      lines.push({
        type: 'session',
        session_h: sessionH,
        run_date: new Date(Date.UTC(2026, 9, 1) + day * 3_600_000).toISOString().replace('Z', ''),
        description: Object.fromEntries(ciTags(pipeline, String(b)).map((t) => [t.key, t.value])),
      });
      tests.forEach((test, i) => {
        const time = steady(test.time, b, i) * runner(b) * (test.timeAt?.(b) ?? 1);
        lines.push({
          type: 'metric',
          ...aMetric({
            session_h: sessionH,
            context_h: CONTEXT.h,
            item: test.variant.replace(/\[.*/, ''),
            item_variant: test.variant,
            item_path: 'tests.test_gate',
            item_fs_loc: 'tests/test_gate.py',
            component: 'gate',
            total_time: time + time * 0.9 * (contention?.(b) ?? 0),
            user_time: time * 0.85,
            kernel_time: time * 0.05,
            cpu_usage: 0.9,
            mem_usage: steady(test.memory, b, i + 1) * (test.memoryAt?.(b) ?? 1) + (process?.(b) ?? 0),
          }),
        });
      });
    }
  }
  return lines.map((line) => JSON.stringify(line)).join('\n');
}

/** The top of an element on the page, in CSS pixels. */
const topOf = async (page: Page, selector: string): Promise<number> => {
  const box = await page.locator(selector).first().boundingBox();
  expect(box, `${selector} is drawn`).to.not.equal(null);
  return box?.y ?? NaN;
};

/**
 * How many lines a test's name takes where the page shows it (the line boxes of its inline element), and how wide its
 * widest line is, in the cell of `section`'s table showing `name`.
 */
function linesOf(page: Page, section: string, name: string): Promise<{ lines: number; text: string }> {
  return page
    .locator(`#${section} td .test-name`)
    .filter({ hasText: name })
    .first()
    .evaluate((element) => {
      // One rect per line box; a rect per <wbr> or part on the same line shares its top.
      const tops = new Set([...element.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
      return { lines: tops.size, text: (element as HTMLElement).innerText };
    });
}

describe('Dashboard (/dashboard/): the gate — verdict first, the runner shift as a headline, readable names, series classes', function () {
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
    const response = await fetch(`${url()}/api/v1/bulk`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-ndjson' },
      body: seedLines(),
    });
    expect(response.status, await response.text()).to.equal(200);
  });
  after(async function () {
    await service?.stop();
    if (store) await sqliteFixture.destroy(store);
  });

  it('build page: the verdict, then the runner’s shift as a headline (new: it does not fail), before the rows', async function () {
    const { page, problems, screenshot } = await browser.open();
    await page.goto(`${url()}/dashboard/pipelines/gate/builds/${BUILDS}`);
    await ready(page);
    const verdict = page.locator('#summary p.verdict');
    expect(await verdict.getAttribute('data-verdict')).to.equal('fail');
    expect(await verdict.innerText()).to.match(/^FAIL\s+3 regressions\.$/);

    const wall = page.locator('#summary li.shift[data-measure="wall_time"]');
    expect(await wall.count(), 'one shift of wall time').to.equal(1);
    const headline = await wall.locator('.headline').innerText();
    const slower =
      /^Every test (\d+(?:\.\d+)?) % slower on this runner \(wall time\): the runner, or a change that slows everything\.$/.exec(
        headline,
      );
    expect(slower, headline).to.not.equal(null);
    expect(Number(slower?.[1])).to.be.within(33, 43);
    expect(await wall.getAttribute('data-fails')).to.equal('false');
    expect(await wall.locator('.gate').innerText()).to.match(/^Alone, it does not fail the gate/);

    // In the order a reader needs: the verdict, the shift, the summary's lines, then the rows.
    const order = [
      await topOf(page, '#summary p.verdict'),
      await topOf(page, '#summary li.shift'),
      await topOf(page, '#summary p.baseline'),
      await topOf(page, '#summary p.error-control'),
      await topOf(page, '#regressions tbody tr'),
      await topOf(page, '#improvements'),
    ];
    expect(order, 'verdict, shift, baseline, error control, regressions, improvements').to.deep.equal(
      [...order].sort((a, b) => a - b),
    );
    expect(await page.locator('#summary p.baseline').innerText()).to.include('Compared with builds 1–11 of gate');
    expect(await page.locator('#summary p.error-control').innerText()).to.match(
      /^Findings chosen among those [\d,]+ by Benjamini–Hochberg at a false discovery rate of [\d.]+ %/,
    );
    const classes = await page.locator('#summary p.classes').innerText();
    expect(classes).to.match(/^Series judged: \d+ steady, \d+ noisy, \d+ multimodal, \d+ spiky/);
    expect(Number(/(\d+) multimodal/.exec(classes)?.[1]), 'test_modes’s memory').to.be.at.least(1);

    // The slow runner is taken out: the regressions are memory, no test's time.
    expect(await column(page, 'regressions', 'Test')).to.deep.equal(['test_bloat', SHORT_NAME, LONG_NAME]);
    expect(await column(page, 'regressions', 'Resource')).to.deep.equal(['Memory', 'Memory', 'Memory']);
    expect(await column(page, 'regressions', 'Series')).to.deep.equal(['steady', 'steady', 'steady']);
    expect(await page.locator('#unconfirmed .empty').innerText()).to.equal('No candidate to confirm.');
    await screenshot('dashboard-gate-build');
    expect(problems).to.deep.equal(NO_PROBLEMS);
  });

  it("build page: every test's memory +10 MB is one headline for the process; test_grown's own +40 MB the one regression", async function () {
    const { page, problems } = await browser.open();
    await page.goto(`${url()}/dashboard/pipelines/process/builds/${BUILDS}`);
    await ready(page);
    expect(await page.locator('#summary p.verdict').innerText()).to.match(/^FAIL\s+1 regression\.$/);
    const moves = page.locator('#summary li.process-memory');
    expect(await moves.count(), 'one headline').to.equal(1);
    expect(await moves.locator('strong').innerText()).to.match(
      /^The process: every test \+(9\.[5-9]|10) MB in this run\.$/,
    );
    expect(await moves.innerText()).to.include("taken out of every test's memory before judging, not a finding");
    expect(await column(page, 'regressions', 'Test')).to.deep.equal(['test_grown']);
    expect(await column(page, 'regressions', 'Resource')).to.deep.equal(['Memory']);
    expect(await page.locator('#improvements tbody tr').count(), 'no improvement').to.equal(0);
    expect(problems).to.deep.equal(NO_PROBLEMS);
  });

  it('build page: a busy runner is one headline for its contention, and the build passes', async function () {
    const { page, problems } = await browser.open();
    await page.goto(`${url()}/dashboard/pipelines/busy/builds/${BUILDS}`);
    await ready(page);
    expect(await page.locator('#summary p.verdict').getAttribute('data-verdict')).to.equal('pass');
    const busy = page.locator('#summary li.contention');
    expect(await busy.count(), 'one headline').to.equal(1);
    expect(await busy.locator('strong').innerText()).to.match(
      /^The runner: CPU-bound tests waited for the CPU, \+(5[5-9]|6[0-5]) % of each CPU second in this run\.$/,
    );
    expect(await busy.innerText()).to.include("taken out of every test's wall time by the CPU time that test used");
    expect(await page.locator('#regressions tbody tr').count(), 'no regression').to.equal(0);
    expect(problems).to.deep.equal(NO_PROBLEMS);
  });

  it('build page: a shift seen in the builds before fails the gate, and says so', async function () {
    const { page, problems } = await browser.open();
    await page.goto(`${url()}/dashboard/pipelines/slow/builds/${BUILDS}`);
    await ready(page);
    const verdict = page.locator('#summary p.verdict');
    expect(await verdict.getAttribute('data-verdict')).to.equal('fail');
    expect(await verdict.innerText()).to.match(/runner shifts? seen twice/);
    const wall = page.locator('#summary li.shift[data-measure="wall_time"]');
    expect(await wall.getAttribute('data-fails')).to.equal('true');
    expect(await wall.locator('.headline').innerText()).to.match(
      /^Every test (39|40|41)(\.\d+)? % slower on this runner/,
    );
    expect(await wall.locator('.gate').innerText()).to.match(/^It fails the gate/);
    expect(await topOf(page, '#summary li.shift')).to.be.below(await topOf(page, '#regressions'));
    expect(problems).to.deep.equal(NO_PROBLEMS);
  });

  it('build page: candidates a single run cannot confirm — "re-run N tests to confirm", and the tests to re-run', async function () {
    const { page, problems, screenshot } = await browser.open();
    await page.goto(`${url()}/dashboard/pipelines/flaky/builds/${BUILDS}`);
    await ready(page);
    const verdict = page.locator('#summary p.verdict');
    expect(await verdict.getAttribute('data-verdict')).to.equal('confirm');
    // The candidate, and steady tests that tell how fast the re-run's runner is.
    expect(await verdict.innerText()).to.match(
      /^CONFIRM\s+re-run \d+ tests to confirm \(1 candidate, and \d+ steady tests? /,
    );
    expect(await page.locator('#summary li.shift').count(), 'no shift').to.equal(0);
    expect(await page.locator('#regressions .empty').innerText()).to.equal('No regression.');
    // Its wall time and its user time (judged by default) both leapt: one candidate test, a row per resource.
    expect([...new Set(await column(page, 'unconfirmed', 'Test'))]).to.deep.equal(['test_spiky']);
    expect([...new Set(await column(page, 'unconfirmed', 'File'))]).to.deep.equal(['tests/test_gate.py']);
    expect([...new Set(await column(page, 'unconfirmed', 'Series'))]).to.deep.equal(['spiky']);
    expect(await page.locator('#unconfirmed p.rerun').innerText()).to.match(/^Re-run \d+ tests in this build/);
    const rerun = page.locator('#unconfirmed details.rerun-list');
    await rerun.locator('summary').click();
    expect(await rerun.locator('li[data-reason="confirm"]').innerText()).to.equal(
      'tests/test_gate.py test_spiky (gate)',
    );
    expect(await topOf(page, '#summary p.verdict')).to.be.below(await topOf(page, '#unconfirmed tbody tr'));
    await screenshot('dashboard-gate-confirm');
    expect(problems).to.deep.equal(NO_PROBLEMS);
  });

  it('build page: standing regressions (held since an earlier build) in a section of their own, hidden when none', async function () {
    const { page, problems } = await browser.open();
    await page.goto(`${url()}/dashboard/pipelines/gate/builds/${BUILDS}`);
    await ready(page);
    expect(await page.locator('#standing').isHidden(), 'no standing regression: no section').to.equal(true);
    // The real answer, with its first regression moved to the standing ones, since build 3.
    await page.route('**/api/v1/pipelines/gate/builds/*/regressions*', async (route) => {
      const response = await route.fetch();
      const report = (await response.json()) as { regressions: Array<Record<string, unknown>>; standing: unknown[] };
      const [held] = report.regressions.splice(0, 1);
      report.standing = [{ ...held, since: { unit: '3', session_h: 's3', scm_ref: 'f00dfeed'.repeat(5) } }];
      await route.fulfill({ response, json: report });
    });
    await page.reload();
    await ready(page);
    expect(await page.locator('#standing').isHidden()).to.equal(false);
    expect(await column(page, 'standing', 'Since')).to.deep.equal(['build 3 (f00dfeedf0…)']);
    expect(await page.locator('#standing tbody tr.regression.standing').count()).to.equal(1);
    expect(problems).to.deep.equal(NO_PROBLEMS);
  });

  it('build page: a report without the gate’s members (an older service) is shown as before', async function () {
    const { page, problems } = await browser.open();
    // The real answer, less what issue 32 added: what an older service sends.
    await page.route('**/api/v1/pipelines/gate/builds/*/regressions*', async (route) => {
      const response = await route.fetch();
      const without = (record: Record<string, unknown>, members: readonly string[]) =>
        Object.fromEntries(Object.entries(record).filter(([key]) => !members.includes(key)));
      const report = without((await response.json()) as Record<string, unknown>, [
        'verdict',
        'error_control',
        'classes',
        'shifts',
        'unconfirmed',
        'rerun',
      ]);
      for (const list of ['regressions', 'improvements'])
        report[list] = (report[list] as Array<Record<string, unknown>>).map((finding) =>
          without(finding, ['series_class', 'p_value', 'runs', 'item_path', 'item_fs_loc', 'shift_pct']),
        );
      await route.fulfill({ response, json: report });
    });
    await page.goto(`${url()}/dashboard/pipelines/gate/builds/${BUILDS}`);
    await ready(page);
    expect(await page.locator('#summary').isHidden(), 'no verdict to show').to.equal(true);
    expect(await page.locator('#unconfirmed').isHidden(), 'no candidates to show').to.equal(true);
    expect(await page.locator('#regressions p.baseline').innerText()).to.include('Compared with builds 1–11 of gate');
    expect(await page.locator('#regressions p.judged').innerText()).to.match(/test × resource judged/);
    expect(await column(page, 'regressions', 'Test')).to.include('test_bloat');
    const headings = await page.locator('#regressions thead th').allInnerTexts();
    expect(headings.map((h) => h.replace(/[▲▼↕]/g, '').trim())).to.not.include('Series');
    expect(problems).to.deep.equal(NO_PROBLEMS);
  });

  for (const width of [1280, 760]) {
    it(`build page, ${width} px wide: a parametrized name stays on one line, a long one on two at most`, async function () {
      const { page, problems, screenshot } = await browser.open({ viewport: { width, height: 900 } });
      await page.goto(`${url()}/dashboard/pipelines/gate/builds/${BUILDS}`);
      await ready(page);
      // The regressions (a table of many columns) and the heaviest tests (every test of the build).
      for (const section of ['regressions', 'heaviest-memory', 'heaviest-time']) {
        const short = await linesOf(page, section, SHORT_NAME);
        expect(short.text, 'the name reads as it is').to.equal(SHORT_NAME);
        expect(short.lines, `${SHORT_NAME} in #${section}`).to.equal(1);
        const long = await linesOf(page, section, LONG_NAME);
        expect(long.text).to.equal(LONG_NAME);
        expect(long.lines, `${LONG_NAME} in #${section}`).to.be.within(1, 2);
      }
      // The page itself never scrolls sideways: a table wider than it scrolls in its own box.
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow, 'the page is not wider than the window').to.be.at.most(0);
      await screenshot(`dashboard-gate-names-${width}`);
      expect(problems).to.deep.equal(NO_PROBLEMS);
    });
  }

  it('variant page: each resource’s history with its class — steady, multimodal with its levels, spiky', async function () {
    const { page, problems, screenshot } = await browser.open();
    await page.goto(`${url()}/dashboard/variants/test_modes?pipeline=gate&context=${CONTEXT.h}&component=gate`);
    await ready(page);
    const memory = page.locator('figure.plot[data-resource="memory"]');
    expect(await memory.getAttribute('data-series-class')).to.equal('multimodal');
    const line = await memory.locator('p.series-class').innerText();
    expect(line).to.match(
      /^History: multimodal \(.*\) — 2 levels: (49|50)(\.\d+)? MB ± [\d.]+ % \(6 builds\), (80|81)(\.\d+)? MB ± [\d.]+ % \(5 builds\); the 11 builds before build 12\.$/,
    );
    expect(await page.locator('figure.plot[data-resource="total_time"]').getAttribute('data-series-class')).to.equal(
      'steady',
    );
    expect(await page.locator('figure.plot[data-resource="total_time"] p.series-class').innerText()).to.match(
      /^History: steady/,
    );
    // The class is shown under the plot's title, above the plot.
    expect(await topOf(page, 'figure.plot[data-resource="memory"] p.series-class')).to.be.below(
      await topOf(page, 'figure.plot[data-resource="memory"] canvas'),
    );
    await screenshot('dashboard-gate-variant');

    // Opened from build 8: the class of the 7 builds before it.
    await page.goto(
      `${url()}/dashboard/variants/test_spiky?pipeline=flaky&context=${CONTEXT.h}&component=gate&build=8`,
    );
    await ready(page);
    const time = page.locator('figure.plot[data-resource="total_time"]');
    expect(await time.getAttribute('data-series-class')).to.equal('spiky');
    expect(await time.locator('p.series-class').innerText()).to.match(/, 1 spike; the 7 builds before build 8\.$/);
    expect(problems).to.deep.equal(NO_PROBLEMS);
  });
});
