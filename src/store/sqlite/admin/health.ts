import { existsSync, statSync } from 'node:fs';
import { summariesCheck, type HealthCheck, type HealthReport } from '../../admin.js';
import { SCHEMA_VERSION } from '../layout.js';
import { pendingCount } from '../summaries.js';
import { readOnly, schemaFindings } from './init.js';

/** monitor-admin health on SQLite: the file (opened read-only), its versions and schema, the rows per table. */
export function health(path: string): HealthReport {
  const checks: HealthCheck[] = [];
  const counts: Record<string, number> = {};
  const versions: Record<string, string> = { sqlite: '', schema: '', 'expected schema': String(SCHEMA_VERSION) };
  const report = (): HealthReport => ({
    healthy: checks.every((c) => c.ok),
    store: 'sqlite',
    location: path,
    versions,
    checks,
    counts,
  });
  if (!existsSync(path)) {
    checks.push({ name: 'file', ok: false, detail: `${path} does not exist (run monitor-admin init)` });
    return report();
  }
  try {
    readOnly(path, (db) => {
      checks.push({
        name: 'file',
        ok: true,
        detail: `${path}, ${statSync(path).size} bytes`,
      });
      versions.sqlite = db.prepare('SELECT sqlite_version()').pluck().get() as string;
      versions.schema = String(db.pragma('user_version', { simple: true }));
      checks.push({ name: 'journal', ok: true, detail: String(db.pragma('journal_mode', { simple: true })) });
      const findings = schemaFindings(db);
      checks.push({
        name: 'schema',
        ok: findings.length === 0,
        detail:
          findings.length === 0
            ? `version ${SCHEMA_VERSION}, as expected`
            : findings.map((f) => `${f.object}: ${f.problem}`).join('; '),
      });
      const tables = new Set(
        db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).pluck().all() as string[],
      );
      for (const table of ['contexts', 'sessions', 'metrics']) {
        if (tables.has(table)) counts[table] = db.prepare(`SELECT COUNT(*) FROM ${table}`).pluck().get() as number;
      }
      if (tables.has('pending_summaries')) {
        counts.summaries_pending = pendingCount((sql) => db.prepare(sql));
        checks.push(summariesCheck(counts.summaries_pending));
      }
    });
  } catch (error) {
    checks.push({ name: 'open', ok: false, detail: (error as Error).message });
  }
  return report();
}
