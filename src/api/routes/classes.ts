import Joi from 'joi';
import { machineClasses } from '../../application/machine-classes.js';
import { CLASS_FIELD_CHOICES, DEFAULT_CLASS_FIELDS } from '../../domain/machine-class.js';
import type { Route, TableLimits } from '../routing/route.js';
import { listingRoute } from '../routing/route-kinds.js';
import { EXAMPLES } from '../schemas.js';

/** Machine classes: what a regression's `match=class` compares within. */

const classSchema = Joi.object({
  machine_class: Joi.string().required().description('The class identifier (a hash of the values of its fields).'),
  fields: Joi.object(
    Object.fromEntries(
      CLASS_FIELD_CHOICES.map((name) => [name, Joi.alternatives(Joi.string().allow(''), Joi.number())]),
    ),
  )
    .required()
    .description('The values of the context fields that define a class (MONITOR_CLASS_FIELDS).'),
  contexts: Joi.array().items(Joi.string()).required().description('Its execution contexts, oldest first.'),
}).id('MachineClass');

export function classRoutes(limits: TableLimits): Route[] {
  const { h } = EXAMPLES.context;
  const fields = Object.fromEntries(
    DEFAULT_CLASS_FIELDS.map((name) => [name, (EXAMPLES.context as Record<string, unknown>)[name]]),
  );
  return [
    listingRoute(limits, {
      operationId: 'listMachineClasses',
      path: '/classes',
      tag: 'insight',
      summary: 'List the machine classes and their execution contexts',
      description:
        'A machine class is an execution context without the fields that change between two runs on the same kind ' +
        'of machine — by default its host name, which an ephemeral CI runner changes every run. Regressions compare ' +
        'a test with its earlier runs on the same class (`match=class`). In the order their first context was stored.',
      name: 'classes',
      item: classSchema,
      example: { machine_class: '5b1e0c7d2a9f4e31', fields, contexts: [h] },
      listing: async (_params, store, config) => {
        const classes = await machineClasses(store, config.classFields);
        return {
          count: () => Promise.resolve(classes.length),
          list: (slice) => Promise.resolve(classes.slice(slice.offset, slice.offset + slice.limit)),
        };
      },
    }),
  ];
}
