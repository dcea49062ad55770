import { createHash } from 'node:crypto';
import type { Context, Metric, Session } from '../../src/domain/records.js';
import { random } from './random.js';

/**
 * Deterministic records shaped like pytest-monitor's (fields in the order the client sends them; what it sends:
 * docs/api.md, "Using it from pytest-monitor"). The same index always gives the same record, so every store
 * (ours through the API, the original's SQLite file directly) holds the same data.
 */

const md5 = (text: string): string => createHash('md5').update(text).digest('hex');
const sha1 = (text: string): string => createHash('sha1').update(text).digest('hex');

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/** Local naive ISO time with microseconds, as Python's datetime.isoformat() writes it. */
function isoMicros(epochMicros: number): string {
  const date = new Date(Math.floor(epochMicros / 1000));
  return `${date.toISOString().slice(0, 19)}.${pad(epochMicros % 1_000_000, 6)}`;
}

const BASE_MICROS = Date.UTC(2026, 0, 5, 8, 0, 0) * 1000;

export function context(index: number): Context {
  return {
    h: md5(`bench-context-${index}`),
    cpu_count: 2 + 2 * index,
    cpu_frequency: 2599,
    cpu_type: '',
    cpu_vendor: 'Intel(R) Xeon(R) Processor',
    ram_total: 24105,
    machine_node: `ci-runner-${pad(index, 2)}`,
    machine_type: 'x86_64',
    machine_arch: '64bit',
    system_info: 'Linux - 6.1.0-18-amd64',
    python_info: '3.11.2 (main, Apr 28 2025, 14:11:48) [GCC 12.2.0]',
  };
}

export interface ScaleShape {
  sessions: number;
  contexts: number;
  components: number;
  pipelines: number;
  builds: number;
  metrics: number;
}

/** The query-scale data set: 200 sessions, 2 contexts, 50 components, 20 pipelines × 10 builds. */
export const SCALE_SHAPE: Omit<ScaleShape, 'metrics'> = {
  sessions: 200,
  contexts: 2,
  components: 50,
  pipelines: 20,
  builds: 10,
};

export const pipelineName = (p: number): string => `pipeline-${pad(p, 2)}`;
export const buildName = (b: number): string => String(4200 + b);
export const componentName = (c: number): string => `component-${pad(c, 2)}`;

/** Session `index` belongs to pipeline index % pipelines and build ⌊index / pipelines⌋ % builds. */
export function session(index: number, shape: Omit<ScaleShape, 'metrics'> = SCALE_SHAPE, namespace = 'scale'): Session {
  const pipeline = index % shape.pipelines;
  const build = Math.floor(index / shape.pipelines) % shape.builds;
  return {
    session_h: md5(`bench-${namespace}-session-${index}`),
    run_date: isoMicros(BASE_MICROS + index * 3_600_000_000),
    scm_ref: sha1(`bench-commit-${build}`),
    tags: [
      { key: 'pipeline_branch', value: pipelineName(pipeline) },
      { key: 'pipeline_build_no', value: buildName(build) },
      { key: '__ci__', value: 'gitlabci' },
      { key: 'description', value: '' },
    ],
  };
}

/**
 * The `j`-th metric of session `s` (0-based). Items cycle over 500 test functions, each with 10 × 10 parameter
 * variants; components cycle over `components`; the context alternates with the session.
 */
export function metric(
  s: number,
  j: number,
  shape: Omit<ScaleShape, 'metrics'> = SCALE_SHAPE,
  namespace = 'scale',
): Metric {
  const rnd = random(s * 1_000_003 + j);
  const item = j % 500;
  const total = 0.001 + rnd() * rnd() * 5;
  const user = Math.floor(total * rnd() * 100) / 100;
  const kernel = Math.floor(total * rnd() * 20) / 100;
  const module = `module_${pad(item % 50, 2)}`;
  return {
    session_h: session(s, shape, namespace).session_h,
    context_h: context(s % shape.contexts).h,
    item_start_time: isoMicros(BASE_MICROS + s * 3_600_000_000 + j * 12_345),
    item_path: `tests.${module}`,
    item: `test_case_${item}`,
    item_variant: `test_case_${item}[${Math.floor(j / 500) % 10}, ${Math.floor(j / 5000) % 10}]`,
    item_fs_loc: `tests/${module}.py`,
    kind: 'function',
    component: componentName(j % shape.components),
    total_time: total,
    user_time: user,
    kernel_time: kernel,
    cpu_usage: (user + kernel) / total,
    mem_usage: Math.round(rnd() * rnd() * 512 * 1024) / 1024,
  };
}

/** A variant pattern of the query benchmark: test_case_1's variants whose second parameter is 0 (2,000 of 1M). */
export const VARIANT_PATTERN = 'case_1[%, 0]';

/** JSON the way Python's json.dumps writes it (", " and ": " separators, floats keep a ".0"). */
export function pythonJson(record: object): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(record)) {
    let text: string;
    if (typeof value === 'number') text = Number.isInteger(value) && !isIntField(key) ? `${value}.0` : String(value);
    else if (Array.isArray(value) || (value !== null && typeof value === 'object')) text = pythonJson(value as object);
    else text = JSON.stringify(value);
    parts.push(`${JSON.stringify(key)}: ${text}`);
  }
  return `{${parts.join(', ')}}`;
}

const INT_FIELDS = new Set(['cpu_count', 'cpu_frequency', 'ram_total']);
const isIntField = (key: string): boolean => INT_FIELDS.has(key);

/** The session body as pytest-monitor posts it: description is a JSON object of the tags. */
export function sessionBody(record: Session): string {
  const description = Object.fromEntries(record.tags.map((t) => [t.key, t.value]));
  return pythonJson({ session_h: record.session_h, run_date: record.run_date, scm_ref: record.scm_ref, description });
}
