import type { Command } from 'commander';
import type { SchemaFinding } from '../../store/admin.js';
import { examples } from '../help.js';
import { EXIT } from '../io.js';
import type { CliSession } from '../session.js';

const remedy: Record<SchemaFinding['fix'], string> = {
  init: 'monitor-admin init fixes it',
  reindex: 'monitor-admin reindex fixes it',
  manual: 'needs an operator',
};

const findingLine = (f: SchemaFinding): string => `  ${f.object}: ${f.problem} (${remedy[f.fix]})\n`;

export function registerInitCommand(program: Command, session: CliSession): void {
  program
    .command('init')
    .description(
      'create or update the schema (SQLite) or the index templates, indices and aliases (Elasticsearch); idempotent',
    )
    .option('--check', 'only report differences from what this version expects; exit 1 when there are any')
    .option('--json', 'answer with a JSON object on stdout')
    .addHelpText(
      'after',
      examples(
        ['monitor-admin init', 'create what is missing, update what init can'],
        ['monitor-admin init --check', 'change nothing; exit 1 on drift (a CI or readiness gate)'],
        [
          'monitor-admin --store elasticsearch --elasticsearch-url http://es:9200 init',
          'templates, indices and aliases',
        ],
      ),
    )
    .action(async (options: { check?: boolean; json?: boolean }) => {
      const admin = await session.storeAdmin();
      if (options.check) {
        const drift = await admin.checkSchema();
        if (options.json)
          await session.out(`${JSON.stringify({ store: admin.name, location: admin.location, drift })}\n`);
        else if (drift.length === 0) await session.out(`${admin.name} at ${admin.location}: no drift\n`);
        else
          await session.out(
            `${admin.name} at ${admin.location}: ${drift.length} difference(s)\n${drift.map(findingLine).join('')}`,
          );
        session.exitCode = drift.length === 0 ? EXIT.ok : EXIT.failure;
        return;
      }
      const report = await admin.applySchema();
      if (options.json) {
        await session.out(`${JSON.stringify({ store: admin.name, location: admin.location, ...report })}\n`);
      } else {
        const done =
          report.actions.length === 0 ? '  already up to date\n' : report.actions.map((a) => `  ${a}\n`).join('');
        const left =
          report.remaining.length === 0 ? '' : `still different:\n${report.remaining.map(findingLine).join('')}`;
        await session.out(`${admin.name} at ${admin.location}:\n${done}${left}`);
      }
      session.exitCode = report.remaining.length === 0 ? EXIT.ok : EXIT.failure;
    });
}
