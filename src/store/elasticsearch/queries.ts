import type { estypes } from '@elastic/elasticsearch';
import { renderPattern, type LikePattern } from '../../domain/pattern.js';
import {
  METRIC_FIELD_FILTERS,
  type CiFilter,
  type ContextFilter,
  type MetricFilter,
  type SessionFilter,
} from '../store.js';

type Query = estypes.QueryDslQueryContainer;

/**
 * Store filters → Elasticsearch term-level queries. Every user value goes into a term, prefix or wildcard query
 * as data, never into a query-string parser or a script.
 */
class BoolBuilder {
  private readonly filters: Query[] = [];
  private readonly mustNot: Query[] = [];

  term(field: string, value: string | undefined): this {
    if (value !== undefined) this.filters.push({ term: { [field]: value } });
    return this;
  }

  prefix(field: string, value: string | undefined): this {
    if (value !== undefined && value !== '') this.filters.push({ prefix: { [field]: { value } } });
    return this;
  }

  /** The names matching the pattern when the names index found them (exact), else the wildcard query. */
  like(field: string, pattern: LikePattern | undefined, names: readonly string[] | undefined): this {
    if (pattern === undefined) return this;
    this.filters.push(
      names !== undefined
        ? { terms: { [field]: [...names] } }
        : { wildcard: { [field]: { value: toWildcard(pattern), case_insensitive: true } } },
    );
    return this;
  }

  exists(field: string): this {
    this.filters.push({ exists: { field } });
    return this;
  }

  not(query: Query): this {
    this.mustNot.push(query);
    return this;
  }

  build(): Query {
    if (this.filters.length === 0 && this.mustNot.length === 0) return { match_all: {} };
    return { bool: { filter: this.filters, must_not: this.mustNot } };
  }
}

/** Contains-match in Elasticsearch wildcard syntax (`*`, `?`, `\` escapes), every literal character escaped. */
export function toWildcard(pattern: LikePattern): string {
  const literal = (text: string) => text.replace(/[\\*?]/g, (c) => `\\${c}`);
  return `*${renderPattern(pattern, { anyRun: '*', oneChar: '?', literal })}*`;
}

export function contextQuery(filter: ContextFilter): Query {
  return new BoolBuilder().prefix('h', filter.idPrefix).build();
}

export function sessionQuery(filter: SessionFilter): Query {
  return new BoolBuilder().prefix('session_h', filter.idPrefix).prefix('scm_ref', filter.scmPrefix).build();
}

/** The item and variant names that match a filter's patterns, when the names index answered (name-index.ts). */
export interface PatternNames {
  item?: readonly string[];
  variant?: readonly string[];
}

export function metricQuery(filter: MetricFilter, patternNames: PatternNames = {}): Query {
  const query = new BoolBuilder();
  for (const { filter: key, field, match } of METRIC_FIELD_FILTERS) {
    if (match === 'prefix') query.prefix(field, filter[key]);
    else query.term(field, filter[key]);
  }
  return query
    .like('item', filter.itemPattern, patternNames.item)
    .like('item_variant', filter.variantPattern, patternNames.variant)
    .build();
}

/** Sessions (or component-session pairs) of a pipeline and build; pipeline and build are absent when empty. */
export function ciQuery(filter: CiFilter, pipeline?: string, build?: string): Query {
  const query = new BoolBuilder().exists('pipeline').term('component', filter.component).term('pipeline', pipeline);
  if (pipeline !== undefined) query.exists('build').term('build', build);
  return query.build();
}

export function componentQuery(prefix: string): Query {
  return new BoolBuilder()
    .prefix('component', prefix)
    .not({ term: { component: '' } })
    .build();
}
