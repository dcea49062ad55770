import type { Command } from 'commander';
import type { LayoutFinding } from '../../store/admin.js';
import { examples } from '../help.js';
import { EXIT } from '../io.js';
import type { Invocation } from '../invocation.js';

const remedy: Record<LayoutFinding['fix'], string> = {
  init: 'monitor-admin init fixes it',
  reindex: 'monitor-admin reindex fixes it',
  manual: 'needs an operator',
};

const findingLine = (f: LayoutFinding): string => `  ${f.object}: ${f.problem} (${remedy[f.fix]})\n`;

export function registerInitCommand(program: Command, invocation: Invocation): void {
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
      const admin = await invocation.storeAdmin();
      if (options.check) {
        const drift = await admin.checkSchema();
        if (options.json)
          await invocation.out(`${JSON.stringify({ store: admin.name, location: admin.location, drift })}\n`);
        else if (drift.length === 0) await invocation.out(`${admin.name} at ${admin.location}: no drift\n`);
        else
          await invocation.out(
            `${admin.name} at ${admin.location}: ${drift.length} difference(s)\n${drift.map(findingLine).join('')}`,
          );
        invocation.exitCode = drift.length === 0 ? EXIT.ok : EXIT.failure;
        return;
      }
      const report = await admin.applySchema({ progress: invocation.progress(), signal: invocation.io.signal });
      if (options.json) {
        await invocation.out(`${JSON.stringify({ store: admin.name, location: admin.location, ...report })}\n`);
      } else {
        const done =
          report.actions.length === 0 ? '  already up to date\n' : report.actions.map((a) => `  ${a}\n`).join('');
        const left =
          report.remaining.length === 0 ? '' : `still different:\n${report.remaining.map(findingLine).join('')}`;
        await invocation.out(`${admin.name} at ${admin.location}:\n${done}${left}`);
      }
      invocation.exitCode = report.remaining.length === 0 ? EXIT.ok : EXIT.failure;
    });
}
