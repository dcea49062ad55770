import { readFileSync, statSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import type { Logger } from 'pino';
import { parseTokenFile, TokenFileError, type TokenEntry } from './tokens.js';

/** How often, at most, the file is checked for a change (a stat) while requests come in. */
const CHECK_INTERVAL_MS = 1000;

interface Version {
  mtimeMs: number;
  size: number;
  ino: number;
}

const versionOf = (s: { mtimeMs: number; size: number; ino: number }): Version => ({
  mtimeMs: s.mtimeMs,
  size: s.size,
  ino: s.ino,
});
const same = (a: Version, b: Version): boolean => a.mtimeMs === b.mtimeMs && a.size === b.size && a.ino === b.ino;

/**
 * The tokens file, re-read when it changes: a mounted Kubernetes Secret that rotates (its symlinks swapped) or a file
 * edited in place takes effect within about a second, without a restart. The file must be valid at startup; a later
 * version that is invalid or unreadable is refused — the tokens in force stay, and the problem is logged — so a
 * half-written file never locks everyone out.
 */
export class TokenFile {
  private entries: TokenEntry[];
  private version: Version;
  /** The last version refused, so that it is reported once, not at every check. */
  private refused: Version | undefined;
  private checkedAt = Date.now();
  private checking: Promise<void> | undefined;

  constructor(
    readonly path: string,
    private readonly logger: Logger,
  ) {
    try {
      this.version = versionOf(statSync(path));
      this.entries = parseTokenFile(readFileSync(path, 'utf8'), path);
    } catch (error) {
      if (error instanceof TokenFileError) throw error;
      throw new TokenFileError(`cannot read the tokens file ${path}: ${(error as Error).message}`);
    }
    if (this.entries.length === 0)
      logger.warn({ path }, 'the tokens file holds no token: every protected request is refused');
  }

  get size(): number {
    return this.entries.length;
  }

  /** The tokens in force, after a check for a newer file when the last check is over a second old. */
  async current(): Promise<readonly TokenEntry[]> {
    if (Date.now() - this.checkedAt >= CHECK_INTERVAL_MS) {
      this.checking ??= this.check().finally(() => {
        this.checkedAt = Date.now();
        this.checking = undefined;
      });
      await this.checking;
    }
    return this.entries;
  }

  private async check(): Promise<void> {
    try {
      const version = versionOf(await stat(this.path));
      if (same(version, this.version) || (this.refused && same(version, this.refused))) return;
      this.refused = version;
      const entries = parseTokenFile(await readFile(this.path, 'utf8'), this.path);
      this.entries = entries;
      this.version = version;
      this.refused = undefined;
      this.logger.info({ path: this.path, tokens: entries.length }, 'tokens file reloaded');
    } catch (error) {
      this.logger.error({ path: this.path, err: error }, 'tokens file not reloaded: the tokens in force stay');
    }
  }
}
