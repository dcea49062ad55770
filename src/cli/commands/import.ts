import type { Command } from 'commander';
import { examples } from '../help.js';
import { openSource } from '../import/open-source.js';
import { Importer } from '../import/importer.js';
import { EXIT } from '../io.js';
import type { Invocation } from '../invocation.js';

export function registerImportCommand(program: Command, invocation: Invocation): void {
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
      const admin = await invocation.storeAdmin();
      const source = await openSource(file, invocation.io.stdin);
      try {
        const store = await admin.openStore({ create: true });
        await invocation.err(
          `importing ${file === '-' ? 'standard input' : file} (${source.description}) into ${admin.name} at ${admin.location}\n`,
        );
        const importer = new Importer(store);
        try {
          await importer.run(source, { progress: invocation.progress(), signal: invocation.io.signal });
        } catch (error) {
          await invocation.err(importer.summary.format(true));
          throw error;
        }
        await invocation.err(importer.summary.format(false));
        invocation.exitCode = importer.summary.rejected > 0 ? EXIT.rejected : EXIT.ok;
      } finally {
        source.close();
      }
    });
}
