/**
 * Where the bytes of a metric go on Elasticsearch, and what layout choices save: the metrics of a kept scale run
 * (`BENCH_SCALE_KEEP=1 BENCH_SCALE_METRICS=200000 npx tsx bench/studies/scale/scale.ts elasticsearch`) are copied, as
 * they are, into one index per variant, each force-merged to one segment so that the variants compare like for like;
 * then the bytes per metric of each, and the per-field breakdown (`_disk_usage`) of the first and the last.
 *
 *   ELASTICSEARCH_URL=… npx tsx bench/studies/scale/es-bytes.ts <index or pattern of the kept metrics>
 *
 * Variants: the template as it was before (LZ4 stored fields, every field indexed), then each change this version
 * made in turn (`index.codec: best_compression`, the `id` tie-breaker for sorting only, the fields no query uses kept
 * in `_source` only), and synthetic `_source`, which needs an Elastic subscription (not used by default).
 */
import { Client, type estypes } from '@elastic/elasticsearch';
import { IndexNames, templateBody } from '../../../src/store/elasticsearch/indices.js';
import { ES_URL } from '../../lib/es.js';

const source = process.argv[2];
if (!source) throw new Error('usage: npx tsx bench/studies/scale/es-bytes.ts <index or pattern of the kept metrics>');
const client = new Client({ node: ES_URL });
const template = templateBody(new IndexNames('bytes'), 'metrics').template ?? {};
const mappings = template.mappings as estypes.MappingTypeMapping;
const properties = mappings.properties ?? {};

/** What this version's template makes searchable that the one before also indexed: `id` and the fields never searched. */
const BEFORE = Object.fromEntries(
  Object.entries(properties)
    .filter(([, property]) => (property as { index?: boolean }).index === false)
    .map(([field]) => [field, { type: 'keyword' } as const]),
);
const ID_SORTED = { id: { type: 'keyword', index: false } } as const;
/** Synthetic `_source` rebuilds every field from its doc values: the read-back-only fields keep theirs. */
const WITH_DOC_VALUES = Object.fromEntries(
  Object.keys(BEFORE)
    .filter((field) => field !== 'id')
    .map((field) => [field, { type: 'keyword', index: false } as const]),
);

const VARIANTS: Array<{ name: string; settings: Record<string, unknown>; properties: typeof properties }> = [
  {
    name: 'before: LZ4, every field indexed',
    settings: { codec: 'default' },
    properties: { ...properties, ...BEFORE },
  },
  {
    name: 'best_compression (zstd stored fields)',
    settings: { codec: 'best_compression' },
    properties: { ...properties, ...BEFORE },
  },
  {
    name: '+ id for sorting only',
    settings: { codec: 'best_compression' },
    properties: { ...properties, ...BEFORE, ...ID_SORTED },
  },
  {
    name: '+ fields never searched kept in _source only (this version)',
    settings: { codec: 'best_compression' },
    properties,
  },
  {
    name: 'synthetic _source (an Elastic subscription feature), best_compression',
    settings: { codec: 'best_compression', 'mapping.source.mode': 'synthetic' },
    properties: { ...properties, ...ID_SORTED, ...WITH_DOC_VALUES },
  },
];
async function copyInto(target: string): Promise<number> {
  let copied = 0;
  const pit = await client.openPointInTime({ index: source as string, keep_alive: '5m' });
  try {
    let after: estypes.SortResults | undefined;
    for (;;) {
      const page = await client.search<Record<string, unknown>>({
        pit: { id: pit.id, keep_alive: '5m' },
        size: 5000,
        sort: ['_shard_doc'],
        ...(after ? { search_after: after } : {}),
      });
      const hits = page.hits.hits;
      if (hits.length === 0) return copied;
      const operations = hits.flatMap((hit) => [{ create: { _index: target, _id: hit._id } }, hit._source ?? {}]);
      const response = await client.bulk({ operations });
      if (response.errors) throw new Error(`bulk into ${target} refused a document`);
      copied += hits.length;
      after = hits.at(-1)?.sort;
    }
  } finally {
    await client.closePointInTime({ id: pit.id });
  }
}

interface FieldUsage {
  total_in_bytes: number;
  inverted_index?: { total_in_bytes: number };
  stored_fields_in_bytes?: number;
  doc_values_in_bytes?: number;
  points_in_bytes?: number;
}

async function fieldsOf(index: string): Promise<Record<string, FieldUsage>> {
  const usage = (await client.indices.diskUsage({ index, run_expensive_tasks: true })) as unknown as Record<
    string,
    { fields: Record<string, FieldUsage> }
  >;
  return usage[index]?.fields ?? {};
}

const rows: string[] = [];
const breakdowns: string[] = [];
for (const [i, variant] of VARIANTS.entries()) {
  const index = `bench-bytes-${i}`;
  await client.indices.delete({ index, ignore_unavailable: true });
  await client.indices.create({
    index,
    settings: { number_of_shards: 1, number_of_replicas: 0, ...variant.settings },
    mappings: { dynamic: 'strict', properties: variant.properties },
  });
  const docs = await copyInto(index);
  await client.indices.refresh({ index });
  await client.indices.forcemerge({ index, max_num_segments: 1, wait_for_completion: true });
  await client.indices.refresh({ index });
  const stats = await client.indices.stats({ index, metric: ['store'] });
  const bytes = stats._all.primaries?.store?.size_in_bytes ?? 0;
  rows.push(
    `| ${variant.name} | ${docs.toLocaleString('en')} | ${bytes.toLocaleString('en')} | ${(bytes / docs).toFixed(1)} |`,
  );
  if (i === 0 || variant.name.includes('this version') || i === VARIANTS.length - 1) {
    const fields = Object.entries(await fieldsOf(index)).sort((a, b) => b[1].total_in_bytes - a[1].total_in_bytes);
    breakdowns.push(
      `\n### ${variant.name}: bytes per metric by field\n\n| field | total | inverted index | stored | doc values | points |\n|---|--:|--:|--:|--:|--:|`,
      ...fields
        .filter(([, usage]) => usage.total_in_bytes > 0)
        .map(
          ([field, usage]) =>
            `| ${field} | ${(usage.total_in_bytes / docs).toFixed(1)} | ${((usage.inverted_index?.total_in_bytes ?? 0) / docs).toFixed(1)} | ${((usage.stored_fields_in_bytes ?? 0) / docs).toFixed(1)} | ${((usage.doc_values_in_bytes ?? 0) / docs).toFixed(1)} | ${((usage.points_in_bytes ?? 0) / docs).toFixed(1)} |`,
        ),
    );
  }
  await client.indices.delete({ index });
}
console.log(
  [
    `Metrics of ${source}, each variant force-merged to one segment.\n`,
    '| variant | metrics | bytes | bytes / metric |',
    '|---|--:|--:|--:|',
    ...rows,
    ...breakdowns,
  ].join('\n'),
);
await client.close();
