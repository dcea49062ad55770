import { renderPattern, type LikePattern } from '../../domain/pattern.js';
import { NAME_TABLES } from './name-trigrams.js';
import type { CiFilter, ContextFilter, MetricFilter, SessionFilter } from '../store.js';

/** A WHERE clause and its bound values. Values are always bound, never spliced into SQL. */
export interface Where {
  sql: string;
  params: unknown[];
}

class WhereBuilder {
  private readonly clauses: string[] = [];
  readonly params: unknown[] = [];

  add(clause: string, ...params: unknown[]): this {
    this.clauses.push(clause);
    this.params.push(...params);
    return this;
  }

  /** `column` starts with `prefix`: an index range (TEXT compares as UTF-8 bytes), no LIKE and its case folding. */
  startsWith(column: string, prefix: string | undefined): this {
    if (prefix === undefined || prefix === '') return this;
    return this.add(`(${column} >= ? AND ${column} < ?)`, prefix, `${prefix}\u{10FFFF}`);
  }

  equals(column: string, value: string | undefined): this {
    return value === undefined ? this : this.add(`${column} = ?`, value);
  }

  /**
   * `column` matches a like pattern. `names` matches the pattern against the table of distinct values and reaches
   * the rows through the column's index (best when few rows match); `scan` tests each row (best when many do and
   * only the first ones in insertion order are wanted). With `names`, a `candidates` FTS5 query (name-trigrams.ts)
   * first narrows the distinct values to those holding its trigrams; the LIKE then keeps the exact matches.
   */
  like(
    column: string,
    pattern: LikePattern | undefined,
    strategy: PatternStrategy,
    names: { table: string; column: string; trigrams: string },
    candidates?: string,
  ): this {
    if (pattern === undefined) return this;
    // The metric holds the name's id: the pattern selects ids from the names table. `+` keeps the planner off the
    // column's index when the rows are to be tested in insertion order.
    if (strategy === 'scan') {
      return this.add(
        `+${column} IN (SELECT id FROM ${names.table} WHERE ${names.column} LIKE ? ESCAPE '\\')`,
        toSqlLike(pattern),
      );
    }
    if (candidates !== undefined) {
      return this.add(
        `${column} IN (SELECT id FROM ${names.table} WHERE id IN (SELECT rowid FROM ${names.trigrams} WHERE ${names.trigrams} MATCH ?) AND ${names.column} LIKE ? ESCAPE '\\')`,
        candidates,
        toSqlLike(pattern),
      );
    }
    return this.add(
      `${column} IN (SELECT id FROM ${names.table} WHERE ${names.column} LIKE ? ESCAPE '\\')`,
      toSqlLike(pattern),
    );
  }

  build(): Where {
    return { sql: this.clauses.length === 0 ? '' : `WHERE ${this.clauses.join(' AND ')}`, params: this.params };
  }
}

/** Contains-match in SQLite LIKE syntax (ASCII case-insensitive by default), every literal character escaped. */
export function toSqlLike(pattern: LikePattern): string {
  const literal = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);
  return `%${renderPattern(pattern, { anyRun: '%', oneChar: '_', literal })}%`;
}

export function contextWhere(filter: ContextFilter): Where {
  return new WhereBuilder().startsWith('h', filter.idPrefix).build();
}

export function sessionWhere(filter: SessionFilter): Where {
  return new WhereBuilder().startsWith('h', filter.idPrefix).startsWith('scm_ref', filter.scmPrefix).build();
}

export type PatternStrategy = 'names' | 'scan';

/** The FTS5 queries narrowing the item and variant patterns of a filter (undefined: test every distinct name). */
export interface NameCandidates {
  item?: string | undefined;
  variant?: string | undefined;
}

/**
 * The metrics a filter selects, on the metrics table of schema version 5 (integer-keys-migration.ts): a session,
 * context or name is found by its text in its own table (one lookup), then the metrics by its integer key; an SCM
 * reference, a pipeline or a build select sessions, and the metrics of those sessions.
 */
export function metricWhere(
  filter: MetricFilter,
  patterns: PatternStrategy = 'names',
  candidates: NameCandidates = {},
): Where {
  const where = new WhereBuilder();
  const byKey = (column: string, lookup: string, value: string | undefined): void => {
    if (value !== undefined) where.add(`${column} = (${lookup})`, value);
  };
  byKey('session', 'SELECT seq FROM sessions WHERE h = ?', filter.sessionH);
  byKey('context', 'SELECT seq FROM contexts WHERE h = ?', filter.contextH);
  if (filter.scmPrefix !== undefined && filter.scmPrefix !== '') {
    where.add(
      'session IN (SELECT seq FROM sessions WHERE scm_ref >= ? AND scm_ref < ?)',
      filter.scmPrefix,
      `${filter.scmPrefix}\u{10FFFF}`,
    );
  }
  where.equals('kind', filter.kind);
  // A component holds thousands of tests: with a test's item or variant, their index is the narrow one (`+` keeps the
  // planner, which has no statistics, off the component's).
  const narrower = filter.item !== undefined || filter.variant !== undefined;
  byKey(narrower ? '+component' : 'component', 'SELECT id FROM component_names WHERE component = ?', filter.component);
  byKey('item', 'SELECT id FROM item_names WHERE item = ?', filter.item);
  byKey('variant', 'SELECT id FROM variant_names WHERE variant = ?', filter.variant);
  if (filter.pipeline !== undefined && filter.build !== undefined) {
    where.add('session IN (SELECT seq FROM sessions WHERE pipeline = ? AND build = ?)', filter.pipeline, filter.build);
  } else if (filter.pipeline !== undefined) {
    where.add('session IN (SELECT seq FROM sessions WHERE pipeline = ?)', filter.pipeline);
  } else if (filter.build !== undefined) {
    where.add('session IN (SELECT seq FROM sessions WHERE build = ?)', filter.build);
  }
  return where
    .like('item', filter.itemPattern, patterns, NAME_TABLES.item, candidates.item)
    .like('variant', filter.variantPattern, patterns, NAME_TABLES.variant, candidates.variant)
    .build();
}

/** Sessions of a pipeline (and build), optionally only those owning a metric of a component. */
export function ciSessionWhere(filter: CiFilter, pipeline?: string, build?: string): Where {
  const where = new WhereBuilder().add('pipeline IS NOT NULL');
  where.equals('pipeline', pipeline);
  if (pipeline !== undefined) where.add('build IS NOT NULL').equals('build', build);
  if (filter.component !== undefined) {
    where.add('h IN (SELECT session_h FROM component_sessions WHERE component = ?)', filter.component);
  }
  return where.build();
}

export function componentWhere(prefix: string): Where {
  return new WhereBuilder().add("component != ''").startsWith('component', prefix).build();
}
