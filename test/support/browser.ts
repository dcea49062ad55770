import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { CLIENT_DIR, CLIENT_ENTRY } from '../../src/dashboard/files.js';

/**
 * Browser tests: a real Chromium driven by playwright-core. playwright-core downloads no browser; scripts/chromium.sh
 * installs Debian's chromium and prints its path, which `make test` passes as CHROMIUM_PATH. Without it, the usual
 * Debian locations are tried, and a missing browser fails the suite with what to run (it is never skipped).
 */

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const ARTIFACTS_DIR = join(repoRoot, '.cache/test-artifacts');

function chromiumExecutable(): string {
  const fromEnv = process.env.CHROMIUM_PATH;
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new Error(`CHROMIUM_PATH=${fromEnv} does not exist; run scripts/chromium.sh`);
    return fromEnv;
  }
  const found = ['/usr/lib/chromium/chromium', '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) =>
    existsSync(p),
  );
  if (!found)
    throw new Error(
      'no Chromium found: run scripts/chromium.sh (it installs one and prints its path), or set CHROMIUM_PATH',
    );
  return found;
}

function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumExecutable(),
    headless: true,
    // CI runs as root, where Chromium's sandbox cannot start: playwright then passes --no-sandbox (its default,
    // written out here because it matters). The pages are our own, on loopback.
    chromiumSandbox: false,
    // Containers often have a small /dev/shm; Chromium then crashes while drawing large pages.
    args: ['--disable-dev-shm-usage'],
  });
}

/** What went wrong while a page was open: each list should stay empty. */
interface PageProblems {
  /** console.error calls and browser-reported errors, e.g. Content-Security-Policy violations or 404ed resources. */
  consoleErrors: string[];
  /** Uncaught exceptions and unhandled rejections in the page. */
  pageErrors: string[];
  /** Requests that got no answer (refused, aborted) or an answer of 400 and above. */
  failedRequests: string[];
}

interface WatchedPage {
  page: Page;
  problems: PageProblems;
  /** Saves a PNG of the whole page (or of the viewport only) to .cache/test-artifacts/<name>.png; returns its path. */
  screenshot: (name: string, options?: { fullPage?: boolean }) => Promise<string>;
}

export function artifactPath(name: string): string {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  return join(ARTIFACTS_DIR, `${name.replace(/[^\w.-]+/g, '-')}.png`);
}

async function watch(context: BrowserContext): Promise<WatchedPage> {
  const page = await context.newPage();
  const problems: PageProblems = { consoleErrors: [], pageErrors: [], failedRequests: [] };
  page.on('console', (message) => {
    if (message.type() === 'error') {
      const { url, lineNumber } = message.location();
      problems.consoleErrors.push(`${message.text()}${url ? ` (${url}:${lineNumber})` : ''}`);
    }
  });
  page.on('pageerror', (error) => problems.pageErrors.push(error.stack ?? error.message));
  page.on('requestfailed', (request) =>
    problems.failedRequests.push(`${request.method()} ${request.url()}: ${request.failure()?.errorText ?? 'failed'}`),
  );
  page.on('response', (response) => {
    if (response.status() >= 400)
      problems.failedRequests.push(`${response.request().method()} ${response.url()}: ${response.status()}`);
  });
  return {
    page,
    problems,
    async screenshot(name, { fullPage = true } = {}) {
      const path = artifactPath(name);
      await page.screenshot({ path, fullPage });
      return path;
    },
  };
}

export interface BrowserFixture {
  /** A fresh page in a fresh context (own cookies and cache), closed after the current test. */
  /** `credentials`: what the browser answers an HTTP authentication challenge with (a person typing them in). */
  open(options?: {
    viewport?: { width: number; height: number };
    credentials?: { username: string; password: string };
  }): Promise<WatchedPage>;
}

/**
 * For a mocha `describe`: launches Chromium once before the suite and closes it after. The pages a test opened are
 * closed after it; when the test failed, each is first saved as .cache/test-artifacts/<test title>[-n].png.
 */
export function useBrowser(): BrowserFixture {
  let browser: Browser | undefined;
  let opened: Array<{ context: BrowserContext; watched: WatchedPage }> = [];

  before(async function () {
    this.timeout(60_000); // a cold start on 2 busy cores
    browser = await launchBrowser();
  });

  afterEach(async function () {
    const pages = opened;
    opened = [];
    const failed = this.currentTest?.state === 'failed';
    for (const [index, { context, watched }] of pages.entries()) {
      if (failed) {
        const name = `${this.currentTest?.fullTitle() ?? 'test'}${pages.length > 1 ? `-${index + 1}` : ''}-failed`;
        await watched.screenshot(name).catch(() => undefined);
      }
      await context.close();
    }
  });

  after(async function () {
    await browser?.close();
  });

  return {
    async open(options = {}) {
      if (!browser) throw new Error('useBrowser(): the browser is not started (open pages inside tests or hooks)');
      const context = await browser.newContext({
        viewport: options.viewport ?? { width: 1280, height: 900 },
        ...(options.credentials ? { httpCredentials: options.credentials } : {}),
      });
      // Well under mocha's 30 s, so that a missing element fails with playwright's own message (what it waited for).
      context.setDefaultTimeout(10_000);
      const watched = await watch(context);
      opened.push({ context, watched });
      return watched;
    },
  };
}

/**
 * The dashboard's pages load the modules tsc compiled from src/dashboard/client (and the modules they import) into
 * dist/dashboard (`make test` builds them first): fail at once, saying how to build them, when they are missing or
 * older than their sources (the client's, and the bidi module it shares with the server).
 */
export function expectClientBuilt(): void {
  const entry = join(CLIENT_DIR, CLIENT_ENTRY.replace(/^app\//, ''));
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run npm run build:dashboard`);
  const sources = [
    ...readdirSync(join(repoRoot, 'src/dashboard/client'), { recursive: true, encoding: 'utf8' }).map((path) =>
      join(repoRoot, 'src/dashboard/client', path),
    ),
    join(repoRoot, 'src/dashboard/bidi.ts'),
  ];
  const newest = sources.reduce((latest, path) => {
    const stat = statSync(path);
    return stat.isFile() ? Math.max(latest, stat.mtimeMs) : latest;
  }, 0);
  if (newest > statSync(entry).mtimeMs)
    throw new Error(`${entry} is older than its sources: run npm run build:dashboard`);
}

/** What a page must not have produced: every list of useBrowser's `problems` empty. */
export const NO_PROBLEMS = { consoleErrors: [], pageErrors: [], failedRequests: [] };

/** Waits until the page's script has every answer (data-state="ready"), and that none of its sections failed. */
export async function ready(page: Page): Promise<void> {
  await page.locator('main[data-state="ready"]').waitFor();
  expect(await page.locator('main').getAttribute('data-failed'), 'a section failed').to.equal(null);
}

/** The texts of a table's column, by heading (its sort arrows left out). */
export async function column(page: Page, section: string, heading: string): Promise<string[]> {
  const table = page.locator(`#${section} table`);
  const headings = await table.locator('thead th').allInnerTexts();
  const index = headings.findIndex((text) => text.replace(/[▲▼↕]/g, '').trim() === heading);
  expect(index, `column "${heading}" in #${section} (${headings.join(' | ')})`).to.be.at.least(0);
  return table.locator(`tbody tr td:nth-child(${index + 1})`).allInnerTexts();
}
