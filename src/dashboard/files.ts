import { createHash } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The files under /dashboard/assets/: uPlot from its npm package, the styles and icon beside this module, and the
 * browser modules tsc compiled from src/dashboard/client (with the domain modules they import) into dist/dashboard,
 * served under app/ with their relative paths kept, so that their relative imports resolve. Which files exist is a
 * fixed list, made once when the service starts: a request names one of them exactly, or gets a 404, so no spelling
 * of a path (`..`, encoded slashes) reaches any other file.
 */

/** The first ancestor directory of `from` holding package.json: the same under tsx (src/) and once built (dist/src/). */
function packageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

const here = dirname(fileURLToPath(import.meta.url));
/** Where `npm run build:dashboard` (tsc -p tsconfig.dashboard.json) writes the browser modules. */
export const CLIENT_DIR = join(packageRoot(here), 'dist', 'dashboard');
/** The prefix of the compiled modules' names under /dashboard/assets/. */
const CLIENT_PREFIX = 'app/';
/** The module the pages load, by its name under /dashboard/assets/. */
export const CLIENT_ENTRY = `${CLIENT_PREFIX}dashboard/client/main.js`;

const uplotDir = join(dirname(createRequire(import.meta.url).resolve('uplot/package.json')), 'dist');
// Beside this module: src/dashboard/assets under tsx, dist/src/dashboard/assets once built (the build copies it).
const ownDir = join(here, 'assets');

const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';

interface Loaded {
  type: string;
  body: Buffer;
  etag: string;
}

/** A file read once, on first use, and kept. */
function cached(path: string, type: string): () => Promise<Loaded> {
  let loading: Promise<Loaded> | undefined;
  return () => {
    loading ??= readFile(path).then(
      (body) => ({ type, body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` }),
      (error: unknown) => {
        loading = undefined; // retried on the next request
        throw error;
      },
    );
    return loading;
  };
}

/** The compiled modules, by their paths under `dir` ('/'-separated); none when the client is not built. */
function compiledModules(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.js') && statSync(join(dir, path)).isFile())
    .map((path) => path.split(sep).join('/'));
}

export interface DashboardFiles {
  /** The loader of each file, by its name under /dashboard/assets/. */
  files: ReadonlyMap<string, () => Promise<Loaded>>;
  /** Whether the compiled client is there (its entry module). */
  clientBuilt: boolean;
}

export function dashboardFiles(): DashboardFiles {
  const files = new Map([
    ['uPlot.iife.min.js', cached(join(uplotDir, 'uPlot.iife.min.js'), JS)],
    ['uPlot.min.css', cached(join(uplotDir, 'uPlot.min.css'), CSS)],
    ['dashboard.css', cached(join(ownDir, 'dashboard.css'), CSS)],
    ['favicon.svg', cached(join(ownDir, 'favicon.svg'), 'image/svg+xml')],
  ]);
  for (const path of compiledModules(CLIENT_DIR))
    files.set(`${CLIENT_PREFIX}${path}`, cached(join(CLIENT_DIR, path), JS));
  return { files, clientBuilt: files.has(CLIENT_ENTRY) };
}
