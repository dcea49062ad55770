import { Option, type Command } from 'commander';
import { DEFAULT_CHANGE_BUILDS, DEFAULT_CHANGE_RESOURCES } from '../../domain/changes/rule.js';
import { wholeNumber } from '../arguments.js';
import { RESOURCE_NAMES } from '../../domain/resources.js';
import { COST_QUERY } from '../../wire/cost-query.js';
import { fetchChanges } from '../changes/fetch-changes.js';
import { markdownFormat } from '../changes/markdown-format.js';
import { tableFormat } from '../changes/table-format.js';
import { registerChangesTriageCommand } from './changes-triage.js';
import { failing, FAIL_ON, STEPS_SHOWN, type FailOn } from '../changes/wording.js';
import { resourceList } from '../check/options.js';
import { examples } from '../help.js';
import { EXIT } from '../io.js';
import type { Invocation } from '../invocation.js';
import { addPipelinePeriodOptions, pipelinePeriodOf, type PipelinePeriodOptions } from '../pipeline-period-options.js';
import { connect, reportedServiceFailure } from '../service-options.js';
import { addTextFormatOptions, formatOf, printAnswer } from '../text-format.js';

/**
 * Which builds of a pipeline changed its tests' time or memory for good ("which commit did it"), for a nightly job or a
 * chat message: the service's change points (GET /pipelines/{p}/changes), every page, one block per build with changes.
 * Like `check` and `report`, it speaks HTTP only and never reads the store configuration; like `check`, its exit code
 * says whether something was found (--fail-on).
 */

interface ChangesOptions extends PipelinePeriodOptions {
  resources?: ReturnType<typeof resourceList>;
  failOn: FailOn;
}

/** The service's defaults, said in the help (the route applies its own when an option is not given). */
/** The service's defaults, as the route applies them (--help says them). */
const DEFAULT_BUILDS = DEFAULT_CHANGE_BUILDS;
const DEFAULT_RESOURCES = DEFAULT_CHANGE_RESOURCES.join(',');

const HELP = `
Each test on each machine class is a series per resource, one value per build; the service finds where a series'
level stepped and stayed (a slow runner or a one-off spike is no change), and groups the steps by the build they
start at: that build's commit did it. The period is the --builds most recent builds (default ${DEFAULT_BUILDS}) that started
within --since/--until.

--format table (the default) prints a headline, then one block per build with changes, the costliest first: the
build, its SCM reference and start, its steps as ranges ("3 tests 75–82 % slower (total_time)"), the CPU time they add
to a build, the likely cause and the steps every test of a machine class shared, then its largest steps (at most
${STEPS_SHOWN}; how many more is said): test, component, machine class, resource, before → after, change, CPU time, the
build it was reported with, whether it holds. --format markdown is the same for a chat message or a job summary;
--format json one object, every page merged: pipeline, period, resources, rule, series, total, changes. When
GITHUB_STEP_SUMMARY is set (GitHub Actions), the Markdown is appended to that file whatever the format.

The token comes from --token, else from the --server URL (http://ci:<token>@host), else from MONITOR_TOKEN. No store is
opened and no store configuration is read.

Exit codes: ${EXIT.ok} no change of the kind --fail-on names, ${EXIT.failure} such changes found (--fail-on regression, the
default: a step up — slower, larger — on any resource that has not gone away since; any: any build with changes; none:
never), ${EXIT.usage} bad arguments or a pipeline the service does not know, ${EXIT.unavailable} the service cannot answer
(unreachable, timed out, failing with 5xx, or it refused the token: 401/403).
${examples(
  ['monitor-admin changes --server http://monitor:8181 --pipeline main', `the last ${DEFAULT_BUILDS} builds`],
  [
    'monitor-admin changes --server "$URL" --pipeline main --since "$(date -d yesterday +%F)" --format markdown',
    'a nightly chat message',
  ],
  ['monitor-admin changes --server "$URL" --pipeline main --resources memory --fail-on any', 'memory only'],
  ['monitor-admin changes --server "$URL" --pipeline main --json | jq ".changes[0].build"', 'for a script'],
  [
    'monitor-admin changes triage 3f9c0e1a2b4d5e6f --server "$URL" --pipeline main --state accepted',
    'a step that is intended (see changes triage --help)',
  ],
)}See docs/changes.md for a nightly job and a chat message.
`;

/** --builds: 1 to the period's limit, refused before any request. */
const periodBuilds = wholeNumber(COST_QUERY.builds.min, COST_QUERY.builds.max);

export function registerChangesCommand(program: Command, invocation: Invocation): void {
  const command = program
    .command('changes')
    .description(
      "which builds changed a pipeline's test times or memory for good (change points): exit 1 on a step up that holds",
    );
  addPipelinePeriodOptions(
    command,
    new Option(
      COST_QUERY.builds.option.flags,
      `the period: this many most recent builds, ${COST_QUERY.builds.min} to ${COST_QUERY.builds.max} (default ${DEFAULT_BUILDS})`,
    ).argParser(periodBuilds),
  ).addOption(
    new Option(
      '--resources <list>',
      `the resources judged, comma-separated, of ${RESOURCE_NAMES.join(', ')} (default ${DEFAULT_RESOURCES})`,
    ).argParser(resourceList),
  );
  addTextFormatOptions(command, 'a chat message or job summary')
    .addOption(
      new Option(
        '--fail-on <kind>',
        'exit 1 when changes of this kind are found: regression (a step up that holds), any, none',
      )
        .choices(FAIL_ON)
        .default('regression'),
    )
    .addHelpText('after', HELP)
    .action(async (options: ChangesOptions) => {
      const format = formatOf(options);
      const request = {
        ...pipelinePeriodOf(options),
        resources: options.resources,
      };
      const remote = connect(invocation, options);
      try {
        const changes = await fetchChanges(remote, request);
        await printAnswer(invocation, format, changes, { table: tableFormat, markdown: markdownFormat });
        invocation.exitCode = failing(changes, options.failOn).length > 0 ? EXIT.failure : EXIT.ok;
      } catch (error) {
        if (!(await reportedServiceFailure(invocation, error))) throw error;
      }
    });
  registerChangesTriageCommand(command, invocation);
}
