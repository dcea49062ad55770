import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * API tokens. The tokens file holds one line per token, `<name>:<role>:sha256:<hex digest of the token>` — never the
 * token itself — with `#` comments and blank lines allowed. A `write` token may create records and read them; a
 * `read` token may only read.
 */

export const ROLES = ['read', 'write'] as const;
export type Role = (typeof ROLES)[number];

export interface TokenEntry {
  name: string;
  role: Role;
  /** SHA-256 of the token, 32 bytes. */
  digest: Buffer;
}

export class TokenFileError extends Error {}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$/;
const LINE = /^([^:]*):([^:]*):sha256:([0-9a-fA-F]*)$/;

export const digestOf = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

/** Parses the text of a tokens file; every bad line is reported, with its number. */
export function parseTokenFile(text: string, source = 'the tokens file'): TokenEntry[] {
  const entries: TokenEntry[] = [];
  const problems: string[] = [];
  const names = new Set<string>();
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const where = `line ${index + 1}`;
    const match = LINE.exec(line);
    if (!match) {
      problems.push(
        `${where}: expected <name>:<role>:sha256:<64 hex digits> (monitor-admin token create prints such a line)`,
      );
      return;
    }
    const [, name = '', role = '', hex = ''] = match;
    if (!NAME.test(name))
      problems.push(`${where}: the name "${name}" must be 1 to 64 letters, digits, "_", ".", "@" or "-"`);
    else if (names.has(name)) problems.push(`${where}: the name "${name}" is used twice`);
    if (!(ROLES as readonly string[]).includes(role))
      problems.push(`${where}: the role "${role}" must be read or write`);
    if (hex.length !== 64) problems.push(`${where}: the digest must be 64 hex digits (SHA-256), not ${hex.length}`);
    names.add(name);
    if (NAME.test(name) && (ROLES as readonly string[]).includes(role) && hex.length === 64) {
      entries.push({ name, role: role as Role, digest: Buffer.from(hex, 'hex') });
    }
  });
  if (problems.length > 0)
    throw new TokenFileError(`${source} is invalid:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  return entries;
}

/**
 * The entry whose digest is the token's, comparing every entry in constant time (the time taken does not tell which
 * entry, if any, matched, nor how much of a digest did).
 */
export function findToken(entries: readonly TokenEntry[], token: string): TokenEntry | undefined {
  const digest = digestOf(token);
  let found: TokenEntry | undefined;
  for (const entry of entries) {
    if (timingSafeEqual(entry.digest, digest) && !found) found = entry;
  }
  return found;
}

/** A new random token: 32 bytes of entropy, base64url (43 characters, safe in a URL's user-info). */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The tokens-file line of a token. */
export function tokenLine(name: string, role: Role, token: string): string {
  if (!NAME.test(name))
    throw new TokenFileError(`the name "${name}" must be 1 to 64 letters, digits, "_", ".", "@" or "-"`);
  return `${name}:${role}:sha256:${digestOf(token).toString('hex')}`;
}
