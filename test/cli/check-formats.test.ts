import { expect } from 'chai';
import { junitFormat } from '../../src/cli/check/junit-format.js';
import { escapeMarkdown, markdownFormat } from '../../src/cli/check/markdown-format.js';
import type { Report } from '../../src/cli/check/report.js';
import type { FindingFromAnyVersion as Finding } from '../../src/wire/regression-report.js';
import { lacksBaseline } from '../../src/cli/check/report.js';
import { tableFormat } from '../../src/cli/check/table-format.js';
import type { ReportView } from '../../src/cli/check/wording.js';
import { cellsOf, parseJunit } from '../support/reports.js';

/**
 * The formats of `check` on hand-made reports, without a service: what each shows, that names holding Markdown or
 * XML syntax come out as typed (the JUnit read back by a real XML parser, Python's), and an older service's report.
 */

const ODD = 'test_odd[a|b <c> & "d" \'e\' *f* _g_ [h](i) é 漢字]';

const finding = (overrides: Partial<Finding>): Finding => ({
  item_variant: 'test_heavy',
  item: 'test_heavy',
  component: 'storage',
  context_h: null,
  machine_class: 'x86_64 Linux',
  session_h: 's010',
  resource: 'memory',
  value: 294.23,
  baseline: { n: 9, mean: 100.5, stddev: 1.2, median: 100.79, min: 98, max: 102 },
  limit: 110.77,
  change_pct: 191.9,
  likely_cause: 'memory',
  ...overrides,
});

const REPORT: Report = {
  pipeline: 'main',
  build: '10',
  resources: ['memory', 'total_time'],
  model: { name: 'robust', threshold: 4.5 },
  match: 'class',
  baseline: { kind: 'builds', pipeline: 'main', tags: [{ key: 'branch', value: 'main' }], units: ['7', '8', '9'] },
  compared: 8,
  insufficient_history: 2,
  no_baseline: 1,
  regressions: [
    finding({}),
    finding({
      item_variant: ODD,
      item: 'test_odd',
      component: '',
      resource: 'total_time',
      value: 2.94,
      baseline: { n: 3, mean: 1.5, stddev: 0.01, median: 1.51, min: 1.49, max: 1.52 },
      limit: 1.66,
      change_pct: 94.6,
      likely_cause: 'waiting',
    }),
  ],
  improvements: [
    finding({
      item_variant: 'test_faster',
      component: '',
      resource: 'total_time',
      value: 1.47,
      baseline: { n: 9, mean: 3, stddev: 0.02, median: 3.02, min: 2.9, max: 3.1 },
      limit: 2.75,
      change_pct: -51.3,
      likely_cause: 'compute',
    }),
  ],
};

const QUIET: Report = { ...REPORT, regressions: [], improvements: [] };

/** A lone shift of the run now: every test's wall time 38 % up, not seen before, so it does not fail. */
const SHIFT = {
  machine_class: 'x86_64 Linux',
  session_h: 's010',
  measure: 'wall_time',
  change_pct: 38.2,
  interval_pct: [35.1, 41.4],
  series: 120,
  seen_before: false,
  same_host: false,
  fails: false,
} as const satisfies NonNullable<Report['shifts']>[number];

/** A report of a verdict-era service asking for a re-run: one unconfirmed regression, one reference test, a shift. */
const CONFIRM: Report = {
  ...REPORT,
  verdict: 'confirm',
  error_control: { method: 'benjamini-hochberg', fdr: 0.01 },
  classes: { steady: 5, noisy: 2, multimodal: 1, spiky: 0, unresolved: 0 },
  shifts: [{ ...SHIFT, interval_pct: [...SHIFT.interval_pct] }],
  regressions: [],
  unconfirmed: [
    finding({
      item_variant: 'test_spiky[1, 2]',
      item: 'test_spiky',
      item_path: 'pkg.test_io',
      item_fs_loc: 'pkg/test_io.py',
      component: '',
      resource: 'total_time',
      value: 2.5,
      baseline: { n: 9, mean: 1.2, stddev: 0.3, median: 1.1, min: 0.9, max: 2.4 },
      limit: 2.2,
      change_pct: 127.3,
      likely_cause: 'waiting',
      series_class: 'spiky',
    }),
  ],
  rerun: [
    {
      item_variant: 'test_spiky[1, 2]',
      item: 'test_spiky',
      item_path: 'pkg.test_io',
      item_fs_loc: 'pkg/test_io.py',
      component: '',
      reason: 'confirm',
    },
    {
      item_variant: 'test_steady',
      item: 'test_steady',
      item_path: 'test_ref',
      item_fs_loc: 'test_ref.py',
      component: '',
      reason: 'reference',
    },
  ],
};

