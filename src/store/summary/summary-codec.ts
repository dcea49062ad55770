import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { MEASURE_FIELDS, type RunSummary } from './run-summary.js';

/**
 * A run summary as bytes, the same on both stores (a SQLite BLOB; an Elasticsearch `binary` field): a JSON header
 * with the session, the dictionaries and the variants, then the numeric columns as they are in memory (keys and the
 * five measures as 64-bit doubles, the dictionary indexes as 32-bit integers), the whole deflated. Decoding is a view
 * over the inflated bytes, not a parse of numbers: a 10,000-metric record decodes in about a millisecond.
 */

type Header = Omit<RunSummary, 'keys' | 'context' | 'component' | 'kind' | 'item' | 'values'> & { count: number };

/** Numeric columns in the order they are laid out: doubles first (8-byte aligned), then the indexes. */
const INDEX_COLUMNS = ['context', 'component', 'kind', 'item'] as const;

/** Deflate level: 1, the fastest; the variants' text is what compresses, and it compresses at any level. */
const LEVEL = 1;

export function encodeSummary(summary: RunSummary): Buffer {
  const count = summary.keys.length;
  const header: Header = {
    session_h: summary.session_h,
    pipeline: summary.pipeline,
    build: summary.build,
    run_date: summary.run_date,
    contexts: summary.contexts,
    components: summary.components,
    kinds: summary.kinds,
    items: summary.items,
    variants: summary.variants,
    count,
  };
  const text = Buffer.from(JSON.stringify(header));
  // The header's length, the header, padding to 8 bytes, the columns.
  const start = Math.ceil((4 + text.length) / 8) * 8;
  const bytes = Buffer.alloc(start + count * 8 * (1 + MEASURE_FIELDS.length) + count * 4 * INDEX_COLUMNS.length);
  bytes.writeUInt32LE(text.length, 0);
  text.copy(bytes, 4);
  let offset = start;
  for (const column of [summary.keys, ...MEASURE_FIELDS.map((field) => summary.values[field])]) {
    Buffer.from(column.buffer, column.byteOffset, column.byteLength).copy(bytes, offset);
    offset += count * 8;
  }
  for (const name of INDEX_COLUMNS) {
    const column = summary[name];
    Buffer.from(column.buffer, column.byteOffset, column.byteLength).copy(bytes, offset);
    offset += count * 4;
  }
  return deflateRawSync(bytes, { level: LEVEL });
}

export function decodeSummary(deflated: Uint8Array): RunSummary {
  const inflated = inflateRawSync(deflated);
  // Typed arrays view the bytes directly where they are 8-byte aligned (zlib's output is its own buffer); else a copy.
  const bytes = inflated.byteOffset % 8 === 0 ? inflated : Uint8Array.prototype.slice.call(inflated);
  const base = bytes.byteOffset;
  const view = Buffer.from(bytes.buffer, base, bytes.length);
  const length = view.readUInt32LE(0);
  const { count, ...header } = JSON.parse(view.toString('utf8', 4, 4 + length)) as Header;
  let offset = Math.ceil((4 + length) / 8) * 8;
  const doubles = (): Float64Array => {
    const column = new Float64Array(bytes.buffer, base + offset, count);
    offset += count * 8;
    return column;
  };
  const integers = (): Uint32Array => {
    const column = new Uint32Array(bytes.buffer, base + offset, count);
    offset += count * 4;
    return column;
  };
  const keys = doubles();
  const values = Object.fromEntries(MEASURE_FIELDS.map((field) => [field, doubles()])) as RunSummary['values'];
  const [context, component, kind, item] = INDEX_COLUMNS.map(integers) as [
    Uint32Array,
    Uint32Array,
    Uint32Array,
    Uint32Array,
  ];
  return { ...header, keys, values, context, component, kind, item };
}
