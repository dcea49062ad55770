import Joi from 'joi';
import { longerThanField, METRIC_FIELDS } from '../../domain/fields.js';
import type { Store } from '../../store/store.js';
import { component, item, keyPrefix, variant } from '../parameters.js';
import type { Route, TableLimits } from '../routing/route.js';
import { countRoute, listingRoute, metricsRoute, NOTHING } from '../routing/route-kinds.js';
import { ciRoutes } from './ci.js';

const tag = 'components';

type Params = Partial<Record<'component' | 'item' | 'variant', string>>;

/**
 * The metrics of a component — all of them, or of one test item or variant — and likewise of no component (the
 * forms without a component segment): six listings, one rule.
 */
function componentMetricRoutes(limits: TableLimits): Route[] {
  const narrowings: Array<{ segment: string; params: Record<string, Joi.Schema>; operation: string; of: string }> = [
    { segment: '', params: {}, operation: '', of: '' },
    { segment: '/items/{item}', params: { item }, operation: 'Item', of: ' of a test item' },
    { segment: '/variants/{variant}', params: { variant }, operation: 'Variant', of: ' of a test variant' },
  ];
  const owners: Array<{
    segment: string;
    params: Record<string, Joi.Schema>;
    operation: (id: string) => string;
    of: string;
  }> = [
    {
      segment: '',
      params: {},
      operation: (id: string) => `list${id}MetricsWithoutComponent`,
      of: ' that belong to no component',
    },
    {
      segment: '/{component}',
      params: { component },
      operation: (id: string) => `listComponent${id}Metrics`,
      of: ' of a component',
    },
  ];
  return owners.flatMap((owner) =>
    narrowings.map((narrowing) =>
      metricsRoute<Params>(limits, {
        operationId: owner.operation(narrowing.operation),
        path: `/components${owner.segment}${narrowing.segment}/metrics`,
        tag,
        summary: `List the metrics${narrowing.of}${owner.of}`,
        params: { ...owner.params, ...narrowing.params },
        filter: (p) => ({ component: p.component ?? '', item: p.item, variant: p.variant }),
      }),
    ),
  );
}

/**
 * Components. A metric without a component has component "" and is reached by the forms without a component
 * segment (`/components/metrics`, `/components/items/{item}/metrics`, `/components/variants/{variant}/metrics`).
 */
export function componentRoutes(limits: TableLimits): Route[] {
  const components = (prefix: string, store: Store) => ({
    count: () => store.countComponents(prefix),
    list: (slice: Parameters<Store['listComponents']>[1]) => store.listComponents(prefix, slice),
  });
  const componentItem = Joi.string().description('A component.').example('storage');
  return [
    listingRoute(limits, {
      operationId: 'listComponents',
      path: '/components',
      tag,
      summary: 'List the components',
      description: 'Distinct non-empty components of the stored metrics, ascending byte order.',
      name: 'components',
      item: componentItem,
      example: 'storage',
      listing: (_params, store) => components('', store),
    }),
    countRoute({
      operationId: 'countComponents',
      path: '/components/count',
      tag,
      summary: 'Count the components',
      description: 'Non-empty components only.',
      count: (_p, store) => store.countComponents(''),
    }),
    ...componentMetricRoutes(limits),
    ...ciRoutes(limits, {
      base: '/components/{component}',
      tag,
      idPrefix: 'Component',
      params: { component },
      filter: (p) => ({ component: p.component }),
      builds: 'ids',
      of: ' of a component (sessions owning one of its metrics)',
    }),
    listingRoute<{ prefix: string }>(limits, {
      operationId: 'findComponents',
      path: '/components/{prefix}',
      tag,
      summary: 'List the components starting with a prefix',
      description: 'Ascending byte order; an empty list when none does.',
      params: {
        prefix: keyPrefix
          .description('The start of a component name (literal, case-sensitive).')
          .example('stor', { override: true }),
      },
      name: 'components',
      item: componentItem,
      example: 'storage',
      listing: ({ prefix }, store) =>
        longerThanField(METRIC_FIELDS.component, prefix) ? NOTHING : components(prefix, store),
    }),
  ];
}
