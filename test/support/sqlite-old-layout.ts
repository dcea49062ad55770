import BetterSqlite3 from 'better-sqlite3';
import { pipelineOf, type Context, type Metric, type Session } from '../../src/domain/records.js';
import { CONTEXT_FIELDS, fieldNames, METRIC_FIELDS } from '../../src/domain/fields.js';
import { metricKey } from '../../src/store/content.js';
import { applySchema } from '../../src/store/sqlite/layout.js';
import { TrigramTally } from '../../src/store/sqlite/name-trigrams.js';

/** What an older release stored, in the order it was sent. */
export interface OldRecords {
  contexts: Context[];
  sessions: Session[];
  metrics: Metric[];
}

const CONTEXT_NAMES = fieldNames(CONTEXT_FIELDS);
const METRIC_NAMES = fieldNames(METRIC_FIELDS);

/**
 * A SQLite file as the releases of schema version 2 or 3 wrote it (text keys on every metric, a copy of its session's
 * scm_ref, pipeline and build, the names tables; version 3 also counts the trigrams of the names), made by the
 * migrations up to that version and the inserts those releases made.
 */
export function writeOldLayout(path: string, version: 2 | 3, records: OldRecords): void {
  const db = new BetterSqlite3(path);
  try {
    db.pragma('journal_mode = WAL');
    applySchema(db, undefined, undefined, path, version);
    const prepare = (sql: string) => db.prepare(sql);
    db.transaction(() => {
      const context = db.prepare(
        `INSERT INTO contexts (${CONTEXT_NAMES.join(', ')}) VALUES (${CONTEXT_NAMES.map((n) => `@${n}`).join(', ')})`,
      );
      for (const record of records.contexts) context.run(record);
      const session = db.prepare(
        'INSERT INTO sessions (h, run_date, scm_ref, tags, pipeline, build) VALUES (?, ?, ?, ?, ?, ?)',
      );
      for (const record of records.sessions) {
        const { pipeline, build } = pipelineOf(record);
        session.run(record.session_h, record.run_date, record.scm_ref, JSON.stringify(record.tags), pipeline, build);
      }
      const sessions = new Map(records.sessions.map((s) => [s.session_h, s]));
      const metric = db.prepare(
        `INSERT INTO metrics (id, ${METRIC_NAMES.join(', ')}, scm_ref, pipeline, build)
           VALUES (@id, ${METRIC_NAMES.map((n) => `@${n}`).join(', ')}, @scm_ref, @pipeline, @build)
           ON CONFLICT (id) DO NOTHING`,
      );
      const item = db.prepare('INSERT OR IGNORE INTO item_names (item) VALUES (?)');
      const variant = db.prepare('INSERT OR IGNORE INTO variant_names (variant) VALUES (?)');
      const pair = db.prepare('INSERT OR IGNORE INTO component_sessions (component, session_h) VALUES (?, ?)');
      const tally = new TrigramTally();
      for (const record of records.metrics) {
        const owner = sessions.get(record.session_h) as Session;
        const { pipeline, build } = pipelineOf(owner);
        const row = { ...record, id: metricKey(record), scm_ref: owner.scm_ref, pipeline, build };
        if (metric.run(row).changes === 0) continue;
        if (item.run(record.item).changes === 1 && version === 3) tally.add('item', record.item, 1);
        if (variant.run(record.item_variant).changes === 1 && version === 3)
          tally.add('variant', record.item_variant, 1);
        if (record.component !== '') pair.run(record.component, record.session_h);
      }
      if (version === 3) tally.write(prepare);
    })();
  } finally {
    db.close();
  }
}
