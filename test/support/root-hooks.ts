import { appendFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { Context } from 'mocha';
import { dropKeptElasticsearchPrefixes } from './stores.js';

/**
 * Mocha's root hooks (.mocharc.json `require`). They run once for a serial run, and once for each file in a parallel
 * run's workers:
 * - after the last test, the indices the Elasticsearch fixture kept for reuse go, so that a run leaves the node as it
 *   found it;
 * - in a parallel worker, the file's wall time is appended to MOCHA_FILE_TIMES (a serial run's reporter times its
 *   files itself: file-times-reporter.cts, which also sorts and prints them all at the end).
 */
let fileStarted = 0;

export const mochaHooks = {
  beforeAll(): void {
    fileStarted = performance.now();
  },
  async afterAll(this: Context): Promise<void> {
    await dropKeptElasticsearchPrefixes();
    const out = process.env.MOCHA_FILE_TIMES;
    const file = this.test?.parent?.suites.find((suite) => suite.file !== undefined)?.file;
    if (process.env.MOCHA_WORKER_ID !== undefined && out && file) {
      appendFileSync(
        out,
        `${((performance.now() - fileStarted) / 1000).toFixed(1)}\t${relative(process.cwd(), file)}\n`,
      );
    }
  },
};
