import { api } from '../api.js';
import { fill, h, type Child } from '../dom.js';
import { integer, number, short } from '../format.js';
import { enc } from '../links.js';
import type { ClassNoise, NoiseReport, NoiseSummary } from '../../../wire/cost.js';
import { run } from '../sections.js';
import { table } from '../table.js';

const BUILDS = 30;
const RESOURCE = 'total_time';

/** A coefficient of variation as a %. */
const cvPct = (cv: number | null | undefined): string =>
  cv === null || cv === undefined ? '–' : `${number.format(cv * 100)} %`;

const noiseOf = (c: ClassNoise): NoiseSummary | undefined => c.noise[RESOURCE];

/** The values that define a class, as `key=value` (its fields, MONITOR_CLASS_FIELDS), each value isolated (dom.ts). */
const fieldsText = (fields: Record<string, unknown>): Child[] => {
  const entries = Object.entries(fields);
  if (entries.length === 0) return ['–'];
  return entries.flatMap(([key, value], i) => [
    i > 0 ? ', ' : null,
    `${key}=`,
    typeof value === 'string' ? value : JSON.stringify(value),
  ]);
};

/**
 * A pipeline's machine classes, noisiest first (the API's order: the median CV of the tests' total time across the
 * last 30 builds): how sure a verdict on each can be.
 */
export async function noisePage({ pipeline = '' }: DOMStringMap): Promise<void> {
  await run({
    classes: async () => {
      const report = (await api(
        `/pipelines/${enc(pipeline)}/noise?builds=${BUILDS}&resource=${RESOURCE}`,
      )) as NoiseReport;
      const ranked = report.classes.map((c, i) => ({ ...c, rank: i + 1 }));
      fill(
        'classes',
        h(
          'p',
          { class: 'note' },
          `${integer.format(report.classes.length)} class${report.classes.length === 1 ? '' : 'es'} over ${integer.format(report.builds.length)} builds. A class is an execution context without its host name; the variant pages compare each test within its class.`,
        ),
        table<ClassNoise & { rank: number }>(
          [
            { label: '#', cell: (c) => c.rank, numeric: true },
            {
              label: 'Class',
              cell: (c) => h('span', { class: 'id machine-class', title: c.machine_class }, short(c.machine_class)),
            },
            { label: 'Fields', cell: (c) => h('code', {}, fieldsText(c.fields)) },
            { label: 'Contexts', cell: (c) => integer.format(c.contexts), key: (c) => c.contexts, numeric: true },
            { label: 'Builds', cell: (c) => integer.format(c.builds), key: (c) => c.builds, numeric: true },
            {
              label: 'Median CV',
              cell: (c) => cvPct(noiseOf(c)?.median_cv),
              key: (c) => noiseOf(c)?.median_cv,
              numeric: true,
            },
            { label: 'p90 CV', cell: (c) => cvPct(noiseOf(c)?.p90_cv), key: (c) => noiseOf(c)?.p90_cv, numeric: true },
            {
              label: 'Tests',
              cell: (c) => integer.format(noiseOf(c)?.tests ?? 0),
              key: (c) => noiseOf(c)?.tests,
              numeric: true,
            },
          ],
          ranked,
          {
            rowAttrs: (c) => ({ 'data-class': c.machine_class }),
            empty: 'No machine class ran a test of this pipeline in the period.',
          },
        ),
        report.total_page > 1 ? h('p', { class: 'note' }, 'The noisiest classes only (the first page).') : null,
      );
    },
  });
}
