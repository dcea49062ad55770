import { machineClassOf, type ClassField } from '../../domain/machine-class.js';
import type { Store } from '../../store/store.js';

/**
 * The machine class of each context a comparison meets, looked up once per context and kept for the request (the
 * classes themselves, listed with their contexts, are application/machine-classes.ts).
 */
export class ContextClasses {
  private readonly classes = new Map<string, string>();

  constructor(
    private readonly store: Store,
    private readonly fields: readonly ClassField[],
  ) {}

  /** Looks up the contexts not seen yet. */
  async load(rows: ReadonlyArray<{ context_h: string }>): Promise<void> {
    const unseen = [...new Set(rows.map((row) => row.context_h))].filter((h) => !this.classes.has(h));
    const contexts = await Promise.all(unseen.map((h) => this.store.findContext(h)));
    unseen.forEach((h, i) => {
      const context = contexts[i];
      // A metric's context always exists (the store refuses one that names an unknown context).
      this.classes.set(h, context ? machineClassOf(context, this.fields) : h);
    });
  }

  /** The class of a context loaded before. */
  readonly classOf = (h: string): string => this.classes.get(h) ?? h;
}
