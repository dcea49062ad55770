import { setTimeout as sleep } from 'node:timers/promises';
import type { Client, estypes } from '@elastic/elasticsearch';
import { AdminError, checkInterrupted, type LongOperation } from '../../admin.js';
import { reindexMarkers } from './layout-check.js';
import { exactCount, indicesOf, localCheckpoint, withPointsInTime } from './index-reads.js';
import type { BulkWriter } from '../bulk-writer.js';
import { isNotFound } from '../errors.js';
import { INDEX_KINDS, MAPPING_VERSION, templateBody, type IndexKind, type IndexNames } from '../indices.js';

/**
 * monitor-admin reindex, without Elasticsearch's reindex module: each kind's index is copied (point in time +
 * search_after + `_bulk` create with the same `_id`s) into a new index made from the current template, then its
 * alias is swapped atomically. Writes that reach the old index during the copy are caught by `_seq_no`: the local
 * checkpoint read before each pass bounds what that pass saw, and the next pass copies everything above it —
 * several passes before the swap (so the new index is nearly complete when it goes live), one after it, once the
 * old index is write-blocked (the block waits for the writes in flight). Documents are immutable and keyed, so a
 * document copied twice is created once.
 *
 * Progress is kept in the cluster: two marker aliases name the source and the target of a reindex in progress, so
 * a re-run after an interruption resumes it (the copy starts over, its creates then being no-ops).
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
  oldIndex: 'deleted' | 'kept' | 'untouched';
}

/** Catch-up passes before the swap stop once a pass copies fewer documents than this. */
const SMALL_PASS = 100;
const MAX_PASSES_BEFORE_SWAP = 5;
const COPY_PAGE = 2000;

export async function reindex(
  client: Client,
  writer: BulkWriter,
  names: IndexNames,
  options: ReindexOptions,
): Promise<ReindexReport[]> {
  if (!options.dryRun) {
    // The new indices take their mappings from the templates: make those the current ones first.
    for (const kind of INDEX_KINDS) await client.indices.putIndexTemplate(templateBody(names, kind));
  }
  const reports: ReindexReport[] = [];
  for (const kind of INDEX_KINDS) reports.push(await reindexKind(client, writer, names, kind, options));
  return reports;
}

async function newIndexName(client: Client, names: IndexNames, kind: IndexKind): Promise<string> {
  const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 17);
  for (let n = 0; ; n += 1) {
    const name = `${names.versioned(kind, MAPPING_VERSION)}-${stamp}${n === 0 ? '' : `-${n}`}`;
    if (!(await client.indices.exists({ index: name }))) return name;
  }
}

async function reindexKind(
  client: Client,
  writer: BulkWriter,
  names: IndexNames,
  kind: IndexKind,
  options: ReindexOptions,
): Promise<ReindexReport> {
  const alias = names.alias(kind);
  const markers = reindexMarkers(names, kind);
  const live = await indicesOf(client, alias);
  if (live.length === 0) throw new AdminError(`the alias ${alias} does not exist; create it with "monitor-admin init"`);
  if (live.length > 1)
    throw new AdminError(
      `the alias ${alias} points at ${live.length} indices (${live.join(', ')}); it must point at one`,
    );
  const current = live[0] as string;
  const markedTarget = (await indicesOf(client, markers.target))[0];
  let markedSource = (await indicesOf(client, markers.source))[0];
  if (markedTarget === undefined && markedSource !== undefined) {
    // The target is made first, so a lone source marker is left from a target deleted by hand: start afresh.
    if (!options.dryRun) await removeAlias(client, markedSource, markers.source);
    markedSource = undefined;
  }
  const resumed = markedTarget !== undefined;
  const target = markedTarget ?? (await newIndexName(client, names, kind));
  // Resuming: the source is the marked one, else (marker not yet set) the live index unless it is the target already.
  const source = markedSource ?? (current === target ? undefined : current);
  if (source !== undefined) await client.indices.refresh({ index: source });
  const report: ReindexReport = {
    kind,
    alias,
    from: source,
    to: target,
    resumed,
    caughtUp: 0,
    oldIndex: 'untouched',
    documents: source === undefined ? 0 : await exactCount(client, source),
  };
  if (options.dryRun) return report;

  if (!resumed) {
    await client.indices.create({ index: target, aliases: { [markers.target]: {} }, wait_for_active_shards: 1 });
  }
  if (source !== undefined) {
    if (markedSource === undefined)
      await client.indices.updateAliases({ actions: [{ add: { index: source, alias: markers.source } }] });
    let checkpoint = -1;
    if (current === source) {
      checkpoint = (await copy(client, writer, source, target, -1, options, `copy ${kind}`)).checkpoint;
      for (let pass = 0; pass < MAX_PASSES_BEFORE_SWAP; pass += 1) {
        const caughtUp = await copy(client, writer, source, target, checkpoint, options);
        report.caughtUp += caughtUp.created;
        checkpoint = caughtUp.checkpoint;
        if (caughtUp.created < SMALL_PASS) break;
      }
      await client.indices.updateAliases({
        actions: [{ remove: { index: source, alias } }, { add: { index: target, alias, is_write_index: true } }],
      });
      options.progress.note(`${alias} now points at ${target}`);
      // At once: what reached the old index since the last pass becomes visible through the alias again.
      const justAfter = await copy(client, writer, source, target, checkpoint, options);
      report.caughtUp += justAfter.created;
      checkpoint = justAfter.checkpoint;
    }
    checkInterrupted(options.signal, 'the reindex');
    // Writes routed to the old index just before the swap land within moments; the write block then waits for
    // any still in flight, after which the old index cannot change and a last pass makes the copy complete.
    await sleep(options.settleMs ?? 2000);
    await client.indices.addBlock({ index: source, block: 'write' });
    report.caughtUp += (await copy(client, writer, source, target, checkpoint, options)).created;
    await client.indices.refresh({ index: [source, target] });
    const [inSource, inTarget] = [await exactCount(client, source), await exactCount(client, target)];
    if (inTarget < inSource) {
      throw new AdminError(
        `${target} holds ${inTarget} documents, fewer than the ${inSource} of ${source}; nothing was deleted, run reindex again`,
      );
    }
    if (options.keepOld) {
      await removeAlias(client, source, markers.source);
      report.oldIndex = 'kept';
    } else {
      await client.indices.delete({ index: source });
      report.oldIndex = 'deleted';
    }
  }
  await removeAlias(client, target, markers.target);
  return report;
}

interface Pass {
  /** Read before the pass's view was taken: every write at or below it is in the copy. */
  checkpoint: number;
  /** Documents created in the target (the others were there already). */
  created: number;
}

/** Copies the documents of `source` with a `_seq_no` above `above` into `target`, keeping `_id` and `_source`. */
async function copy(
  client: Client,
  writer: BulkWriter,
  source: string,
  target: string,
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
          const documents = page.map((hit) => ({
            action: 'create' as const,
            index: target,
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

async function removeAlias(client: Client, index: string, alias: string): Promise<void> {
  try {
    await client.indices.deleteAlias({ index, name: alias });
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}
