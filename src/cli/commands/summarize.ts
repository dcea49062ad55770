import type { Command } from 'commander';
import { examples } from '../help.js';
import type { Invocation } from '../invocation.js';

export function registerSummarizeCommand(program: Command, invocation: Invocation): void {
  program
    .command('summarize')
    .description(
      'make the run summaries the analyses read, from the metrics, for a store an older version wrote (then the ' +
        'analyses read them)',
    )
    .addHelpText(
      'after',
      `
The service keeps a summary of each session's metrics as they arrive; a store written before summaries has none,
and the analyses (regressions, cost, creep, noise) read every metric until this command has made them. Safe while
the service runs (run it once every instance runs this version); an interrupted run resumes where it stood.
${examples(['monitor-admin summarize', 'once, after upgrading a store an older version wrote'])}`,
    )
    .action(async () => {
      const admin = await invocation.storeAdmin();
      const done = await admin.summarize({ progress: invocation.progress(), signal: invocation.io.signal });
      await invocation.err(
        `summarized ${done.sessions} sessions (${done.metrics} metrics) in ${admin.name} at ${admin.location}; ` +
          'the analyses read summaries from now on\n',
      );
    });
}
