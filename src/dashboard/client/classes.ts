import { api } from './api.js';
import type { ClassesPage } from '../../wire/listings.js';

/**
 * The machine classes, as the API defines them (its MONITOR_CLASS_FIELDS, which the page cannot know): a class per
 * context and the contexts of each class, from one request for GET /classes (its first page, as long as the API's
 * largest page). A context past that page has no class here, and the page says "class unknown".
 */
export interface MachineClasses {
  classOf: ReadonlyMap<string, string>;
  contextsOf: ReadonlyMap<string, readonly string[]>;
}

export async function machineClasses(): Promise<MachineClasses> {
  const page = (await api('/classes')) as ClassesPage;
  const classOf = new Map<string, string>();
  const contextsOf = new Map<string, readonly string[]>();
  for (const c of page.classes) {
    contextsOf.set(c.machine_class, c.contexts);
    for (const h of c.contexts) classOf.set(h, c.machine_class);
  }
  return { classOf, contextsOf };
}
