import type { Command, Option } from 'commander';
import { COST_QUERY } from '../wire/cost-query.js';
import { parseDateOption } from './invocation.js';
import { addServiceOptions, type ServiceOptions } from './service-options.js';
import type { TextFormat } from './text-format.js';

/**
 * The options of the commands that read a period of a pipeline's builds from the service and print it for people and
 * scripts (`report`, `changes`): declared once so that both name the pipeline and the period alike.
 */
export interface PipelinePeriodOptions extends ServiceOptions {
  pipeline: string;
  builds?: number;
  since?: string;
  until?: string;
  format?: TextFormat;
  json?: boolean;
}

/**
 * Adds the service's options, --pipeline, `builds` (each command bounds the period's length and says its default in
 * its own words), --since and --until.
 */
export const addPipelinePeriodOptions = (command: Command, builds: Option): Command =>
  addServiceOptions(command, 'API token, sent as "Authorization: Bearer"', 60)
    .requiredOption('--pipeline <p>', 'the pipeline (pytest-monitor\'s "pipeline_branch" tag)')
    .addOption(builds)
    .option(COST_QUERY.since.option.flags, COST_QUERY.since.option.help())
    .option(COST_QUERY.until.option.flags, COST_QUERY.until.option.help());

/** The pipeline and period asked for, --since and --until checked and normalised (a usage error otherwise). */
export const pipelinePeriodOf = (
  options: PipelinePeriodOptions,
): { pipeline: string; builds?: number; since?: string; until?: string } => ({
  pipeline: options.pipeline,
  builds: options.builds,
  since: parseDateOption('--since', options.since),
  until: parseDateOption('--until', options.until),
});
