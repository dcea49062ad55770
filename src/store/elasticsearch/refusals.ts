import type { Client } from '@elastic/elasticsearch';
import { StoreRefusedError, type RefusalReason } from '../errors.js';
import { refused } from './errors.js';
import { INDEX_KINDS, type IndexNames } from './indices.js';
import { currentMonth } from './metric-partitions.js';

/**
 * How long after the cluster last refused a write (StoreRefusedError: its shard limit, a disk watermark's block)
 * readiness fails with it. A shard limit shows only when an index is to be made, so only a refusal tells of it;
 * blocks on the indices written now are also looked for at each readiness check (writeBlocks).
 */
const REFUSAL_REPORTED_MS = 60_000;

/** The block settings that stop writes to an index: the disk watermark's first, then an operator's. */
const WRITE_BLOCKS: Array<[string, RefusalReason]> = [
  ['index.blocks.read_only_allow_delete', 'disk_watermark'],
  ['index.blocks.read_only', 'write_block'],
  ['index.blocks.write', 'write_block'],
];

/** The cluster's refusals of this instance's writes: the last one, for readiness, and who hears of each. */
export class Refusals {
  private readonly listeners: Array<(reason: RefusalReason) => void> = [];
  /** The cluster's last refusal of a write, and when: readiness reports it for `reportedMs`. */
  private last: { error: StoreRefusedError; at: number } | undefined;

  constructor(private readonly reportedMs: number = REFUSAL_REPORTED_MS) {}

  /** Hears the reason of each refusal (metrics: monitor_store_refusals_total). */
  observe(listener: (reason: RefusalReason) => void): void {
    this.listeners.push(listener);
  }

  /** Remembers a refusal of the cluster for readiness and tells the listeners; any other error passes. */
  note(error: unknown): void {
    if (!(error instanceof StoreRefusedError) || this.last?.error === error) return;
    this.last = { error, at: Date.now() };
    this.listeners.forEach((listener) => listener(error.reason));
  }

  /** Throws the last refusal again while it is recent (within `reportedMs`), saying how long ago it came. */
  throwRecent(): void {
    const last = this.last;
    if (last && Date.now() - last.at < this.reportedMs) {
      const ago = Math.round((Date.now() - last.at) / 1000);
      throw new StoreRefusedError(last.error.reason, `${last.error.message} (${ago} s ago)`);
    }
  }
}

/**
 * Readiness sees a block on the indices this instance writes now — every kind's but the metrics', and this month's
 * metrics index —, set by the disk flood-stage watermark or an operator. Older months are left out: write-blocking
 * them is an operator's way to keep months read-only, and a write into one is answered (and reported) as refused.
 */
export async function checkWriteBlocks(client: Client, names: IndexNames): Promise<void> {
  const written = INDEX_KINDS.map((kind) =>
    kind === 'metrics' ? names.monthAlias(currentMonth()) : names.alias(kind),
  );
  const found = await client.indices.getSettings({
    index: written,
    name: WRITE_BLOCKS.map(([setting]) => setting),
    flat_settings: true,
    ignore_unavailable: true,
    allow_no_indices: true,
  });
  for (const [index, { settings }] of Object.entries(found)) {
    const block = WRITE_BLOCKS.find(([setting]) => String(settings?.[setting]) === 'true');
    if (block) {
      throw refused(block[1], { type: 'cluster_block_exception', reason: `index [${index}] has ${block[0]}` });
    }
  }
}
