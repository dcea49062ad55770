import Joi from 'joi';
import type { Context } from '../../domain/records.js';
import { field, nameAsSent, validateBody, type Aliases } from './fields.js';

const ALIASES: Aliases = {
  cpu_freq: 'cpu_frequency',
  mac_node: 'machine_node',
  mac_type: 'machine_type',
  mac_arch: 'machine_arch',
  max_arch: 'machine_arch',
  sys_info: 'system_info',
  py_info: 'python_info',
};

const schema = Joi.object({
  h: field.key().required(),
  cpu_count: Joi.number().integer().min(1).required(),
  // pytest-monitor sends psutil's float (2599.998); the contract stores whole MHz.
  cpu_frequency: Joi.number().min(0).required(),
  cpu_type: field.text(64).required(),
  cpu_vendor: field.text(256).allow(null),
  ram_total: Joi.number().integer().min(0).required(),
  machine_node: field.text(512).required(),
  machine_type: field.text(32).required(),
  machine_arch: field.text(16).required(),
  system_info: field.text(256).required(),
  python_info: field.text(512).required(),
});

export function validateContext(body: Record<string, unknown>): Context {
  const value = validateBody<Context & { cpu_vendor?: string | null }>('context', body, schema, ALIASES);
  return {
    h: value.h,
    cpu_count: value.cpu_count,
    cpu_frequency: Math.trunc(value.cpu_frequency),
    cpu_type: value.cpu_type,
    cpu_vendor: value.cpu_vendor ?? '',
    ram_total: value.ram_total,
    machine_node: value.machine_node,
    machine_type: value.machine_type,
    machine_arch: value.machine_arch,
    system_info: value.system_info,
    python_info: value.python_info,
  };
}

/** A context field's name as this body wrote it (errors name what the caller sent). */
export const contextFieldAsSent = (body: Record<string, unknown>, name: string): string => nameAsSent(body, ALIASES, name);
