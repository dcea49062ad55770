import { appMain } from './dom.js';
import { buildPage } from './pages/build.js';
import { changesPage } from './pages/changes.js';
import { comparePage } from './pages/compare.js';
import { costPage } from './pages/cost.js';
import { noisePage } from './pages/noise.js';
import { overview } from './pages/overview.js';
import { variantPage } from './pages/variant.js';

/**
 * The dashboard's script: it fills the frame the server rendered (<main id="app" data-page=…>) from the public API
 * under /api/v1, with bounded requests only (counts, one page of a listing, top-20 rankings, the latest points of a
 * history). Every text from the data goes into the page as text, never as HTML. When every section has its answer,
 * <main> gets data-state="ready".
 */

const PAGES: Record<string, ((data: DOMStringMap) => Promise<void>) | undefined> = {
  overview,
  build: buildPage,
  compare: comparePage,
  variant: variantPage,
  cost: costPage,
  noise: noisePage,
  changes: changesPage,
};

const main = appMain();
void PAGES[main.dataset.page ?? '']?.(main.dataset);
