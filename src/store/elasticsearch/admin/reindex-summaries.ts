import type { Client } from '@elastic/elasticsearch';
import type { SummaryHead } from '../../summary/run-summary.js';
import type { BulkWriter } from '../bulk-writer.js';
import { markPending } from '../summaries.js';
import { withPointsInTime, type Hit, type PointInTime } from './index-reads.js';

/**
 * The summaries index changes in place while the service runs: pending markers are written again and deleted, a
 * session's records are replaced by the records of a rebuild and deleted. A copy by `_seq_no` (reindex-copy.ts) made
 * for immutable documents is not exact for it: a delete leaves nothing to copy (the copy keeps the document), and a
 * document written again after it was copied is refused as a conflict (the copy keeps the old one); nor does a count
 * check hold, deletes through the alias after the swap leaving the copy with fewer documents than the old index.
 *
 * Summaries are made from metrics, so their copy need not be exact, only known to be inexact where it is: every session
 * whose documents differ between the old index and the copy — a document in one and not the other, or one whose
 * marker time, record place or metric count differ — is marked pending in the copy. The analyses summarize a pending
 * session whole from its metrics before they read it, and the sweep does once the mark has settled (summaries.ts), so
 * no answer reads what the copy got wrong. Run before the swap (what changed so far, so that the copy goes live marked) and once the old
 * index is sealed (whatever changed since). Documents of no session (the `complete` state, an interrupted purge's
 * contexts) are created in the copy when it lacks them. How many sessions were marked.
 */
export async function markSessionsCopiedInexactly(
  client: Client,
  writer: BulkWriter,
  source: string,
  target: string,
): Promise<number> {
  await client.indices.refresh({ index: [source, target] });
  const [inSource, inTarget] = [await fingerprints(client, source), await fingerprints(client, target)];
  const differing = new Map<string, SummaryHead>();
  const missing: string[] = [];
  for (const [id, { fingerprint, head }] of inSource) {
    const copied = inTarget.get(id);
    inTarget.delete(id);
    if (head === undefined) {
      if (copied === undefined) missing.push(id);
    } else if (copied?.fingerprint !== fingerprint) differing.set(head.session_h, head);
  }
  // What is left is in the copy only: deleted from the old index after it was copied, or written after the swap.
  for (const { head } of inTarget.values()) if (head !== undefined) differing.set(head.session_h, head);
  if (missing.length > 0) {
    const { docs } = await client.mget<Record<string, unknown>>({ index: source, ids: missing });
    await writer.writeAll(
      docs.flatMap((doc) =>
        'found' in doc && doc.found
          ? [{ action: 'create' as const, index: target, id: doc._id, document: doc._source ?? {} }]
          : [],
      ),
    );
  }
  await markPending(writer, target, [...differing.values()]);
  return differing.size;
}

/** What tells two versions of a summaries document apart (a record's body follows from its place and its count). */
const COMPARED = ['id', 'state', 'seq', 'metrics', 'session_h', 'pipeline', 'build', 'run_date'];

/** Each document's fingerprint and session, by `_id`. */
async function fingerprints(
  client: Client,
  index: string,
): Promise<Map<string, { fingerprint: string; head: SummaryHead | undefined }>> {
  const found = new Map<string, { fingerprint: string; head: SummaryHead | undefined }>();
  await withPointsInTime(client, [index], async ([pit]) => {
    for await (const page of (pit as PointInTime).pages({ match_all: {} }, ['_shard_doc'], {
      size: 5000,
      source: COMPARED,
    })) {
      for (const hit of page) found.set(hit._id as string, { fingerprint: fingerprint(hit), head: headOf(hit) });
    }
  });
  return found;
}

const fingerprint = (hit: Hit): string => JSON.stringify(COMPARED.map((field) => hit._source?.[field] ?? null));

/** The session a document belongs to, as a marker names it; none for the state documents. */
function headOf(hit: Hit): SummaryHead | undefined {
  const source = hit._source ?? {};
  if (typeof source.session_h !== 'string') return undefined;
  const { session_h, pipeline, build, run_date } = source as unknown as SummaryHead;
  return { session_h, pipeline, build, run_date };
}
