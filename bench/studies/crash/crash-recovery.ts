/**
 * Crash recovery (issue 40): `--kills` kill -9 of the built service at random moments on each store of `--store` —
 * inside `/bulk` bodies, single creates, purge, summarize and (Elasticsearch) reindex, in turn — each followed by a
 * restart and the checks of lib/crash/run.ts: every analysis answer from run summaries equal to the answer from every
 * metric, every stored metric in its session's summaries. Prints the figures (Markdown) and writes them to `--out`.
 *
 *   npm run build && ELASTICSEARCH_URL=http://127.0.0.1:9250 npx tsx bench/studies/crash/crash-recovery.ts --kills 50
 *
 * `--keep N`: the sessions each purge keeps (100); fewer keep the store, and each reindex of it, small.
 *
 * Exit 1 when any answer differs, any session is left without its summary (or summarizes metrics not stored, or other
 * values), or any acknowledged metric is lost.
 */
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { logger } from '../../lib/log.js';
import { commandLine, loadText } from '../../lib/report-text.js';
import { REPO } from '../../lib/services.js';
import { runCrashRecovery, type CrashReport, type Operation, type StoreKind } from '../../lib/crash/run.js';
import { crashTables } from '../../lib/crash/table.js';

const { values: opt } = parseArgs({
  options: {
    store: { type: 'string', default: 'sqlite,elasticsearch' },
    kills: { type: 'string', default: '50' },
    seed: { type: 'string', default: '40' },
    settle: { type: 'string', default: '30' },
    keep: { type: 'string', default: '100' },
    operations: { type: 'string' },
    'server-dir': { type: 'string', default: REPO },
    out: { type: 'string' },
  },
});
const positive = (name: 'kills' | 'seed' | 'settle' | 'keep'): number => {
  const value = Number(opt[name]);
  if (!Number.isInteger(value) || value < 0) throw new Error(`--${name} must be a whole number, got "${opt[name]}"`);
  return value;
};
const stores = opt.store.split(',').map((s) => s.trim());
for (const store of stores)
  if (store !== 'sqlite' && store !== 'elasticsearch')
    throw new Error(`--store: sqlite and/or elasticsearch, comma-separated, got "${store}"`);
const operations = opt.operations?.split(',').map((o) => o.trim()) as Operation[] | undefined;
const log = logger('crash');
const loadStart = loadText();
const reports: CrashReport[] = [];
for (const [at, store] of stores.entries())
  reports.push(
    await runCrashRecovery({
      store: store as StoreKind,
      kills: positive('kills'),
      seed: positive('seed') + at,
      repo: opt['server-dir'],
      settleMs: positive('settle') * 1000,
      keepSessions: positive('keep'),
      ...(operations ? { operations } : {}),
      log,
    }),
  );
const failed = reports.some((r) =>
  r.kills.some(
    (k) =>
      k.differing.length > 0 ||
      k.uncoveredSessions > 0 ||
      k.orphanedSessions > 0 ||
      k.wrongValues > 0 ||
      k.lostAcknowledged > 0,
  ),
);
const text = [
  `# Crash recovery: kill -9 during writes and admin commands`,
  '',
  `${new Date().toISOString().slice(0, 10)}; ${cpus().length} cores, load ${loadStart} at start, ${loadText()} at end; ` +
    `Node ${process.version}; seed ${opt.seed}; ${reports.map((r) => `${r.store} ${(r.totalMs / 60_000).toFixed(1)} min`).join(', ')}.`,
  '',
  '```sh',
  commandLine(
    (k) => k === 'ELASTICSEARCH_URL',
    `npx tsx bench/studies/crash/crash-recovery.ts ${process.argv.slice(2).join(' ')}`,
  ),
  '```',
  '',
  crashTables(reports),
  '',
  failed
    ? '**FAILED**: answers differ, or sessions were left without summary, or acknowledged metrics were lost.'
    : 'Passed.',
  '',
].join('\n');
process.stdout.write(text);
if (opt.out) writeFileSync(opt.out, text);
process.exitCode = failed ? 1 : 0;
