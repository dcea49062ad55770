import { SHARE_MEASURES } from '../domain/cost/totals.js';

/**
 * The period of the cost routes, and what their rankings are by, declared once: each parameter's bounds, its
 * description in the OpenAPI document (api/routes/cost.ts builds its validation from this), and the option of `report`
 * that sets it (cli/commands/report.ts builds its options, and the report reads the service's 400s in their words).
 * The defaults are the use cases' own (a period's builds: DEFAULT_PERIOD_BUILDS, creep's: its rule's).
 */

/** The most builds a period may hold. */
const MAX_PERIOD_BUILDS = 1000;

interface CostParameter {
  /** The route's description of it (a function of the default where the routes' defaults differ). */
  help: string | ((fallback: number) => string);
  /** `report`'s option: its flags and, given the default where it has one, its --help line. */
  option: { flags: string; help: (fallback: string) => string };
  [bound: string]: unknown;
}

export const COST_QUERY = {
  builds: {
    min: 1,
    max: MAX_PERIOD_BUILDS,
    help: (fallback: number) => `How many of the most recent builds of the period (default ${fallback}).`,
    option: {
      flags: '--builds <n>',
      help: (fallback: string) => `the period: this many most recent builds (default ${fallback})`,
    },
  },
  since: {
    help: "Only builds that started on or after this date (their earliest session's `run_date`).",
    example: '2026-11-01',
    option: {
      flags: '--since <date>',
      help: () => 'only builds that started on or after this date (ISO 8601; without an offset, UTC)',
    },
  },
  until: {
    help: 'Only builds that started before this date.',
    example: '2026-12-01',
    option: { flags: '--until <date>', help: () => 'only builds that started before this date' },
  },
  by: {
    values: SHARE_MEASURES,
    help: `The total to rank by (default ${SHARE_MEASURES[0]}).`,
    option: {
      flags: '--by <total>',
      help: () => `the total the tests are ranked by (default ${SHARE_MEASURES[0]})`,
    },
  },
} as const satisfies Record<string, CostParameter>;

export type CostParameterName = keyof typeof COST_QUERY;

/** The option of `report` that sets a parameter of the cost routes (their 400s name the parameter). */
export const costOptionOf = (parameter: string): string | undefined =>
  parameter in COST_QUERY ? COST_QUERY[parameter as CostParameterName].option.flags.split(' ')[0] : undefined;
