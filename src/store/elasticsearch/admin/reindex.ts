import type { Client } from '@elastic/elasticsearch';
import { AdminError } from '../../admin.js';
import { reindexMarkers } from './layout-check.js';
import { exactCount, indicesOf } from './index-reads.js';
import type { BulkWriter } from '../bulk-writer.js';
import { reindexMetrics } from './reindex-metrics.js';
import { markSessionsCopiedInexactly } from './reindex-summaries.js';
import * as reindexCopy from './reindex-copy.js';
import type { ReindexOptions, ReindexReport } from './reindex-copy.js';

export type { ReindexOptions, ReindexReport } from './reindex-copy.js';
import { INDEX_KINDS, MAPPING_VERSION, templateBody, type IndexKind, type IndexNames } from '../indices.js';

/**
 * monitor-admin reindex, without Elasticsearch's reindex module: each kind's index is copied (point in time +
 * search_after + `_bulk` create with the same `_id`s) into a new index made from the current template, then its
 * alias is swapped atomically. Writes that reach the old index during the copy are caught by `_seq_no`: the local
 * checkpoint read before each pass bounds what that pass saw, and the next pass copies everything above it —
 * several passes before the swap (so the new index is nearly complete when it goes live), one after it, once the
 * old index is write-blocked (the block waits for the writes in flight). Documents are immutable and keyed, so a
 * document copied twice is created once — but for summaries, which change in place: reindex-summaries.ts.
 *
 * Progress is kept in the cluster: two marker aliases name the source and the target of a reindex in progress, so
 * a re-run after an interruption resumes it (the copy starts over, its creates then being no-ops).
 */

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
  for (const kind of INDEX_KINDS) {
    if (kind === 'metrics') reports.push(...(await reindexMetrics(client, writer, names, options)));
    else reports.push(await reindexKind(client, writer, names, kind, options));
  }
  return reports;
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
    if (!options.dryRun) await reindexCopy.removeAlias(client, markedSource, markers.source);
    markedSource = undefined;
  }
  const resumed = markedTarget !== undefined;
  const target = markedTarget ?? (await reindexCopy.newIndexName(client, names.versioned(kind, MAPPING_VERSION)));
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
    sessionsMarked: 0,
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
      const before = await reindexCopy.copyBeforeSwap(client, writer, source, target, options, `copy ${kind}`);
      report.caughtUp += before.caughtUp;
      if (kind === 'summaries')
        report.sessionsMarked += await markSessionsCopiedInexactly(client, writer, source, target);
      await client.indices.updateAliases({
        actions: [{ remove: { index: source, alias } }, { add: { index: target, alias, is_write_index: true } }],
      });
      options.progress.note(`${alias} now points at ${target}`);
      // At once: what reached the old index since the last pass becomes visible through the alias again.
      const justAfter = await reindexCopy.copy(client, writer, source, target, before.checkpoint, options);
      report.caughtUp += justAfter.created;
      checkpoint = justAfter.checkpoint;
    }
    await reindexCopy.seal(client, source, options);
    if (kind === 'summaries') {
      // Not a last copy pass (after an interruption it would start over, bringing back what was deleted since).
      report.sessionsMarked += await markSessionsCopiedInexactly(client, writer, source, target);
    } else {
      report.caughtUp += (await reindexCopy.copy(client, writer, source, target, checkpoint, options)).created;
      await reindexCopy.checkCopied(client, source, [target]);
    }
    report.oldIndex = await reindexCopy.retire(client, source, markers.source, options.keepOld);
  }
  await reindexCopy.removeAlias(client, target, markers.target);
  return report;
}
