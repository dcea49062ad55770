import { logTable } from '../table-columns.js';
import type { Changes } from './wording.js';
import { changesPage, STEP_COLUMNS, type ChangesLayout } from './page.js';

/** A pipeline's changes for a job log (a nightly job): a headline, then a block per build, its steps as an aligned table. */

const TABLE_LAYOUT: ChangesLayout = {
  headline: (changes, { summary, period, judged }) => [
    `pipeline ${changes.pipeline}: ${summary} over ${period}; ${judged}`,
  ],
  build: (change, { ranges, cost }) => [
    `build ${change.build} (${change.scm_ref ?? 'no SCM reference'}, started ${change.started}): ${ranges}; ${cost}`,
  ],
  likelyCause: (cause) => [`  likely cause: ${cause}`],
  shared: (shared) => shared.map((line) => `  shared: ${line}`),
  // Each line indented by four spaces, under its build.
  steps: (steps) => logTable(STEP_COLUMNS, steps, 4),
  more: (more) => [`    ${more}`],
};

export const tableFormat = (changes: Changes): string => changesPage(changes, TABLE_LAYOUT);
