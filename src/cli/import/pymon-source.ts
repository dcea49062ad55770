import { createHash } from 'node:crypto';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { AdminError } from '../../store/admin.js';
import type { ImportItem, ImportSource } from './source.js';

/**
 * A pytest-monitor local database (`.pymon`, as pytest_monitor/handler.py writes it), in each of its layouts:
 * - 1.6.0+: EXECUTION_CONTEXTS, TEST_SESSIONS (RUN_DESCRIPTION json), TEST_METRICS;
 * - 1.1.0–1.5.1: the same, RUN_DESCRIPTION varchar (free text before 1.4.0, JSON text after);
 * - 1.0.0–1.0.1: no TEST_SESSIONS; each metric carries RUN_DATE and SCM_ID. A session is made per (RUN_DATE,
 *   SCM_ID), keyed as later clients key theirs with an empty description: md5(scm_ref + run_date). These metrics
 *   have no ITEM_PATH, ITEM_VARIANT or ITEM_FS_LOC: the variant is the item, the two others are empty.
 * Rows become the API's create bodies (three names differ: SCM_ID, RUN_DESCRIPTION, ENV_H), so they go through the
 * API's own validation.
 */

type Layout = '1.0.0–1.0.1' | '1.1.0–1.5.1' | '1.6.0+';
/** A row as better-sqlite3 returns it: every column a SQLite value. */
type Row = Record<string, string | number | bigint | Buffer | null>;

const CONTEXT_SQL = `SELECT rowid AS _row, ENV_H AS h, CPU_COUNT AS cpu_count, CPU_FREQUENCY_MHZ AS cpu_frequency, CPU_TYPE AS cpu_type,
  CPU_VENDOR AS cpu_vendor, RAM_TOTAL_MB AS ram_total, MACHINE_NODE AS machine_node, MACHINE_TYPE AS machine_type,
  MACHINE_ARCH AS machine_arch, SYSTEM_INFO AS system_info, PYTHON_INFO AS python_info FROM EXECUTION_CONTEXTS ORDER BY rowid`;
const SESSION_SQL = `SELECT rowid AS _row, SESSION_H AS session_h, RUN_DATE AS run_date, SCM_ID AS scm_ref,
  RUN_DESCRIPTION AS description FROM TEST_SESSIONS ORDER BY rowid`;
const MEASURES = `COMPONENT AS component, TOTAL_TIME AS total_time, USER_TIME AS user_time, KERNEL_TIME AS kernel_time,
  CPU_USAGE AS cpu_usage, MEM_USAGE AS mem_usage`;
const METRIC_SQL = `SELECT rowid AS _row, SESSION_H AS session_h, ENV_H AS context_h, ITEM_START_TIME AS item_start_time,
  ITEM_PATH AS item_path, ITEM AS item, ITEM_VARIANT AS item_variant, ITEM_FS_LOC AS item_fs_loc, KIND AS kind, ${MEASURES}
  FROM TEST_METRICS ORDER BY rowid`;
const OLD_METRIC_SQL = `SELECT rowid AS _row, RUN_DATE AS run_date, SCM_ID AS scm_ref, ENV_H AS context_h,
  ITEM_START_TIME AS item_start_time, ITEM AS item, KIND AS kind, ${MEASURES} FROM TEST_METRICS ORDER BY rowid`;

function columnsOf(db: Database, table: string): Map<string, string> {
  const rows = db.prepare(`PRAGMA table_info("${table}")`).all() as Array<{ name: string; type: string }>;
  return new Map(rows.map((r) => [r.name.toUpperCase(), r.type.toLowerCase()]));
}

