import { errors, type Client, type estypes } from '@elastic/elasticsearch';
import type { ChangeStep } from '../../domain/changes/steps.js';
import type { TriageTransition } from '../../domain/changes/triage.js';
import { StoreUnavailableError } from '../errors.js';
import type { TriageRecord } from '../store.js';
import { withTransition } from '../store-triage.js';
import { isNotFound } from './errors.js';
import type { IndexNames } from './indices.js';

/**
 * The triaged changes on Elasticsearch: one document per change in `<prefix>-triage`, its `_id` the change's id (which
 * hashes the pipeline too), the record whole in `record` (stored, not indexed). A transition is a read and a write
 * conditional on the sequence number read (if_seq_no): of two replicas at once, the second is refused, reads the
 * first's record and appends to it. Written with refresh=wait_for, so that every replica's next read has it.
 */

/** Reads and conditional writes tried before a triage is answered 503 (each loss means another triage won). */
const TRIAGE_ATTEMPTS = 8;
/** A pipeline's records read per search (search_after by id). */
const PAGE = 1_000;

interface TriageDocument {
  id: string;
  pipeline: string;
  record: TriageRecord;
}

const isConflict = (error: unknown): boolean => error instanceof errors.ResponseError && error.statusCode === 409;

export class TriageIndex {
  constructor(
    private readonly client: Client,
    private readonly names: IndexNames,
  ) {}

  private get alias(): string {
    return this.names.alias('triage');
  }

  async list(pipeline: string): Promise<TriageRecord[]> {
    const records: TriageRecord[] = [];
    let after: estypes.SortResults | undefined;
    for (;;) {
      const page = await this.client.search<TriageDocument>({
        index: this.alias,
        size: PAGE,
        query: { term: { pipeline } },
        sort: [{ id: 'asc' }],
        search_after: after,
      });
      for (const hit of page.hits.hits) if (hit._source) records.push(hit._source.record);
      if (page.hits.hits.length < PAGE) return records;
      after = page.hits.hits.at(-1)?.sort;
    }
  }

  async find(pipeline: string, id: string): Promise<TriageRecord | undefined> {
    const found = await this.read(id);
    return found?.record.pipeline === pipeline ? found.record : undefined;
  }

  async record(
    pipeline: string,
    change: ChangeStep,
    next: (stored: TriageRecord | undefined) => TriageTransition,
  ): Promise<TriageRecord> {
    for (let attempt = 0; attempt < TRIAGE_ATTEMPTS; attempt += 1) {
      const found = await this.read(change.id);
      const record = withTransition(found?.record, pipeline, change, next);
      const document: TriageDocument = { id: record.id, pipeline, record };
      try {
        if (found)
          await this.client.index({
            index: this.alias,
            id: record.id,
            document,
            if_seq_no: found.seqNo,
            if_primary_term: found.primaryTerm,
            refresh: 'wait_for',
          });
        else await this.client.create({ index: this.alias, id: record.id, document, refresh: 'wait_for' });
        return record;
      } catch (error) {
        if (!isConflict(error)) throw error;
      }
    }
    throw new StoreUnavailableError(
      `change ${change.id} was triaged by others ${TRIAGE_ATTEMPTS} times while this triage was applied; send it again`,
    );
  }

  private async read(id: string): Promise<{ record: TriageRecord; seqNo: number; primaryTerm: number } | undefined> {
    try {
      const found = await this.client.get<TriageDocument>({ index: this.alias, id, realtime: true });
      if (!found._source || found._seq_no === undefined || found._primary_term === undefined) return undefined;
      return { record: found._source.record, seqNo: found._seq_no, primaryTerm: found._primary_term };
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }
}
