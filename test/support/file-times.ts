/**
 * A root hook plugin that times each test file, for `mocha --parallel` (scripts/test.sh): each worker runs one file
 * at a time, and its root `beforeAll` / `afterAll` hooks run before and after that file's suites, so the time between
 * them is the file's wall time, its hooks included. Each file's line (seconds, tab, file) is appended to
 * `MOCHA_FILE_TIMES`; scripts/test.sh prints the slowest. Without `--parallel` the root hooks run once for the whole
 * run, and the one line holds every file.
 */
import { appendFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { Context, RootHookObject } from 'mocha';

let started = 0;

/** The file the worker is running: the first of its root suite's suites that names one. */
function fileOf(context: Context): string {
  const file = context.test?.parent?.suites.find((suite) => suite.file !== undefined)?.file;
  return file === undefined ? '(every file)' : relative(process.cwd(), file);
}

export const mochaHooks: RootHookObject = {
  beforeAll() {
    started = performance.now();
  },
  afterAll(this: Context) {
    const out = process.env.MOCHA_FILE_TIMES;
    if (out) appendFileSync(out, `${((performance.now() - started) / 1000).toFixed(1)}\t${fileOf(this)}\n`);
  },
};
