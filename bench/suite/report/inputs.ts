/** The JSON results of one run, as the report's sections read them; a step that did not run leaves its field empty. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CeilingResult } from '../bulk-ceiling.js';
import type { BulkResult } from '../bulk.js';
import type { BulkOneResult } from '../bulk-one.js';
import type { IngestLevel, IngestResult } from '../ingest.js';
import type { QueriesResult } from '../queries.js';

export interface RunResults {
  /** The run's folder: the steps that render their own section leave it there as markdown. */
  dir: string;
  ingest: IngestResult[];
  ceiling?: CeilingResult;
  bulkOne?: BulkOneResult;
  bulk?: BulkResult;
  queries: QueriesResult[];
}

// The order of these lists is the order of the rows and columns in the report.
const INGEST_TARGETS = ['sqlite', 'sqlite-normal', 'elasticsearch', 'original'];
const QUERY_TARGETS = ['sqlite', 'elasticsearch', 'original'];

export function readResults(dir: string): RunResults {
  // The files are this run's own output, written from these same types: they are trusted, not validated.
  const read = (name: string): unknown => {
    const file = join(dir, name);
    return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
  };
  return {
    dir,
    ingest: INGEST_TARGETS.map((t) => read(`ingest-${t}.json`) as IngestResult | undefined).filter(
      (r): r is IngestResult => r !== undefined,
    ),
    ceiling: read('ceiling.json') as CeilingResult | undefined,
    bulkOne: read('bulk-one.json') as BulkOneResult | undefined,
    bulk: read('bulk.json') as BulkResult | undefined,
    queries: QUERY_TARGETS.map((t) => read(`queries-${t}.json`) as QueriesResult | undefined).filter(
      (r): r is QueriesResult => r !== undefined,
    ),
  };
}

/** One ingest target's figures at one concurrency. */
export function ingestLevel(ingest: IngestResult[], target: string, clients: number): IngestLevel | undefined {
  return ingest.find((r) => r.target === target)?.levels.find((l) => l.clients === clients);
}

/** The concurrencies the queries were measured at, over every store, ascending. */
export function queryLevels(queries: QueriesResult[]): number[] {
  return [...new Set(queries.flatMap((r) => r.queries.map((q) => q.clients)))].sort((a, b) => a - b);
}
