import { Option, type Command } from 'commander';
import { CHANGE_ID, CHANGE_STATE_MEANINGS, TRIAGE_STATES, type TriageState } from '../../domain/changes/triage.js';
import type { TriagedChange } from '../../wire/changes.js';
import { percent } from '../check/wording.js';
import { levels, stateWording } from '../changes/wording.js';
import { EXIT, UsageError } from '../io.js';
import type { Invocation } from '../invocation.js';
import type { PipelinePeriodOptions } from '../pipeline-period-options.js';
import { postJson } from '../remote.js';
import { connect, reportedServiceFailure } from '../service-options.js';
import { formatOf } from '../text-format.js';

/**
 * `monitor-admin changes triage <id>`: what a person says of a change (POST /pipelines/{p}/changes/{id}/triage), with
 * the --pipeline, --server and --token of `changes` (the parent command's options); prints the change as triaged.
 */

interface TriageOptions {
  state: TriageState;
  note?: string;
}

const HELP = `
The id is the one \`monitor-admin changes\` prints in its "id" column (and --json in each step's "id"): 16 hex digits
that name one step of one test's series. The states a person gives:
${TRIAGE_STATES.map((state) => `  ${state.padEnd(12)} ${CHANGE_STATE_MEANINGS[state]}`).join('\n')}
A change is "fixed" when a later change brings its level back: the data says it, nobody sends it.

--pipeline, --server, --token and --timeout are those of \`changes\`, given before or after "triage". The service needs
a write token when it has a tokens file; the record keeps the token's name, the time and the note, and every earlier
transition. \`changes --fail-on regression\` no longer fails on a step that is accepted or invalid.

Exit codes: ${EXIT.ok} triaged, ${EXIT.usage} bad arguments, an unknown pipeline or change, ${EXIT.unavailable} the service cannot answer
(unreachable, failing, or it refused the token: 401/403).

Example:
  monitor-admin changes triage 3f9c0e1a2b4d5e6f --pipeline main --server "$URL" --state accepted --note "the new cache"
`;

/** The triaged change for a person: the change, its state now and the transition just made. */
function triageTable(answer: TriagedChange): string {
  const { change } = answer;
  const last = answer.transitions.at(-1);
  const lines = [
    `change ${answer.id} of ${answer.pipeline}: ${stateWording(change)}${last ? ` (was ${last.from})` : ''}`,
    `  ${change.item_variant}${change.component === '' ? '' : ` (${change.component})`} on ${change.machine_class}, ` +
      `${change.resource} ${levels(change)} (${percent(change.change_pct)}) from build ${change.build}` +
      (change.scm_ref ? ` (${change.scm_ref})` : ''),
  ];
  if (last?.note) lines.push(`  note: ${last.note}`);
  if (!answer.in_period) lines.push('  (no longer among the changes of the default period: shown as last triaged)');
  lines.push(`  ${answer.transitions.length} transition${answer.transitions.length === 1 ? '' : 's'} in all`);
  return `${lines.join('\n')}\n`;
}

export function registerChangesTriageCommand(changes: Command, invocation: Invocation): void {
  changes
    .command('triage <id>')
    .description('say what a change is (acknowledged, accepted, invalid, new again): needs a write token')
    .addOption(new Option('--state <state>', 'what the change is').choices(TRIAGE_STATES).makeOptionMandatory())
    .option('--note <text>', 'why, for the next person (at most 2,000 characters)')
    .addHelpText('after', HELP)
    .action(async (id: string, options: TriageOptions, command: Command) => {
      const parent = command.optsWithGlobals<PipelinePeriodOptions & TriageOptions>();
      if (!CHANGE_ID.test(id))
        throw new UsageError(`"${id}" is not a change id: 16 hex digits, as \`monitor-admin changes\` prints them`);
      const format = formatOf(parent);
      const remote = connect(invocation, parent);
      try {
        const answer = (await postJson(
          remote,
          `/pipelines/${encodeURIComponent(parent.pipeline)}/changes/${id}/triage`,
          { state: options.state, note: options.note ?? null },
          (field) => (field === 'state' || field === 'note' ? `--${field}` : field),
        )) as TriagedChange;
        await invocation.out(format === 'json' ? `${JSON.stringify(answer)}\n` : triageTable(answer));
        invocation.exitCode = EXIT.ok;
      } catch (error) {
        if (!(await reportedServiceFailure(invocation, error))) throw error;
      }
    });
}
