import { METRIC_FIELDS } from '../../domain/fields.js';
import { shortestMatch, type LikePattern } from '../../domain/pattern.js';
import { item, likePattern, variant } from '../parameters.js';
import type { Route, TableLimits } from '../routing/route.js';
import { metricListAndCount } from '../routing/route-kinds.js';

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
    ...metricListAndCount<Pattern>(limits, {
      ...items,
      name: 'ItemPatternMetrics',
      path: '/items/like/{pattern}/metrics',
      of: 'whose item matches a pattern',
      filter: byItem,
    }),
    ...metricListAndCount<Pattern>(limits, {
      ...variants,
      name: 'VariantPatternMetrics',
      path: '/variants/like/{pattern}/metrics',
      aliases: ['/variants/like/{pattern}'],
      of: 'whose variant matches a pattern',
      filter: byVariant,
    }),
    ...metricListAndCount<{ item: string }>(limits, {
      tag: 'items',
      params: { item },
      name: 'ItemMetrics',
      path: '/items/{item}/metrics',
      of: 'of a test item',
      filter: ({ item: name }) => ({ item: name }),
    }),
    ...metricListAndCount<{ variant: string }>(limits, {
      tag: 'variants',
      params: { variant },
      name: 'VariantMetrics',
      path: '/variants/{variant}/metrics',
      of: 'of a test variant',
      filter: ({ variant: name }) => ({ variant: name }),
    }),
  ];
}
