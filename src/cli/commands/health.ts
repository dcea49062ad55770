import type { Command } from 'commander';
import { examples } from '../help.js';
import { EXIT } from '../io.js';
import type { Invocation } from '../invocation.js';
import { packageVersion } from '../../version.js';

export function registerHealthCommand(program: Command, invocation: Invocation): void {
  program
    .command('health')
    .description('reachability, versions, schema or index and alias state, document counts; exit 1 when unhealthy')
    .option('--json', 'answer with a JSON object on stdout')
    .addHelpText(
      'after',
      examples(
        ['monitor-admin health', 'a readable report'],
        ['monitor-admin health --json | jq .healthy', 'for monitoring'],
        ['monitor-admin health || page-the-on-call', 'the exit code says it all'],
      ),
    )
    .action(async (options: { json?: boolean }) => {
      const admin = await invocation.storeAdmin();
      const report = await admin.health();
      report.versions = { 'monitor-admin': packageVersion(), ...report.versions };
      invocation.exitCode = report.healthy ? EXIT.ok : EXIT.failure;
      if (options.json) {
        await invocation.out(`${JSON.stringify(report)}\n`);
        return;
      }
      const width = Math.max(...report.checks.map((c) => c.name.length), 8);
      const lines = [
        `${report.healthy ? 'healthy' : 'UNHEALTHY'}: ${report.store} at ${report.location}`,
        `versions: ${Object.entries(report.versions)
          .filter(([, v]) => v !== '')
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}`,
        ...report.checks.map((c) => `  ${c.ok ? 'ok  ' : 'FAIL'} ${c.name.padEnd(width)} ${c.detail}`),
      ];
      if (Object.keys(report.counts).length > 0) {
        lines.push(
          `counts: ${Object.entries(report.counts)
            .map(([k, n]) => `${k} ${n}`)
            .join(', ')}`,
        );
      }
      await invocation.out(`${lines.join('\n')}\n`);
    });
}
