import Joi from 'joi';
import { longerThanField, METRIC_FIELDS } from '../../domain/fields.js';
import type { Store } from '../../store/store.js';
import { component, item, keyPrefix, variant } from '../parameters.js';
import type { Route, TableLimits } from '../route.js';
import { countRoute, listingRoute, metricsRoute, NOTHING } from '../route-kinds.js';
import { ciRoutes } from './ci.js';

const tag = 'components';

interface C {
  component: string;
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
    metricsRoute(limits, {
      operationId: 'listMetricsWithoutComponent',
      path: '/components/metrics',
      tag,
      summary: 'List the metrics that belong to no component',
      filter: () => ({ component: '' }),
    }),
    metricsRoute<{ item: string }>(limits, {
      operationId: 'listItemMetricsWithoutComponent',
      path: '/components/items/{item}/metrics',
      tag,
      summary: 'List the metrics of a test item that belong to no component',
      params: { item },
      filter: ({ item: name }) => ({ component: '', item: name }),
    }),
    metricsRoute<{ variant: string }>(limits, {
      operationId: 'listVariantMetricsWithoutComponent',
      path: '/components/variants/{variant}/metrics',
      tag,
      summary: 'List the metrics of a test variant that belong to no component',
      params: { variant },
      filter: ({ variant: name }) => ({ component: '', variant: name }),
    }),
    metricsRoute<C>(limits, {
      operationId: 'listComponentMetrics',
      path: '/components/{component}/metrics',
      tag,
      summary: 'List the metrics of a component',
      params: { component },
      filter: (p) => ({ component: p.component }),
    }),
    metricsRoute<C & { item: string }>(limits, {
      operationId: 'listComponentItemMetrics',
      path: '/components/{component}/items/{item}/metrics',
      tag,
      summary: 'List the metrics of a test item of a component',
      params: { component, item },
      filter: (p) => ({ component: p.component, item: p.item }),
    }),
    metricsRoute<C & { variant: string }>(limits, {
      operationId: 'listComponentVariantMetrics',
      path: '/components/{component}/variants/{variant}/metrics',
      tag,
      summary: 'List the metrics of a test variant of a component',
      params: { component, variant },
      filter: (p) => ({ component: p.component, variant: p.variant }),
    }),
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
