import type { Database, Statement } from 'better-sqlite3';
import { patternTrigrams, trigramsOf, type LikePattern } from '../../domain/pattern.js';

/** Prepares (and may cache) a statement: the store passes its statement cache. */
type Prepare = (sql: string) => Statement;

/**
 * The trigram index of the distinct item and variant names, so that a `like` pattern with a literal run of at least
 * three characters does not test every distinct name. Each names table has an FTS5 `trigram` table over it (kept
 * in sync by triggers, see schema.ts) and `trigram_counts` says how many names hold each trigram (ASCII-lowercased,
 * as the match is ASCII case-insensitive). A pattern is answered from the few rarest trigrams of its literal runs:
 * FTS5 gives the names holding all of them (a superset of the matches), and the exact LIKE keeps only the matches.
 * The counts are kept here, where names are added (insertMetric) and removed (purge), because only this code knows
 * how to cut a name into trigrams; an FTS5 term lookup (fts5vocab) would read the whole posting list to count it.
 */

type NameField = 'item' | 'variant';

export const NAME_TABLES: Record<NameField, { table: string; column: string; trigrams: string }> = {
  item: { table: 'item_names', column: 'item', trigrams: 'item_trigrams' },
  variant: { table: 'variant_names', column: 'variant', trigrams: 'variant_trigrams' },
};

/** The rarest trigrams a query ANDs: enough to narrow to the matches, few enough that each posting list is short. */
const TRIGRAMS_PER_QUERY = 3;
/** The index is used when its rarest trigram is held by fewer than 1/BROAD of the names; else testing each is cheaper. */
const BROAD = 4;

/** An FTS5 query ANDing trigrams, each a quoted string (a `"` doubled): user text is never FTS5 syntax. */
function trigramQuery(trigrams: readonly string[]): string {
  return trigrams.map((trigram) => `"${trigram.replace(/"/g, '""')}"`).join(' AND ');
}

/**
 * Changes to the trigram counts, summed in memory and written once per distinct trigram when the names are added or
 * removed: the names of a batch share most of their trigrams (`tests/`, `::Test`, `_case_`), so a batch of 5,000 new
 * names makes a few thousand upserts instead of hundreds of thousands.
 */
export class TrigramTally {
  /** `field:trigram` → change in the number of names holding it. */
  private readonly deltas = new Map<string, number>();

  /** One name added (+1) or removed (-1). */
  add(field: NameField, name: string, delta: 1 | -1): void {
    for (const trigram of trigramsOf(name)) {
      const key = `${field}:${trigram}`;
      this.deltas.set(key, (this.deltas.get(key) ?? 0) + delta);
    }
  }

  /** Writes the summed changes (inside the caller's transaction) and starts afresh. */
  write(prepare: Prepare): void {
    const statement = prepare(
      `INSERT INTO trigram_counts (field, trigram, names) VALUES (?, ?, ?)
         ON CONFLICT (field, trigram) DO UPDATE SET names = names + excluded.names`,
    );
    for (const [key, delta] of this.deltas) {
      if (delta === 0) continue;
      const colon = key.indexOf(':');
      statement.run(key.slice(0, colon), key.slice(colon + 1), delta);
    }
    this.deltas.clear();
  }
}

/**
 * The FTS5 query that narrows a pattern's candidates, or undefined when the index would not help: no literal run of
 * three characters (the names are tested one by one, as before), or even the rarest trigram is held by so many
 * names that testing each is cheaper. A trigram no name holds answers at once (nothing matches).
 */
export function candidateQuery(prepare: Prepare, field: NameField, pattern: LikePattern): string | undefined {
  const trigrams = patternTrigrams(pattern);
  if (trigrams.length === 0) return undefined;
  const countOf = prepare('SELECT names FROM trigram_counts WHERE field = ? AND trigram = ?').pluck();
  const counted = trigrams
    .map((trigram) => ({ trigram, names: (countOf.get(field, trigram) as number | undefined) ?? 0 }))
    .sort((a, b) => a.names - b.names);
  // max(id) bounds the number of names in O(log n) (COUNT(*) would read them all).
  const total = (prepare(`SELECT MAX(id) FROM ${NAME_TABLES[field].table}`).pluck().get() as number | null) ?? 0;
  if ((counted[0]?.names ?? 0) * BROAD >= total && total > 0) return undefined;
  return trigramQuery(counted.slice(0, TRIGRAMS_PER_QUERY).map((c) => c.trigram));
}

/** Counts the trigrams of every name already stored (schema migration to version 3), with a line per 100,000. */
export function countAllTrigrams(db: Database, log: (line: string) => void): void {
  for (const field of Object.keys(NAME_TABLES) as NameField[]) {
    const { table, column } = NAME_TABLES[field];
    const counts = new Map<string, number>();
    let seen = 0;
    for (const name of db.prepare(`SELECT ${column} FROM ${table}`).pluck().iterate() as Iterable<string>) {
      for (const trigram of trigramsOf(name)) counts.set(trigram, (counts.get(trigram) ?? 0) + 1);
      seen += 1;
      if (seen % 100_000 === 0) log(`counted the trigrams of ${seen} ${field} names`);
    }
    const insert = db.prepare('INSERT INTO trigram_counts (field, trigram, names) VALUES (?, ?, ?)');
    for (const [trigram, n] of counts) insert.run(field, trigram, n);
  }
}
