import type { Command } from 'commander';
import { examples } from '../help.js';
import { openSource } from '../import/open-source.js';
import { Importer, rejectedCount, type ImportSummary } from '../import/importer.js';
import { EXIT } from '../io.js';
import type { CliSession } from '../session.js';

/** Rejections listed in the summary; the counts are always complete. */
const LISTED_REJECTIONS = 50;

const LABELS = { context: 'contexts', session: 'sessions', metric: 'metrics', invalid: 'unreadable lines' } as const;

function formatSummary(summary: ImportSummary, interrupted: boolean): string {
  const rows = [`${''.padEnd(18)}${'imported'.padStart(10)}${'skipped'.padStart(10)}${'rejected'.padStart(10)}`];
  for (const [kind, label] of Object.entries(LABELS) as Array<[keyof typeof LABELS, string]>) {
    const c = summary.counts[kind];
    if (kind === 'invalid' && c.rejected === 0) continue;
    rows.push(
      `${label.padEnd(18)}${String(c.imported).padStart(10)}${String(c.skipped).padStart(10)}${String(c.rejected).padStart(10)}`,
    );
  }
  const total = rejectedCount(summary);
  const listed = summary.rejections.slice(0, LISTED_REJECTIONS);
  const lines = [
    interrupted
      ? 'import stopped before the end; what is counted below is stored (run it again to finish):'
      : 'import finished:',
    ...rows.map((row) => `  ${row}`),
    '  ("skipped": already stored with the same content)',
  ];
  if (total > 0) {
    lines.push(`rejected${total > listed.length ? ` (the first ${listed.length} of ${total})` : ''}:`);
    lines.push(...listed.map((r) => `  ${r.where}${r.kind === 'invalid' ? '' : ` (${r.kind})`}: ${r.reason}`));
  }
  return `${lines.join('\n')}\n`;
}

export function registerImportCommand(program: Command, session: CliSession): void {
  program
    .command('import')
    .description('import a pytest-monitor .pymon database (any layout) or an NDJSON export; idempotent')
    .argument('<file>', 'a .pymon SQLite file, an NDJSON file (gzipped or not), or - for NDJSON on stdin')
    .addHelpText(
      'after',
      `
Every record goes through the API's own validation and the store's create: records already stored with the same
content are skipped (importing a file twice imports nothing new), bad records are rejected with their reason and
the import goes on. Exit code 3 when some records were rejected.
${examples(
  ['monitor-admin import .pymon', "a pytest-monitor run's local database"],
  ['monitor-admin import backup.ndjson', 'an export (monitor-admin export)'],
  ['monitor-admin import backup.ndjson.gz', 'a gzipped export'],
  ['monitor-admin export | MONITOR_STORE=elasticsearch monitor-admin import -', 'from stdin'],
)}`,
    )
    .action(async (file: string) => {
      const admin = await session.storeAdmin();
      const source = await openSource(file, session.io.stdin);
      try {
        const store = await admin.openStore({ create: true });
        await session.err(
          `importing ${file === '-' ? 'standard input' : file} (${source.description}) into ${admin.name} at ${admin.location}\n`,
        );
        const importer = new Importer(store, admin);
        try {
          await importer.run(source, { progress: session.progress(), signal: session.io.signal });
        } catch (error) {
          await session.err(formatSummary(importer.summary, true));
          throw error;
        }
        await session.err(formatSummary(importer.summary, false));
        session.exitCode = rejectedCount(importer.summary) > 0 ? EXIT.rejected : EXIT.ok;
      } finally {
        source.close();
      }
    });
}
