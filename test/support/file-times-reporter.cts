/**
 * Mocha's spec reporter, plus each test file's wall time: written to `MOCHA_FILE_TIMES` (a TSV: seconds, file; the
 * slowest first) and the slowest ten printed after the summary (and by scripts/test.sh at its end), so that a suite's cost is visible where it is paid.
 * A serial run's files are timed here (from a file's first suite's start to its last suite's end); a parallel run's
 * reporter sees no file, so its workers time theirs (root-hooks.ts) and append them to the same file first.
 * Used by scripts/test.sh: `mocha --reporter ./test/support/file-times-reporter.cts`.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import Mocha from 'mocha';

const SHOWN = 10;

class FileTimesReporter extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options);
    const seconds = new Map<string, number>();
    const started = new Map<Mocha.Suite, number>();
    runner.on(Mocha.Runner.constants.EVENT_SUITE_BEGIN, (suite: Mocha.Suite) => {
      if (suite.file !== undefined && suite.parent?.root === true) started.set(suite, performance.now());
    });
    runner.on(Mocha.Runner.constants.EVENT_SUITE_END, (suite: Mocha.Suite) => {
      const start = started.get(suite);
      if (start === undefined || suite.file === undefined) return;
      const file = relative(process.cwd(), suite.file);
      seconds.set(file, (seconds.get(file) ?? 0) + (performance.now() - start) / 1000);
    });
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      const out = process.env.MOCHA_FILE_TIMES;
      // What the file holds already: the files a parallel run's workers timed (root-hooks.ts), or an earlier run's.
      const before =
        out && existsSync(out)
          ? readFileSync(out, 'utf8')
              .split('\n')
              .filter((line) => line !== '')
          : [];
      const rows = [
        ...before.map((line): [string, number] => [line.split('\t')[1] ?? '', Number(line.split('\t')[0])]),
        ...seconds,
      ].sort((a, b) => b[1] - a[1]);
      if (out) writeFileSync(out, rows.map(([file, s]) => `${s.toFixed(1)}\t${file}\n`).join(''));
      const total = rows.reduce((sum, [, s]) => sum + s, 0);
      console.log(`\n  the slowest files of ${rows.length} (${(total / 60).toFixed(1)} min in all):`);
      for (const [file, s] of rows.slice(0, SHOWN)) console.log(`  ${s.toFixed(1).padStart(7)} s  ${file}`);
    });
  }
}

export = FileTimesReporter;
