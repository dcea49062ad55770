import { execFile } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../e2e/client.js';

/** The built CLI; the service is dist/src/server.js beside it. */
export const BUILT_CLI = join(REPO_ROOT, 'dist/src/cli/main.js');

/** Newest modification time under a folder. */
function newest(dir: string): number {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

/** Builds dist/ (npm run build) unless it is newer than every source file: suites that run the built code call it. */
export async function ensureBuilt(): Promise<void> {
  let built: number;
  try {
    built = statSync(BUILT_CLI).mtimeMs;
  } catch {
    built = 0;
  }
  if (built > newest(join(REPO_ROOT, 'src'))) return;
  await promisify(execFile)('npm', ['run', 'build'], { cwd: REPO_ROOT, timeout: 180_000 });
}
