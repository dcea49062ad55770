import { CONTEXT_FIELDS } from './fields.js';
import type { Context } from './records.js';

/**
 * A machine class: an execution context without what differs between two runs on the same kind of machine. On
 * ephemeral CI runners every run has a new host name, and pytest-monitor hashes it into the context's key, so every
 * run is a new context; the class is what those runs share. Which fields define it is a setting
 * (MONITOR_CLASS_FIELDS); by default every field but the host name.
 */

/** The context fields a class may be defined by (all but the key). */
export const CLASS_FIELD_CHOICES = Object.keys(CONTEXT_FIELDS).filter((name) => name !== 'h') as Array<
  Exclude<keyof Context, 'h'>
>;
export type ClassField = (typeof CLASS_FIELD_CHOICES)[number];

export const DEFAULT_CLASS_FIELDS: readonly ClassField[] = CLASS_FIELD_CHOICES.filter(
  (name) => name !== 'machine_node',
);

/** 32-bit FNV-1a of `text`, from `seed`. */
function fnv1a(text: string, seed: number): number {
  let hash = seed >>> 0;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** The class's fields and values, in the catalogue's order. */
export const classFields = (context: Context, fields: readonly ClassField[]): Partial<Context> =>
  Object.fromEntries(CLASS_FIELD_CHOICES.filter((f) => fields.includes(f)).map((f) => [f, context[f]]));

/**
 * The class's identifier: 16 hex digits hashed from the values of its fields (two FNV-1a runs; no crypto, so that
 * the same code runs in the browser). Two contexts with the same values have the same class.
 */
export function machineClassOf(context: Context, fields: readonly ClassField[]): string {
  const text = JSON.stringify(Object.values(classFields(context, fields)));
  return [fnv1a(text, 0x811c9dc5), fnv1a(text, 0x2166136)].map((h) => h.toString(16).padStart(8, '0')).join('');
}
