import type { Client } from '@elastic/elasticsearch';
import { AdminError, checkInterrupted } from '../../admin.js';
import type { BulkWriter } from '../bulk-writer.js';
import type { IndexNames } from '../indices.js';
import { summaryHead } from '../../summary/run-summary.js';
import { toSession } from '../documents.js';
import { ensureMonthsAhead, monthOf } from '../metric-partitions.js';
import { markPending } from '../summaries.js';
import { exactCount, indicesOf, type Hit } from './index-reads.js';
import { reindexMarkers } from './layout-check.js';
import * as reindexCopy from './reindex-copy.js';
import type { ReindexOptions, ReindexReport } from './reindex-copy.js';

/**
 * monitor-admin reindex of metrics (metric-partitions.ts): each index behind the `-metrics` alias in turn — a month's
 * index, or the single index of a store made before partitioning — is copied into new month indices made from the
 * current template, each document into its session's month; then the read alias and the source's month aliases move
 * to the copies in one atomic update, so readers never see a document twice or miss one. The catch-up by `_seq_no`,
 * the settle time and the write block are those of the other kinds (reindex.ts). The source marker names the index
 * being copied and is set first; the target marker names every month index made for it, so a re-run resumes.
 */
export async function reindexMetrics(
  client: Client,
  writer: BulkWriter,
  names: IndexNames,
  options: ReindexOptions,
): Promise<ReindexReport[]> {
  const alias = names.alias('metrics');
  const markers = reindexMarkers(names, 'metrics');
  const markedSource = (await indicesOf(client, markers.source))[0];
  const markedTargets = await indicesOf(client, markers.target);
  if (markedSource === undefined && markedTargets.length > 0) {
    throw new AdminError(
      `${markedTargets.join(', ')} carry the alias ${markers.target} without a source to reindexCopy.copy from; ` +
        'delete them (they are incomplete copies) and run reindex again',
    );
  }
  const live = await indicesOf(client, alias);
  if (live.length === 0) throw new AdminError(`the alias ${alias} does not exist; create it with "monitor-admin init"`);
  const sources = [
    ...(markedSource === undefined ? [] : [markedSource]),
    ...live.filter((index) => index !== markedSource && !markedTargets.includes(index)),
  ];
  const reports: ReindexReport[] = [];
  for (const source of sources) {
    const resumed = source === markedSource;
    reports.push(
      await reindexSource(client, writer, names, source, resumed ? { targets: markedTargets } : undefined, options),
    );
    checkInterrupted(options.signal, 'the reindex');
  }
  if (!options.dryRun) await ensureMonthsAhead(client, names);
  return reports;
}