const VIEW: ReportView = {
  label: 'pipeline main build 10',
  dashboard: 'http://monitor:8181/dashboard',
  failsForNoBaseline: false,
};

/** A report as a service of an older version sends it: no match, baseline, no_baseline, machine_class, likely_cause. */
function older(report: Report): Report {
  const strip = ({ machine_class: _class, likely_cause: _cause, ...rest }: Finding): Finding => rest;
  const { match: _match, baseline: _baseline, no_baseline: _none, ...rest } = report;
  return { ...rest, regressions: report.regressions.map(strip), improvements: report.improvements.map(strip) };
}

describe('monitor-admin check: the report formats', function () {
  describe('table', function () {
    it('adds the likely cause column, and says in the summary what was judged and what the baseline was', function () {
      const text = tableFormat(REPORT, VIEW);
      const lines = text.trimEnd().split('\n');
      // An older service gives no verdict: any regression fails, as before.
      expect(lines.slice(0, 3)).to.deep.equal([
        'FAIL: 2 regressions in build 10 of main',
        '',
        'REGRESSIONS, worst first:',
      ]);
      expect(lines[3]).to.match(
        /^ {2}test \(variant\) +component +resource +baseline \(median, n\) +now +limit +change +cause$/,
      );
      expect(lines[4]).to.match(
        /^ {2}test_heavy +storage +memory +100\.79 MB \(n=9\) +294\.23 MB +110\.77 MB +\+191\.9 % +memory$/,
      );
      expect(lines.at(-1)).to.equal(
        'pipeline main build 10: 2 regressions, 1 improvement; 8 compared, 2 with insufficient history ' +
          '(1 with no baseline at all); baseline: 3 builds of main with branch=main, same machine class ' +
          '(memory, total_time; model robust, threshold 4.5)',
      );
    });

    it('names the one baseline build, or says there was none', function () {
      const one = tableFormat({ ...QUIET, baseline: { ...REPORT.baseline!, tags: [], units: ['4241'] } }, VIEW);
      expect(one).to.include('; baseline: build 4241 of main, same machine class (');
      const none = tableFormat({ ...QUIET, baseline: { ...REPORT.baseline!, units: [] }, match: 'any' }, VIEW);
      expect(none).to.include('; baseline: no baseline build of main with branch=main, any machine (');
    });

    it("an older service's report: no cause, no baseline wording", function () {
      const text = tableFormat(older(REPORT), VIEW);
      expect(text.split('\n')[4]).to.match(/\+191\.9 % +-$/);
      expect(text.trimEnd().split('\n').at(-1)).to.equal(
        'pipeline main build 10: 2 regressions, 1 improvement; 8 compared, 2 with insufficient history ' +
          '(memory, total_time; model robust, threshold 4.5)',
      );
    });
  });

  describe('markdown', function () {
    it('the verdict first, a row per regression with a link, the improvements folded away, a footer', function () {
      const lines = markdownFormat(REPORT, VIEW).trimEnd().split('\n');
      expect(lines[0]).to.equal('### ❌ 2 regressions in build 10 of main');
      const table = lines.filter((line) => line.startsWith('| '));
      expect(cellsOf(table[0] ?? '')).to.deep.equal([
        'Test',
        'Component',
        'Resource',
        'Baseline median (n)',
        'Now',
        'Change',
        'Likely cause',
      ]);
      expect(cellsOf(table[2] ?? '')).to.deep.equal([
        '[test_heavy](http://monitor:8181/dashboard/variants/test_heavy)',
        'storage',
        'memory',
        '100.79 MB (9)',
        '294.23 MB',
        '+191.9 %',
        'memory',
      ]);
      const odd = cellsOf(table[3] ?? '');
      expect(odd).to.have.length(7);
      expect(odd[0]).to.equal(
        `[${ODD}](http://monitor:8181/dashboard/variants/${encodeURIComponent(ODD).replace('(', '%28').replace(')', '%29')})`,
      );
      expect(odd.slice(1)).to.deep.equal(['-', 'total_time', '1.51 s (3)', '2.94 s', '+94.6 %', 'waiting']);
      const details = lines.indexOf('<details><summary>1 improvement</summary>');
      expect(details).to.be.above(0);
      expect(lines.slice(details).indexOf('</details>')).to.be.above(0);
      expect(cellsOf(lines[details + 4] ?? '')[0]).to.equal(
        '[test_faster](http://monitor:8181/dashboard/variants/test_faster)',
      );
      expect(lines.at(-1)).to.equal(
        '[dashboard](http://monitor:8181/dashboard/pipelines/main/builds/10) · baseline: 3 builds of main with ' +
          'branch=main, same machine class · memory, total\\_time; model robust, threshold 4.5 · 8 compared, 2 with ' +
          'insufficient history \\(1 with no baseline at all\\)',
      );
    });

    it('escapes every character that would make a name a link, emphasis, HTML or a new cell', function () {
      const escaped = escapeMarkdown(ODD);
      expect(escaped).to.equal('test\\_odd\\[a\\|b \\<c\\> \\& "d" \'e\' \\*f\\* \\_g\\_ \\[h\\]\\(i\\) é 漢字\\]');
      expect(escapeMarkdown('two\nlines')).to.equal('two lines');
    });

    it('no regression: a ✅ verdict, no table; nothing judged is said', function () {
      const lines = markdownFormat(QUIET, VIEW).trimEnd().split('\n');
      expect(lines[0]).to.equal('### ✅ No regression in build 10 of main');
      expect(lines.some((line) => line.startsWith('|'))).to.equal(false);
      const nothing = markdownFormat({ ...QUIET, compared: 0, insufficient_history: 8 }, VIEW);
      expect(nothing).to.include('\nNothing was judged: 0 compared, 8 with insufficient history');
      const failing = markdownFormat({ ...QUIET, compared: 0 }, { ...VIEW, failsForNoBaseline: true });
      expect(failing.split('\n')[0]).to.equal('### ❌ No baseline for build 10 of main');
    });

    it('a session: named in the verdict with its build', function () {
      const text = markdownFormat(QUIET, { ...VIEW, label: 'session s010' });
      expect(text.split('\n')[0]).to.equal('### ✅ No regression in session s010 \\(build 10 of main\\)');
    });
  });

  describe('junit', function () {
    it('a failing case per regression, a passing one per improvement, counted; every name as typed', function () {
      const junit = parseJunit(junitFormat(REPORT, VIEW));
      expect(junit.root).to.equal('testsuites');
      expect(junit.suites).to.have.length(1);
      const [suite] = junit.suites;
      expect(suite?.attributes).to.deep.include({ name: 'monitor-server regressions', tests: '3', failures: '2' });
      expect(suite?.properties).to.deep.equal({
        verdict: 'fail: 2 regressions in build 10 of main',
        target: 'build 10 of main',
        rule: 'memory, total_time; model robust, threshold 4.5',
        baseline: '3 builds of main with branch=main, same machine class',
      });
      expect(suite?.cases.map((c) => [c.classname, c.name, c.failure !== null])).to.deep.equal([
        ['storage', 'test_heavy [memory]', true],
        ['(no component)', `${ODD} [total_time]`, true],
        ['(no component)', 'test_faster [total_time]', false],
      ]);
      expect(suite?.cases[0]?.failure?.message).to.equal(
        'regression: memory 294.23 MB, baseline median 100.79 MB (n=9), limit 110.77 MB, +191.9 %, likely cause memory',
      );
      expect(suite?.cases[2]?.out).to.match(/^improvement: total_time 1\.47 s, baseline median 3\.02 s/);
    });

    it('nothing found: one passing case saying how many were compared; failing when no baseline fails the gate', function () {
      const quiet = parseJunit(junitFormat(QUIET, VIEW)).suites[0];
      expect(quiet?.attributes).to.deep.include({ tests: '1', failures: '0' });
      expect(quiet?.cases).to.have.length(1);
      expect(quiet?.cases[0]).to.deep.include({
        classname: 'monitor-server',
        name: '8 compared, no regression',
        failure: null,
      });
      const none = { ...QUIET, compared: 0, baseline: { ...REPORT.baseline!, units: [] } };
      const failing = parseJunit(junitFormat(none, { ...VIEW, failsForNoBaseline: true })).suites[0];
      expect(failing?.attributes).to.deep.include({ tests: '1', failures: '1' });
      expect(failing?.cases[0]?.failure?.message).to.match(/^no baseline: 0 compared, .*no baseline build of main/);
    });

    it('characters XML cannot hold become U+FFFD; line breaks survive in attributes', function () {
      const nasty = finding({ item_variant: 'a\u0001b\nc\u{1F600}', component: 'x"y' });
      const junit = parseJunit(junitFormat({ ...QUIET, regressions: [nasty] }, VIEW));
      expect(junit.suites[0]?.cases[0]).to.deep.include({ classname: 'x"y', name: 'a\uFFFDb\nc\u{1F600} [memory]' });
    });
  });

  describe('the verdict of a verdict-era service: pass, fail, or confirm by a re-run', function () {
    it('table: the verdict first, then the shift headline, the unconfirmed list, the classes and error control', function () {
      const lines = tableFormat(CONFIRM, VIEW).trimEnd().split('\n');
      expect(lines[0]).to.equal('CONFIRM: re-run 2 tests to confirm 1 unconfirmed regression in build 10 of main');
      expect(lines[1]).to.equal(
        'every test 38 % slower on this runner (wall time, 95 %: 35–41 %): the runner, or a change that slows ' +
          'everything — fails only if seen again',
      );
      const heading = lines.findIndex((line) => line.startsWith('UNCONFIRMED, worst first'));
      expect(heading).to.be.above(1);
      expect(lines[heading + 2]).to.match(
        /^ {2}test_spiky\[1, 2\] +- +total_time +1\.10 s \(n=9\) +2\.50 s .* waiting$/,
      );
      expect(lines.some((line) => line.startsWith('REGRESSIONS'))).to.equal(false);
      expect(lines.at(-1)).to.equal(
        'pipeline main build 10: 0 regressions, 1 unconfirmed, 1 improvement; 8 compared (5 steady, 2 noisy, 1 ' +
          'multimodal) at a 1 % false discovery rate, 2 with insufficient history (1 with no baseline at all); ' +
          'baseline: 3 builds of main with branch=main, same machine class (memory, total_time; model robust, ' +
          'threshold 4.5)',
      );
    });

    it('a confirm of a build that fails already says so: the re-run only completes its report', function () {
      const both = { ...CONFIRM, regressions: REPORT.regressions.slice(0, 1) };
      expect(tableFormat(both, VIEW).split('\n')[0]).to.equal(
        'CONFIRM: re-run 2 tests to confirm 1 unconfirmed regression in build 10 of main (it fails already: 1 regression)',
      );
      expect(markdownFormat(both, VIEW).split('\n')[0]).to.equal(
        '### 🔁 Re-run 2 tests to confirm 1 unconfirmed regression in build 10 of main \\(it fails already: 1 regression\\)',
      );
      const junit = parseJunit(junitFormat(both, VIEW));
      expect(junit.suite).to.deep.include({ failures: '1', skipped: '1' });
    });

    it('table: a pass and a failing shift; several runs each name their session', function () {
      expect(tableFormat({ ...CONFIRM, verdict: 'pass', unconfirmed: [], shifts: [] }, VIEW).split('\n')[0]).to.equal(
        'PASS: no regression in build 10 of main',
      );
      const again = { ...SHIFT, interval_pct: [35.1, 41.4] as [number, number], seen_before: true, fails: true };
      const failing = tableFormat({ ...CONFIRM, verdict: 'fail', unconfirmed: [], shifts: [again] }, VIEW);
      expect(failing.split('\n').slice(0, 2)).to.deep.equal([
        'FAIL: every test 38 % slower, seen again, in build 10 of main',
        'every test 38 % slower on this runner (wall time, 95 %: 35–41 %): seen again: a change that slows ' +
          'everything (or every runner slower now) — fails the gate',
      ]);
      const faster = {
        ...SHIFT,
        session_h: 's011',
        measure: 'cpu_time' as const,
        change_pct: -4.25,
        interval_pct: [-6, -2.5] as [number, number],
      };
      const two = tableFormat({ ...CONFIRM, shifts: [{ ...SHIFT, interval_pct: [35.1, 41.4] }, faster] }, VIEW).split(
        '\n',
      );
      expect(two[1]).to.match(/^every test 38 % slower on the runner of session s010 \(wall time/);
      expect(two[2]).to.equal(
        'every test 4.3 % faster on the runner of session s011 (CPU time, 95 %: 2.5–6.0 %): the runner, or a change ' +
          'that speeds everything up — fails only if seen again',
      );
    });

    it('markdown: the verdict as the heading, the shift in bold, the unconfirmed in a table of their own', function () {
      const lines = markdownFormat(CONFIRM, VIEW).trimEnd().split('\n');
      expect(lines[0]).to.equal('### 🔁 Re-run 2 tests to confirm 1 unconfirmed regression in build 10 of main');
      expect(lines[2]).to.equal(
        '**every test 38 % slower on this runner \\(wall time, 95 %: 35–41 %\\): the runner, or a change that slows ' +
          'everything — fails only if seen again**',
      );
      const intro = lines.findIndex((line) => line.startsWith('1 unconfirmed regression: a re-run'));
      expect(intro).to.be.above(2);
      expect(cellsOf(lines[intro + 4] ?? '')[0]).to.equal(
        `[test_spiky[1, 2]](http://monitor:8181/dashboard/variants/${encodeURIComponent('test_spiky[1, 2]')})`,
      );
      expect(lines.at(-1)).to.match(
        / · 8 compared \\\(5 steady, 2 noisy, 1 multimodal\\\) at a 1 % false discovery rate, /,
      );
    });

    it('junit: an unconfirmed regression is a skipped case with its message, a lone shift a passing one; the verdict a property', function () {
      const junit = parseJunit(junitFormat(CONFIRM, VIEW));
      expect(junit.suite).to.deep.include({ tests: '3', failures: '0', skipped: '1' });
      expect(junit.properties.verdict).to.equal(
        'confirm: re-run 2 tests to confirm 1 unconfirmed regression in build 10 of main',
      );
      expect(junit.cases.map((c) => [c.classname, c.name, c.failure !== null, c.skipped !== null])).to.deep.equal([
        ['x86_64 Linux', 'every test [wall_time]', false, false],
        ['(no component)', 'test_spiky[1, 2] [total_time]', false, true],
        ['(no component)', 'test_faster [total_time]', false, false],
      ]);
      expect(junit.cases[1]?.skipped).to.equal(
        'unconfirmed regression, re-run to confirm: total_time 2.50 s, baseline median 1.10 s (n=9), limit 2.20 s, ' +
          '+127.3 %, likely cause waiting',
      );
      expect(junit.cases[0]?.out).to.match(/^every test 38 % slower on this runner/);
      const again = { ...SHIFT, interval_pct: [35.1, 41.4] as [number, number], seen_before: true, fails: true };
      const failing = parseJunit(junitFormat({ ...CONFIRM, verdict: 'fail', unconfirmed: [], shifts: [again] }, VIEW));
      expect(failing.suite).to.deep.include({ tests: '2', failures: '1', skipped: '0' });
      expect(failing.cases[0]?.failure?.type).to.equal('runner shift');
    });
  });

  describe('a shift in both runs of the build, on the same host', function () {
    // The first run and its re-run on the same runner, both 38 % slower: that runner, not the code; the build passes.
    const sameHost = { ...SHIFT, interval_pct: [35.1, 41.4] as [number, number], same_host: true };
    const report: Report = {
      ...CONFIRM,
      verdict: 'pass',
      unconfirmed: [],
      shifts: [sameHost, { ...sameHost, session_h: 's011', change_pct: 37.6 }],
    };
    const line =
      'every test 38 % slower on the runner of session s010 (wall time, 95 %: 35–41 %): seen in both runs on the same ' +
      'host — a slow runner, not the code (a re-run on another runner would tell them apart)';

    it('table, markdown and junit say a slow runner, not the code; the build passes', function () {
      const table = tableFormat(report, VIEW).split('\n');
      expect(table[0]).to.equal('PASS: no regression in build 10 of main');
      expect(table[1]).to.equal(line);
      expect(table[2]).to.match(
        /^every test 38 % slower on the runner of session s011 .*: seen in both runs on the same host/,
      );
      expect(markdownFormat(report, VIEW).split('\n')[2]).to.equal(`**${escapeMarkdown(line)}**`);
      const junit = parseJunit(junitFormat(report, VIEW));
      expect(junit.suite).to.deep.include({ failures: '0' });
      expect(junit.cases[0]?.out).to.equal(line);
    });
  });

  describe('no baseline to speak of (--fail-on-no-baseline)', function () {
    it('no baseline unit at all, or nothing judged for want of history', function () {
      expect(lacksBaseline(REPORT)).to.equal(false);
      expect(lacksBaseline({ ...QUIET, baseline: { ...REPORT.baseline!, units: [] } })).to.equal(true);
      expect(lacksBaseline({ ...QUIET, compared: 0, insufficient_history: 4 })).to.equal(true);
      expect(lacksBaseline(older({ ...QUIET, compared: 0, insufficient_history: 4 }))).to.equal(true);
      expect(lacksBaseline({ ...QUIET, compared: 0, insufficient_history: 0 })).to.equal(false);
    });
  });
});
