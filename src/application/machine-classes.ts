import { classFields, machineClassOf, type ClassField } from '../domain/machine-class.js';
import type { Context } from '../domain/records.js';
import type { Store } from '../store/store.js';

/** The machine classes of the stored contexts: each with the values that define it and its contexts. */

export interface MachineClass {
  machine_class: string;
  /** The values of the class's fields (MONITOR_CLASS_FIELDS). */
  fields: Partial<Context>;
  /** Its contexts' keys, in insertion order. */
  contexts: string[];
}

/** Contexts read per request while grouping. */
const CONTEXTS_PAGE = 5000;

/** Every class, in the order its first context was stored. Reads every context: classes are made, not stored. */
export async function machineClasses(store: Store, fields: readonly ClassField[]): Promise<MachineClass[]> {
  const total = await store.countContexts({});
  const classes = new Map<string, MachineClass>();
  for (let offset = 0; offset < total; offset += CONTEXTS_PAGE) {
    for (const context of await store.listContexts({}, { offset, limit: CONTEXTS_PAGE, total })) {
      const id = machineClassOf(context, fields);
      const known = classes.get(id);
      if (known) known.contexts.push(context.h);
      else classes.set(id, { machine_class: id, fields: classFields(context, fields), contexts: [context.h] });
    }
  }
  return [...classes.values()];
}
