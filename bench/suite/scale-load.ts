import { execFileSync } from 'node:child_process';
import BetterSqlite3 from 'better-sqlite3';
import { context, metric, pythonJson, session, sessionBody, SCALE_SHAPE } from '../lib/dataset.js';
import { send, type Target } from '../lib/http-load.js';
import { REPO } from '../lib/services.js';

/**
 * Fills a store with the query-scale data set: 2 contexts, 200 sessions (20 pipelines × 10 builds), `total`
 * metrics. Metric i belongs to session i % 200 (its ⌊i / 200⌋-th), so sessions interleave as concurrent CI runs do.
 */

const metricOf = (i: number) => metric(i % SCALE_SHAPE.sessions, Math.floor(i / SCALE_SHAPE.sessions));

export interface LoadReport {
  metrics: number;
  seconds: number;
  perSecond: number;
  errors: number;
  how: string;
}

/** Metrics per `POST /bulk` body while loading. */
const BULK_LINES = 5000;

/**
 * Through our API: contexts and sessions by their create routes, then the metrics in NDJSON bodies of BULK_LINES
 * lines (`POST /bulk`, the route `monitor-admin push` uses), `loaders` bodies in flight, keep-alive, bounded by
 * `timeoutSeconds`. (One `POST /metrics/` per metric ran at ~120/s on this machine: hours for a million.)
 */
export async function loadThroughApi(
  target: Target,
  total: number,
  loaders: number,
  timeoutSeconds: number,
): Promise<LoadReport> {
  const API = '/api/v1';
  const post = async (
    path: string,
    body: string,
    accepted: (status: number, body: string) => boolean,
    headers?: Record<string, string>,
  ): Promise<void> => {
    for (let attempt = 0; ; attempt += 1) {
      try {
        const answer = await send(
          target,
          { method: 'POST', path, body, headers },
          { fresh: false, timeoutMs: 120_000 },
        );
        if (accepted(answer.status, answer.body)) return;
        if (answer.status !== 503 || attempt >= 5)
          throw new Error(`POST ${path} answered ${answer.status}: ${answer.body.slice(0, 300)}`);
      } catch (error) {
        if (attempt >= 5) throw error;
      }
      await new Promise((r) => setTimeout(r, 200 * (attempt + 1)));
    }
  };
  const created = (status: number) => status === 201;
  for (let c = 0; c < SCALE_SHAPE.contexts; c += 1) await post(`${API}/contexts/`, pythonJson(context(c)), created);
  for (let s = 0; s < SCALE_SHAPE.sessions; s += 1) await post(`${API}/sessions/`, sessionBody(session(s)), created);

  const started = performance.now();
  const deadline = started + timeoutSeconds * 1000;
  let next = 0;
  let done = 0;
  let lastReport = started;
  // Every line stored (created, or replayed by a retry of a body whose answer was lost).
  const whole = (status: number, body: string) =>
    status === 200 && (JSON.parse(body) as { failed: number }).failed === 0;
  const loader = async (): Promise<void> => {
    for (;;) {
      const first = next;
      if (first >= total) return;
      if (performance.now() > deadline)
        throw new Error(
          `loading stopped after ${timeoutSeconds} s (BENCH_LOAD_TIMEOUT) at ${done} of ${total} metrics`,
        );
      const last = Math.min(total, first + BULK_LINES);
      next = last;
      let body = '';
      for (let i = first; i < last; i += 1) body += `{"type":"metric",${pythonJson(metricOf(i)).slice(1)}\n`;
      await post(`${API}/bulk`, body, whole, { 'Content-Type': 'application/x-ndjson' });
      done += last - first;
      const now = performance.now();
      if (now - lastReport > 15_000) {
        lastReport = now;
        console.error(
          `[load]   ${done.toLocaleString('en-US')} / ${total.toLocaleString('en-US')} metrics, ${(done / ((now - started) / 1000)).toFixed(0)}/s`,
        );
      }
    }
  };
  await Promise.all(Array.from({ length: loaders }, () => loader()));
  const seconds = (performance.now() - started) / 1000;
  return {
    metrics: total,
    seconds,
    perSecond: total / seconds,
    errors: 0,
    how: `POST /bulk through the API (${BULK_LINES} metrics a body), ${loaders} concurrent keep-alive loaders`,
  };
}

/**
 * The original's SQLite file, written directly in its own schema (its tables made by its own create_all), because a
 * million POSTs at its ingest rate would take hours. Same records, same order as the API load.
 */
export function loadOriginalFile(file: string, total: number): LoadReport {
  execFileSync('bash', ['bench/suite/original-server.sh', 'schema', file], {
    cwd: REPO,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const started = performance.now();
  const db = new BetterSqlite3(file);
  try {
    const insertContext = db.prepare(
      `INSERT INTO EXECUTION_CONTEXTS (ENV_H, CPU_COUNT, CPU_FREQUENCY_MHZ, CPU_TYPE, CPU_VENDOR, RAM_TOTAL_MB, MACHINE_NODE,
         MACHINE_TYPE, MACHINE_ARCH, SYSTEM_INFO, PYTHON_INFO) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const insertSession = db.prepare(
      'INSERT INTO TEST_SESSIONS (SESSION_H, RUN_DATE, SCM_REF, DESCRIPTION) VALUES (?, ?, ?, ?)',
    );
    const insertMetric = db.prepare(
      `INSERT INTO TEST_METRICS (SESSION_H, CONTEXT_H, ITEM_START_TIME, ITEM_PATH, ITEM, ITEM_VARIANT, ITEM_FS_LOC, KIND, COMPONENT,
         TOTAL_TIME, USER_TIME, KERNEL_TIME, CPU_USAGE, MEM_USAGE) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    db.transaction(() => {
      for (let c = 0; c < SCALE_SHAPE.contexts; c += 1) {
        const x = context(c);
        insertContext.run(
          x.h,
          x.cpu_count,
          x.cpu_frequency,
          x.cpu_type,
          x.cpu_vendor,
          x.ram_total,
          x.machine_node,
          x.machine_type,
          x.machine_arch,
          x.system_info,
          x.python_info,
        );
      }
      for (let s = 0; s < SCALE_SHAPE.sessions; s += 1) {
        const x = session(s);
        // What SQLAlchemy's JSON type writes: json.dumps of the description object.
        const description = pythonJson(Object.fromEntries(x.tags.map((t) => [t.key, t.value])));
        insertSession.run(x.session_h, x.run_date, x.scm_ref, description);
      }
      for (let i = 0; i < total; i += 1) {
        const m = metricOf(i);
        insertMetric.run(
          m.session_h,
          m.context_h,
          m.item_start_time,
          m.item_path,
          m.item,
          m.item_variant,
          m.item_fs_loc,
          m.kind,
          m.component,
          m.total_time,
          m.user_time,
          m.kernel_time,
          m.cpu_usage,
          m.mem_usage,
        );
      }
    })();
  } finally {
    db.close();
  }
  const seconds = (performance.now() - started) / 1000;
  return {
    metrics: total,
    seconds,
    perSecond: total / seconds,
    errors: 0,
    how: 'rows written into its SQLite file directly (better-sqlite3, one transaction), in its own schema',
  };
}
