import { setTimeout as sleep } from 'node:timers/promises';
import type { Client, estypes } from '@elastic/elasticsearch';
import { AdminError, checkInterrupted, type LongOperation } from '../../admin.js';
import type { BulkWriter } from '../bulk-writer.js';
import type { IndexKind } from '../indices.js';
import { isNotFound } from '../errors.js';
import { exactCount, localCheckpoint, withPointsInTime, type Hit } from './index-reads.js';

/**
 * What monitor-admin reindex is made of, for one kind's single index (reindex.ts) and for the month indices of
 * metrics (reindex-metrics.ts): its options and report, and the copy pass that catches up by `_seq_no`.
 */

export interface ReindexOptions extends LongOperation {
  dryRun: boolean;
  /** Keep the old index (write-blocked, without its alias) instead of deleting it. */
  keepOld: boolean;
  /** How long to wait after the swap for writes routed to the old index before it to land (default 2000 ms). */
  settleMs?: number;
}

export interface ReindexReport {
  kind: IndexKind;
  alias: string;
  /** The index the alias pointed at (undefined when only the clean-up of an earlier run was left). */
  from: string | undefined;
  to: string;
  /** Documents in the old index when the copy started. */
  documents: number;
  /** This run resumes an interrupted one. */
  resumed: boolean;
  /** Documents created in the new index by the catch-up passes (written during the copy). */
  caughtUp: number;
  /** Summaries: the sessions whose documents the copy did not get exactly, marked pending (reindex-summaries.ts). */
  sessionsMarked: number;
  oldIndex: 'deleted' | 'kept' | 'untouched';
}

/** Catch-up passes before the swap stop once a pass copies fewer documents than this. */
const SMALL_PASS = 100;
const MAX_PASSES_BEFORE_SWAP = 5;
const COPY_PAGE = 2000;

/** A new index name: `base` with the time as a suffix, and a counter when that is taken. */
export async function newIndexName(client: Client, base: string): Promise<string> {
  const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 17);
  for (let n = 0; ; n += 1) {
    const name = `${base}-${stamp}${n === 0 ? '' : `-${n}`}`;
    if (!(await client.indices.exists({ index: name }))) return name;
  }
}

export interface Pass {
  /** Read before the pass's view was taken: every write at or below it is in the copy. */
  checkpoint: number;
  /** Documents created in the target (the others were there already). */
  created: number;
}

/** Where a copied document goes: one index, or one chosen per page of documents (reindex-metrics.ts). */
export type CopyTarget = string | ((page: Hit[]) => Promise<string[]>);

/**
 * Copies the documents of `source` with a `_seq_no` above `above` into `target` (or each into the index `target`
 * routes it to), keeping `_id` and `_source`.
 */
export async function copy(
  client: Client,
  writer: BulkWriter,
  source: string,
  target: CopyTarget,
  above: number,
  options: ReindexOptions,
  label?: string,
): Promise<Pass> {
  const pass: Pass = { checkpoint: await localCheckpoint(client, source), created: 0 };
  await client.indices.refresh({ index: source });
  const query: estypes.QueryDslQueryContainer = above < 0 ? { match_all: {} } : { range: { _seq_no: { gt: above } } };
  if (label) options.progress.start(label, await exactCount(client, source, query));
  try {
    await withPointsInTime(client, [source], async (pits) => {
      for (const pit of pits) {
        for await (const page of pit.pages(query, ['_shard_doc'], { size: COPY_PAGE })) {
          checkInterrupted(options.signal, 'the reindex');
          const targets = typeof target === 'string' ? undefined : await target(page);
          const documents = page.map((hit, i) => ({
            action: 'create' as const,
            index: targets?.[i] ?? (target as string),
            id: hit._id as string,
            document: hit._source ?? {},
          }));
          pass.created += (await writer.writeAll(documents)).done;
          if (label) options.progress.advance(page.length);
        }
      }
    });
  } finally {
    if (label) options.progress.stop();
  }
  return pass;
}

export async function removeAlias(client: Client, index: string, alias: string): Promise<void> {
  try {
    await client.indices.deleteAlias({ index, name: alias });
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}

/**
 * The copy before a swap: everything, then catch-up passes of what was written meanwhile until one copies fewer than
 * SMALL_PASS (at most MAX_PASSES_BEFORE_SWAP), so that the copy is nearly complete when it goes live.
 */
export async function copyBeforeSwap(
  client: Client,
  writer: BulkWriter,
  source: string,
  target: CopyTarget,
  options: ReindexOptions,
  label: string,
): Promise<{ checkpoint: number; caughtUp: number }> {
  let { checkpoint } = await copy(client, writer, source, target, -1, options, label);
  let caughtUp = 0;
  for (let pass = 0; pass < MAX_PASSES_BEFORE_SWAP; pass += 1) {
    const next = await copy(client, writer, source, target, checkpoint, options);
    caughtUp += next.created;
    checkpoint = next.checkpoint;
    if (next.created < SMALL_PASS) break;
  }
  return { checkpoint, caughtUp };
}

/**
 * After the swap: writes routed to the old index just before it land within moments (settleMs); the write block then
 * waits for any still in flight, after which the old index cannot change, and a last copy pass makes the copy complete.
 */
export async function seal(client: Client, source: string, options: ReindexOptions): Promise<void> {
  checkInterrupted(options.signal, 'the reindex');
  await sleep(options.settleMs ?? 2000);
  await client.indices.addBlock({ index: source, block: 'write' });
}

/**
 * Before anything is deleted, of documents that are never deleted nor written again: the copies hold at least as many
 * as the sealed old index.
 */
export async function checkCopied(client: Client, source: string, into: string[]): Promise<void> {
  await client.indices.refresh({ index: [source, ...into] });
  const inSource = await exactCount(client, source);
  const inCopies = into.length === 0 ? 0 : await exactCount(client, into.join(','));
  if (inCopies < inSource) {
    throw new AdminError(
      `${into.join(', ') || 'the copy'} hold${into.length === 1 ? 's' : ''} ${inCopies} documents, fewer than the ${inSource} of ${source}; nothing was deleted, run reindex again`,
    );
  }
}

/** The old index, once copied: kept (write-blocked, without its marker) or deleted. */
export async function retire(
  client: Client,
  source: string,
  marker: string,
  keepOld: boolean,
): Promise<'kept' | 'deleted'> {
  if (keepOld) {
    await removeAlias(client, source, marker);
    return 'kept';
  }
  await client.indices.delete({ index: source });
  return 'deleted';
}
