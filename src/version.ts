import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package version, from the package.json above this file (src/ when run from source, dist/src/ built). */
export function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 5; depth += 1) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (manifest.name === 'monitor-server' && manifest.version) return manifest.version;
    } catch {
      // not here: look in the parent folder
    }
    dir = dirname(dir);
  }
  return 'unknown';
}