function detectLayout(db: Database, path: string): Layout {
  const tables = new Set(
    db.prepare(`SELECT upper(name) FROM sqlite_master WHERE type = 'table'`).pluck().all() as string[],
  );
  if (!tables.has('EXECUTION_CONTEXTS') || !tables.has('TEST_METRICS')) {
    throw new AdminError(
      `${path} is an SQLite file but not a pytest-monitor database (no EXECUTION_CONTEXTS and TEST_METRICS tables)`,
    );
  }
  const metrics = columnsOf(db, 'TEST_METRICS');
  if (tables.has('TEST_SESSIONS') && metrics.has('SESSION_H')) {
    return columnsOf(db, 'TEST_SESSIONS').get('RUN_DESCRIPTION') === 'json' ? '1.6.0+' : '1.1.0–1.5.1';
  }
  if (metrics.has('RUN_DATE') && metrics.has('SCM_ID')) return '1.0.0–1.0.1';
  throw new AdminError(
    `${path} has a TEST_METRICS table of an unknown layout (columns: ${[...metrics.keys()].join(', ')})`,
  );
}

/** RUN_DESCRIPTION as the API's `description`: JSON text or free text; NUMERIC affinity may have made it a number. */
function description(value: unknown): unknown {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  return value;
}

const withoutRow = (row: Row): Row => {
  const { _row: _ignored, ...body } = row;
  return body;
};

export class PymonSource implements ImportSource {
  readonly description: string;
  readonly total: number;
  consumed = 0;
  private readonly db: Database;
  private readonly layout: Layout;

  constructor(private readonly path: string) {
    this.db = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
    try {
      this.layout = detectLayout(this.db, path);
      const count = (sql: string): number => this.db.prepare(sql).pluck().get() as number;
      this.total =
        count('SELECT COUNT(*) FROM EXECUTION_CONTEXTS') +
        count('SELECT COUNT(*) FROM TEST_METRICS') +
        (this.layout === '1.0.0–1.0.1'
          ? count('SELECT COUNT(*) FROM (SELECT DISTINCT RUN_DATE, SCM_ID FROM TEST_METRICS)')
          : count('SELECT COUNT(*) FROM TEST_SESSIONS'));
    } catch (error) {
      this.db.close();
      throw error;
    }
    this.description = `pytest-monitor database, layout ${this.layout}`;
  }

  async *items(): AsyncGenerator<ImportItem> {
    for (const row of this.db.prepare(CONTEXT_SQL).iterate() as Iterable<Row>) {
      this.consumed += 1;
      yield { kind: 'context', where: `EXECUTION_CONTEXTS row ${String(row._row)}`, body: withoutRow(row) };
    }
    if (this.layout === '1.0.0–1.0.1') {
      yield* this.oldMetrics();
      return;
    }
    for (const row of this.db.prepare(SESSION_SQL).iterate() as Iterable<Row>) {
      this.consumed += 1;
      yield {
        kind: 'session',
        where: `TEST_SESSIONS row ${String(row._row)}`,
        body: { ...withoutRow(row), description: description(row.description) },
      };
    }
    for (const row of this.db.prepare(METRIC_SQL).iterate() as Iterable<Row>) {
      this.consumed += 1;
      yield { kind: 'metric', where: `TEST_METRICS row ${String(row._row)}`, body: withoutRow(row) };
    }
  }

  /** 1.0.x: a session per run, made when its first metric comes. */
  private async *oldMetrics(): AsyncGenerator<ImportItem> {
    const sessions = new Set<string>();
    for (const row of this.db.prepare(OLD_METRIC_SQL).iterate() as Iterable<Row>) {
      const where = `TEST_METRICS row ${String(row._row)}`;
      const runDate = row.run_date;
      const scmRef = row.scm_ref;
      const sessionH = createHash('md5')
        .update(`${String(scmRef ?? '')}${String(runDate ?? '')}`)
        .digest('hex');
      if (!sessions.has(sessionH)) {
        sessions.add(sessionH);
        this.consumed += 1;
        yield {
          kind: 'session',
          where: `${where} (its run)`,
          body: { session_h: sessionH, run_date: runDate, scm_ref: scmRef, description: '' },
        };
      }
      this.consumed += 1;
      const { run_date: _date, scm_ref: _scm, ...measures } = withoutRow(row);
      yield {
        kind: 'metric',
        where,
        body: { ...measures, session_h: sessionH, item_path: '', item_variant: row.item, item_fs_loc: '' },
      };
    }
  }

  close(): void {
    this.db.close();
  }
}
