import { Argument, type Command } from 'commander';
import { COUNT_KINDS, type CountKind } from '../../store/admin.js';
import { examples } from '../help.js';
import type { Invocation } from '../invocation.js';

export function registerCountCommand(program: Command, invocation: Invocation): void {
  program
    .command('count')
    .description('exact numbers of contexts, sessions, metrics, components and pipelines')
    .addArgument(new Argument('[kind]', 'what to count; every kind when omitted').choices(COUNT_KINDS))
    .option('--json', 'answer with a JSON object on stdout')
    .addHelpText(
      'after',
      examples(
        ['monitor-admin count', 'every kind, one per line'],
        ['monitor-admin count metrics', 'just the number'],
        ['monitor-admin count --json', '{"contexts":2,"sessions":5,...}'],
        ['MONITOR_STORE=elasticsearch monitor-admin count sessions', 'on the Elasticsearch store'],
      ),
    )
    .action(async (kind: CountKind | undefined, options: { json?: boolean }) => {
      const admin = await invocation.storeAdmin();
      const counts: Partial<Record<CountKind, number>> = {};
      for (const each of kind === undefined ? COUNT_KINDS : [kind]) counts[each] = await admin.count(each);
      if (options.json) await invocation.out(`${JSON.stringify(counts)}\n`);
      else if (kind !== undefined) await invocation.out(`${counts[kind]}\n`);
      else
        await invocation.out(
          Object.entries(counts)
            .map(([name, n]) => `${name.padEnd(12)}${n}\n`)
            .join(''),
        );
    });
}
