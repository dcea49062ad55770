import { renderPattern, type LikePattern } from '../../domain/pattern.js';
import { NAME_TABLES } from './name-trigrams.js';
import {
  METRIC_FIELD_FILTERS,
  type CiFilter,
  type ContextFilter,
  type MetricFilter,
  type SessionFilter,
} from '../store.js';

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
    names?: { table: string; column: string; trigrams: string },
    candidates?: string,
  ): this {
    if (pattern === undefined) return this;
    if (strategy === 'scan' || !names) return this.add(`${column} LIKE ? ESCAPE '\\'`, toSqlLike(pattern));
    if (candidates !== undefined) {
      return this.add(
        `${column} IN (SELECT ${names.column} FROM ${names.table} WHERE id IN (SELECT rowid FROM ${names.trigrams} WHERE ${names.trigrams} MATCH ?) AND ${names.column} LIKE ? ESCAPE '\\')`,
        candidates,
        toSqlLike(pattern),
      );
    }
    return this.add(
      `${column} IN (SELECT ${names.column} FROM ${names.table} WHERE ${names.column} LIKE ? ESCAPE '\\')`,
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

export function metricWhere(
  filter: MetricFilter,
  patterns: PatternStrategy = 'names',
  candidates: NameCandidates = {},
): Where {
  const where = new WhereBuilder();
  for (const { filter: key, field, match } of METRIC_FIELD_FILTERS) {
    if (match === 'prefix') where.startsWith(field, filter[key]);
    else where.equals(field, filter[key]);
  }
  return where
    .like('item', filter.itemPattern, patterns, NAME_TABLES.item, candidates.item)
    .like('item_variant', filter.variantPattern, patterns, NAME_TABLES.variant, candidates.variant)
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