async function reindexSource(
  client: Client,
  writer: BulkWriter,
  names: IndexNames,
  source: string,
  /** The month indices an interrupted run made for this source, when it is resumed. */
  resumed: { targets: string[] } | undefined,
  options: ReindexOptions,
): Promise<ReindexReport> {
  const alias = names.alias('metrics');
  const markers = reindexMarkers(names, 'metrics');
  const month = names.monthOfIndex(source);
  await client.indices.refresh({ index: source });
  const report: ReindexReport = {
    kind: 'metrics',
    alias,
    from: source,
    to: month === undefined ? 'one new index per month of its sessions' : `a new index for ${month}`,
    resumed: resumed !== undefined,
    caughtUp: 0,
    sessionsMarked: 0,
    oldIndex: 'untouched',
    documents: await exactCount(client, source),
  };
  if (options.dryRun) return report;

  if (resumed === undefined) {
    await client.indices.updateAliases({ actions: [{ add: { index: source, alias: markers.source } }] });
  }
  const targets = new Map<string, string>((resumed?.targets ?? []).map((t) => [names.monthOfIndex(t) as string, t]));
  let swapped = !(await indicesOf(client, alias)).includes(source);
  /** The copy's index for a month, made on first need (in the read alias at once once the swap is done). */
  const targetFor = async (of: string): Promise<string> => {
    let target = targets.get(of);
    if (target === undefined) {
      target = await reindexCopy.newIndexName(client, names.partition(of));
      const live = swapped && !(await client.indices.existsAlias({ name: names.monthAlias(of) }));
      const aliases = {
        [markers.target]: {},
        ...(swapped ? { [alias]: {} } : {}),
        ...(live ? { [names.monthAlias(of)]: {} } : {}),
      };
      await client.indices.create({ index: target, aliases, wait_for_active_shards: 1 });
      targets.set(of, target);
    }
    return target;
  };
  const monthsOf = month === undefined ? sessionMonths(client, names) : async (page: Hit[]) => page.map(() => month);
  /**
   * A copy after the swap: the read alias shows the copies, which lack what reached the source since the pass before
   * until this one copies it. A session summarized whole meanwhile (an analysis, the sweep, the recovery of a service
   * that restarted) was summarized without those metrics, and its mark removed: each page marks its sessions pending
   * again before it is copied, so the next rebuild reads them: no stored metric is left in no summary and under no
   * mark (issue 40).
   */
  const marking =
    (to: (page: Hit[]) => Promise<string[]>) =>
    async (page: Hit[]): Promise<string[]> => {
      const sessions = [...new Set(page.map((hit) => String(hit._source?.session_h)))];
      const { docs } = await client.mget<Record<string, unknown>>({ index: names.alias('sessions'), ids: sessions });
      const heads = docs.flatMap((doc) =>
        'found' in doc && doc.found && doc._source ? [summaryHead(toSession(doc._source))] : [],
      );
      await markPending(writer, names.alias('summaries'), heads);
      return to(page);
    };
  const route = async (page: Hit[]): Promise<string[]> => {
    const months = await monthsOf(page);
    for (const of of new Set(months)) await targetFor(of);
    return months.map((of) => targets.get(of) as string);
  };

  let checkpoint = -1;
  if (!swapped) {
    const before = await reindexCopy.copyBeforeSwap(client, writer, source, route, options, `copy ${source}`);
    report.caughtUp += before.caughtUp;
    const moves = await monthAliasMoves(client, names, source, targetFor);
    // Every month index has its month alias: a month only the copy found (no service wrote it lately) gets one now.
    const moved = new Set(moves.flatMap((move) => ('add' in move ? [move.add.alias] : [])));
    const unaliased = [];
    for (const [of, index] of targets) {
      const monthAlias = names.monthAlias(of);
      if (!moved.has(monthAlias) && !(await client.indices.existsAlias({ name: monthAlias })))
        unaliased.push({ add: { index, alias: monthAlias } });
    }
    await client.indices.updateAliases({
      actions: [
        { remove: { index: source, alias } },
        ...[...targets.values()].map((index) => ({ add: { index, alias } })),
        ...moves,
        ...unaliased,
      ],
    });
    swapped = true;
    options.progress.note(`${alias} now reads ${[...targets.values()].join(', ')} instead of ${source}`);
    const justAfter = await reindexCopy.copy(client, writer, source, marking(route), before.checkpoint, options);
    report.caughtUp += justAfter.created;
    checkpoint = justAfter.checkpoint;
  }
  // A service that made a month alias on the source since the swap: that month moves too, before the block.
  const late = await monthAliasMoves(client, names, source, targetFor);
  if (late.length > 0) await client.indices.updateAliases({ actions: late });
  await reindexCopy.seal(client, source, options);
  report.caughtUp += (await reindexCopy.copy(client, writer, source, marking(route), checkpoint, options)).created;
  // After the last pass: it may have made a month index.
  await reindexCopy.checkCopied(client, source, [...targets.values()]);
  report.oldIndex = await reindexCopy.retire(client, source, markers.source, options.keepOld);
  const copies = [...targets.values()];
  for (const copyIndex of copies) await reindexCopy.removeAlias(client, copyIndex, markers.target);
  report.to =
    copies.length === 1 ? (copies[0] as string) : `${copies.length} month indices (${copies.sort().join(', ')})`;
  return report;
}

/** The alias actions that move each month alias of `source` to that month's copy (made if need be). */
async function monthAliasMoves(
  client: Client,
  names: IndexNames,
  source: string,
  targetFor: (month: string) => Promise<string>,
): Promise<Array<{ remove: { index: string; alias: string } } | { add: { index: string; alias: string } }>> {
  const aliases = Object.keys((await client.indices.getAlias({ index: source }))[source]?.aliases ?? {});
  const moves = [];
  for (const monthAlias of aliases) {
    const month = names.monthOfAlias(monthAlias);
    if (month === undefined) continue;
    const index = await targetFor(month);
    moves.push({ remove: { index: source, alias: monthAlias } }, { add: { index, alias: monthAlias } });
  }
  return moves;
}

/**
 * The month of each metric of a page of the single index: its session's run date (looked up once per session), or
 * its own start time when its session is gone.
 */
function sessionMonths(client: Client, names: IndexNames): (page: Hit[]) => Promise<string[]> {
  const monthOfSession = new Map<string, string>();
  return async (page) => {
    const sessionOf = (hit: Hit): string => String(hit._source?.session_h);
    const unseen = [...new Set(page.map(sessionOf))].filter((h) => !monthOfSession.has(h));
    if (unseen.length > 0) {
      const { docs } = await client.mget<{ run_date: string }>({
        index: names.alias('sessions'),
        ids: unseen,
        _source: ['run_date'],
      });
      for (const doc of docs) {
        if ('found' in doc && doc.found && doc._source) monthOfSession.set(doc._id, monthOf(doc._source.run_date));
      }
    }
    return page.map((hit) => monthOfSession.get(sessionOf(hit)) ?? monthOf(String(hit._source?.item_start_time)));
  };
}
