import { METRIC_FIELDS } from '../../domain/fields.js';
import { shortestMatch, type LikePattern } from '../../domain/pattern.js';
import { item, likePattern, variant } from '../parameters.js';
import type { Route, TableLimits } from '../route.js';
import { metricCountRoute, metricsRoute } from '../route-kinds.js';

interface Pattern {
  pattern: LikePattern;
}

/** Test items and variants: exact matches, and `like` patterns (matched anywhere in the value). */
export function itemAndVariantRoutes(limits: TableLimits): Route[] {
  // A pattern no value of the field is long enough to match selects nothing (and is not sent to the store).
  const byItem = ({ pattern }: Pattern) =>
    shortestMatch(pattern) > METRIC_FIELDS.item.max ? undefined : { itemPattern: pattern };
  const byVariant = ({ pattern }: Pattern) =>
    shortestMatch(pattern) > METRIC_FIELDS.item_variant.max ? undefined : { variantPattern: pattern };
  const items = { tag: 'items', params: { pattern: likePattern } };
  const variants = { tag: 'variants', params: { pattern: likePattern } };
  return [
    metricsRoute<Pattern>(limits, {
      ...items,
      operationId: 'listItemPatternMetrics',
      path: '/items/like/{pattern}/metrics',
      summary: 'List the metrics whose item matches a pattern',
      filter: byItem,
    }),
    metricCountRoute<Pattern>({
      ...items,
      operationId: 'countItemPatternMetrics',
      path: '/items/like/{pattern}/metrics/count',
      summary: 'Count the metrics whose item matches a pattern',
      filter: byItem,
    }),
    metricsRoute<Pattern>(limits, {
      ...variants,
      operationId: 'listVariantPatternMetrics',
      path: '/variants/like/{pattern}/metrics',
      aliases: ['/variants/like/{pattern}'],
      summary: 'List the metrics whose variant matches a pattern',
      filter: byVariant,
    }),
    metricCountRoute<Pattern>({
      ...variants,
      operationId: 'countVariantPatternMetrics',
      path: '/variants/like/{pattern}/metrics/count',
      summary: 'Count the metrics whose variant matches a pattern',
      filter: byVariant,
    }),
    metricsRoute<{ item: string }>(limits, {
      tag: 'items',
      params: { item },
      operationId: 'listItemMetrics',
      path: '/items/{item}/metrics',
      summary: 'List the metrics of a test item',
      filter: ({ item: name }) => ({ item: name }),
    }),
    metricCountRoute<{ item: string }>({
      tag: 'items',
      params: { item },
      operationId: 'countItemMetrics',
      path: '/items/{item}/metrics/count',
      summary: 'Count the metrics of a test item',
      filter: ({ item: name }) => ({ item: name }),
    }),
    metricsRoute<{ variant: string }>(limits, {
      tag: 'variants',
      params: { variant },
      operationId: 'listVariantMetrics',
      path: '/variants/{variant}/metrics',
      summary: 'List the metrics of a test variant',
      filter: ({ variant: name }) => ({ variant: name }),
    }),
    metricCountRoute<{ variant: string }>({
      tag: 'variants',
      params: { variant },
      operationId: 'countVariantMetrics',
      path: '/variants/{variant}/metrics/count',
      summary: 'Count the metrics of a test variant',
      filter: ({ variant: name }) => ({ variant: name }),
    }),
  ];
}
