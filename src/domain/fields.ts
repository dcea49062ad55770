/**
 * The field catalogue: every field of the three records, declared once — its canonical name (the name it is read
 * back under), its type and limits, the older names a create body may use for it, what it means and an example.
 * Everything else derives from here: the record types (records.ts), create-body validation (validation/), the API's
 * read shapes and its OpenAPI document, the SQLite columns and the Elasticsearch mappings. The order of each table is
 * the order of the read shape.
 */

type FieldType =
  /** An identifier: 1 to 64 characters. */
  | 'key'
  /** Free text up to `max` characters (see charCount); "" is a value. */
  | 'text'
  /** An ISO 8601 date and time of a year in TIMESTAMP_YEARS, as the client wrote it (≤ 64 characters), returned as written. */
  | 'timestamp'
  /** A whole number ≥ `min`. */
  | 'integer'
  /** A finite JSON number ≥ `min` (any when `min` is absent). */
  | 'number';

export interface FieldSpec {
  type: FieldType;
  /** Longest accepted text, in characters (Unicode code points: charCount). */
  max?: number;
  /** Smallest accepted number. */
  min?: number;
  /** An integer field that also accepts a fractional number and stores it truncated. */
  truncates?: true;
  /**
   * A name or path of a test: text without a line break (line-breaks.ts), which `monitor-admin check --rerun-file`
   * writes as one argument a line of a pytest arguments file, where a line break would start another argument.
   */
  oneLine?: true;
  /** May be absent or null on create; `absent` is what is stored then. */
  optional?: { absent: string | null };
  /** Other names a create body may use for this field (older clients, the original server's documentation). */
  aliases?: readonly string[];
  /** Other names the field is also read back under (clients of the original server read these). */
  readAliases?: readonly string[];
  description: string;
  example: string | number;
}

export type FieldTable = Readonly<Record<string, FieldSpec>>;

const KEY_MAX = 64;

/**
 * The years a date the store holds may fall in — a session's run_date and a metric's item_start_time: 2000 through
 * 2099, one rule for every way in (the API, POST /bulk, monitor-admin import), stated in the OpenAPI document's pattern.
 *
 * Why bounded: the Elasticsearch store keeps metrics in one index per month of their session's run_date, so any year a
 * client could send was an index a month — sessions dated one a month from 1800 on made the cluster refuse more shards
 * and every write of a new month failed. A hundred years make at most 1,200 month indices, each only when a session of
 * that month has metrics (and purge drops them). Why these years: pytest-monitor dates from 2020 and writes the time
 * a run started, so a real run date falls well inside; a year before 2000 is a clock that was never set (a machine
 * without one boots at 1970-01-01) and one after 2099 a made-up date. Why fixed rather than relative to today: the
 * same rule on every instance and every day, exactly as the document states it, and an export stays importable.
 * Within the bound a year always has four digits, so run dates and month names sort as they are written.
 */
export const TIMESTAMP_YEARS = { first: 2000, last: 2099 } as const;

/** True when `year` is one a timestamp may name (TIMESTAMP_YEARS). */
export function withinTimestampYears(year: number): boolean {
  return year >= TIMESTAMP_YEARS.first && year <= TIMESTAMP_YEARS.last;
}

const YEARS_TEXT = `a date of the years ${TIMESTAMP_YEARS.first} to ${TIMESTAMP_YEARS.last}`;

export const CONTEXT_FIELDS = {
  h: {
    type: 'key',
    max: KEY_MAX,
    readAliases: ['context_h'],
    description: 'Key of the execution context: a hash of the machine description, computed by the client.',
    example: '06942c58ec062abaf2e4896a7840f474',
  },
  cpu_count: { type: 'integer', min: 1, description: 'Number of logical CPUs.', example: 2 },
  cpu_frequency: {
    type: 'integer',
    min: 0,
    truncates: true,
    aliases: ['cpu_freq'],
    description: 'Nominal CPU frequency in MHz. A fractional value (as psutil reports it) is truncated.',
    example: 2599,
  },
  cpu_type: { type: 'text', max: 64, description: 'CPU type; often "".', example: '' },
  cpu_vendor: {
    type: 'text',
    max: 256,
    optional: { absent: '' },
    description: 'CPU vendor string; "" when absent or null.',
    example: 'Intel(R) Xeon(R) Processor',
  },
  ram_total: { type: 'integer', min: 0, description: 'Total memory in MB.', example: 24105 },
  machine_node: { type: 'text', max: 512, aliases: ['mac_node'], description: 'Host name.', example: 'ci-runner-7' },
  machine_type: { type: 'text', max: 32, aliases: ['mac_type'], description: 'Machine type.', example: 'x86_64' },
  machine_arch: {
    type: 'text',
    max: 16,
    aliases: ['mac_arch', 'max_arch'],
    description: 'Architecture (bitness).',
    example: '64bit',
  },
  system_info: {
    type: 'text',
    max: 256,
    aliases: ['sys_info'],
    description: 'Operating system and kernel.',
    example: 'Linux - 6.1.0-18-amd64',
  },
  python_info: {
    type: 'text',
    max: 512,
    aliases: ['py_info'],
    description: 'Python version and build.',
    example: '3.11.2 (main, Apr 28 2025, 14:11:48) [GCC 12.2.0]',
  },
} as const satisfies FieldTable;

