import Joi from 'joi';
import type { Metric } from '../../domain/records.js';
import { field, nameAsSent, validateBody, type Aliases } from './fields.js';

const ALIASES: Aliases = { ctx_h: 'context_h', wall_time: 'total_time', krnl_time: 'kernel_time' };

const schema = Joi.object({
  session_h: field.key().required(),
  context_h: field.key().required(),
  item_start_time: field.isoDateTime().required(),
  item_path: field.text(4096).required(),
  item: field.text(2048).required(),
  item_variant: field.text(2048).required(),
  item_fs_loc: field.text(2048).required(),
  kind: field.text(64).required(),
  component: field.text(512).allow(null),
  total_time: field.measure().required(),
  user_time: field.measure().required(),
  kernel_time: field.measure().required(),
  cpu_usage: field.measure().required(),
  // Memory is a difference against a baseline taken by the client, so it may be negative.
  mem_usage: Joi.number().required(),
});

export function validateMetric(body: Record<string, unknown>): Metric {
  const value = validateBody<Metric & { component?: string | null }>('metric', body, schema, ALIASES);
  return {
    session_h: value.session_h,
    context_h: value.context_h,
    item_start_time: value.item_start_time,
    item_path: value.item_path,
    item: value.item,
    item_variant: value.item_variant,
    item_fs_loc: value.item_fs_loc,
    kind: value.kind,
    component: value.component ?? '',
    total_time: value.total_time,
    user_time: value.user_time,
    kernel_time: value.kernel_time,
    cpu_usage: value.cpu_usage,
    mem_usage: value.mem_usage,
  };
}

/** A metric field's name as this body wrote it (errors name what the caller sent). */
export const metricFieldAsSent = (body: Record<string, unknown>, name: string): string => nameAsSent(body, ALIASES, name);
