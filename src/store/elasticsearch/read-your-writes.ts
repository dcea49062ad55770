import type { Client } from '@elastic/elasticsearch';
import type { IndexKind, IndexNames } from './indices.js';

/**
 * Read-your-writes for one instance: the kinds of index it wrote since their last refresh, and the refresh under
 * way. A search of a kind this instance wrote refreshes first (one refresh of every kind written, shared by the
 * searches that come meanwhile); other instances see a write within the refresh interval.
 */
export class OwnWrites {
  private readonly dirty = new Set<IndexKind>();
  private refreshing: { kinds: ReadonlySet<IndexKind>; done: Promise<void> } | undefined;

  constructor(
    private readonly client: Client,
    private readonly names: IndexNames,
  ) {}

  /** A write of `kind` was acknowledged (or is about to be): the next search of it refreshes first. */
  wrote(kind: IndexKind): void {
    this.dirty.add(kind);
  }

  /**
   * Makes this instance's writes of `kind` searchable: starts a refresh of every kind written, or waits for the one
   * under way when it covers `kind` (the writes it took are not searchable until it ends).
   */
  async searchable(kind: IndexKind): Promise<void> {
    while (this.dirty.has(kind) || this.refreshing?.kinds.has(kind)) {
      if (!this.refreshing) {
        const kinds = new Set(this.dirty);
        this.dirty.clear();
        const done = this.client.indices
          .refresh({ index: [...kinds].map((k) => this.names.alias(k)) })
          .then(() => undefined)
          .catch((error: unknown) => {
            for (const k of kinds) this.dirty.add(k);
            throw error;
          })
          .finally(() => {
            this.refreshing = undefined;
          });
        this.refreshing = { kinds, done };
      }
      await this.refreshing.done;
    }
  }
}