/** The scalar fields of a session; its tags are the session's `description` (see validation/session.ts). */
export const SESSION_FIELDS = {
  session_h: {
    type: 'key',
    max: KEY_MAX,
    aliases: ['h'],
    description: 'Key of the session (one test run), computed by the client.',
    example: '31d804aee0c3657a2e459afb22f4e112',
  },
  run_date: {
    type: 'timestamp',
    max: KEY_MAX,
    description: `When the run started, ISO 8601 in the client's local time, ${YEARS_TEXT}; returned as written.`,
    example: '2026-11-22T05:10:45.684828',
  },
  scm_ref: {
    type: 'text',
    max: 128,
    optional: { absent: null },
    description: 'Source revision the run tested (e.g. a git commit); null when unknown.',
    example: '30585e4fae0d1c8e97ca226060d07024e2a00fb3',
  },
} as const satisfies FieldTable;

export const METRIC_FIELDS = {
  session_h: {
    type: 'key',
    max: KEY_MAX,
    description: 'The session that took the measure (must exist).',
    example: '31d804aee0c3657a2e459afb22f4e112',
  },
  context_h: {
    type: 'key',
    max: KEY_MAX,
    aliases: ['ctx_h'],
    description: 'The execution context that ran it (must exist).',
    example: '06942c58ec062abaf2e4896a7840f474',
  },
  item_start_time: {
    type: 'timestamp',
    max: KEY_MAX,
    description: `When the test item started (ISO 8601), ${YEARS_TEXT}.`,
    example: '2026-11-22T05:10:45.837678',
  },
  item_path: {
    type: 'text',
    max: 4096,
    oneLine: true,
    description: "Dotted path of the item's module.",
    example: 'tests.test_toy',
  },
  item: { type: 'text', max: 2048, oneLine: true, description: 'Test item name.', example: 'test_sleep' },
  item_variant: {
    type: 'text',
    max: 2048,
    oneLine: true,
    description: 'Test item with its parametrization ("" for module metrics).',
    example: 'test_sleep[2]',
  },
  item_fs_loc: {
    type: 'text',
    max: 2048,
    oneLine: true,
    description: "File of the item, relative to the run's root.",
    example: 'tests/test_toy.py',
  },
  kind: {
    type: 'text',
    max: 64,
    oneLine: true,
    description: 'Scope of the measure: function, module or package.',
    example: 'function',
  },
  component: {
    type: 'text',
    max: 512,
    oneLine: true,
    optional: { absent: '' },
    description: 'Component the item belongs to; "" (or null, or absent) for none.',
    example: 'storage',
  },
  total_time: { type: 'number', min: 0, aliases: ['wall_time'], description: 'Wall time in seconds.', example: 0.25 },
  user_time: { type: 'number', min: 0, description: 'User CPU time in seconds.', example: 0.01 },
  kernel_time: {
    type: 'number',
    min: 0,
    aliases: ['krnl_time'],
    description: 'Kernel CPU time in seconds.',
    example: 0.002,
  },
  cpu_usage: { type: 'number', min: 0, description: 'CPU usage ratio ((user + kernel) / wall).', example: 0.048 },
  mem_usage: {
    type: 'number',
    description: 'Memory in MB, measured against a baseline the client takes, so it may be negative.',
    example: 0.5,
  },
} as const satisfies FieldTable;

/** A session's tags: `description` on create, `tags` on read. */
export const TAG_LIMITS = { count: 64, key: 128, value: 1024 } as const;

/** The value type of a field of a table. */
type ValueOf<F extends FieldSpec> = F['type'] extends 'integer' | 'number'
  ? number
  : F extends { optional: { absent: null } }
    ? string | null
    : string;

/** The record a table describes, in canonical names. */
export type RecordOf<T extends FieldTable> = { -readonly [K in keyof T]: ValueOf<T[K]> };

/** Field names of a table, in read order. */
export function fieldNames<T extends FieldTable>(table: T): Array<keyof T & string> {
  return Object.keys(table);
}

/**
 * The length of a text in characters: Unicode code points, as JSON Schema's `maxLength` counts them (the OpenAPI
 * document states every limit so) and as a Python client's `len()` does — a character beyond U+FFFF, such as most
 * emoji, is one, though JavaScript's `length` counts its two UTF-16 code units. A lone surrogate counts as one.
 */
export function charCount(text: string): number {
  let count = text.length;
  for (let i = 0; i < text.length - 1; i += 1) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        count -= 1;
        i += 1;
      }
    }
  }
  return count;
}

/**
 * True when `text` is longer than any value of the field: no stored value equals it or starts with it, so a lookup
 * by it answers "none" without asking the store (where some refuse very long keys and prefixes).
 */
export function longerThanField(spec: FieldSpec, text: string): boolean {
  return spec.max !== undefined && text.length > spec.max && charCount(text) > spec.max;
}

/** Create-body alias → canonical name, for one table. */
export function aliasesOf(table: FieldTable): Record<string, string> {
  const aliases: Record<string, string> = {};
  for (const [name, spec] of Object.entries(table)) for (const alias of spec.aliases ?? []) aliases[alias] = name;
  return aliases;
}
