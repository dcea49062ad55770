/**
 * Accuracy of the regression models on synthetic series (bench/lib/insight-dataset.ts): recall on injected
 * regressions (≥ +30 % and ≥ 6σ) and false positives among quiet series, with 20 builds of history, for every model
 * at its default parameters, with the default rule's minimum change and time floor. Run:
 * node --import tsx bench/suite/insight-accuracy.ts [series] [seed] (bench/suite/insight.ts puts the same table in its
 * report; bench/studies/model-accuracy/model-accuracy.ts covers more kinds of data, real series among them.)
 */
import { pathToFileURL } from 'node:url';
import { judge, MODELS, type ModelName } from '../../src/domain/regression/models.js';
import { DEFAULT_RULE } from '../../src/domain/regression/rule.js';
import { summarize } from '../../src/domain/stats/summary.js';
import { syntheticSeries } from '../lib/insight-dataset.js';

/** The table in markdown, after a line that says what it was computed on. */
export function accuracyTable(count: number, seed: number): string {
  const rows: string[] = [
    '| model | parameters | recall (injected) | false positives (quiet) | false improvements (quiet) |',
    '|---|---|---|---|---|',
  ];
  for (const name of Object.keys(MODELS) as ModelName[]) {
    const model = MODELS[name];
    let injected = 0;
    let found = 0;
    let quiet = 0;
    let falsePositives = 0;
    let falseImprovements = 0;
    for (const series of syntheticSeries(count, seed)) {
      const { change } = judge(model, summarize(series.history), series.value, {
        parameters: model.defaults,
        minChangePct: DEFAULT_RULE.minChangePct,
        floor: DEFAULT_RULE.floors.time,
      });
      if (series.injected > 0) {
        injected += 1;
        if (change === 'regression') found += 1;
      } else {
        quiet += 1;
        if (change === 'regression') falsePositives += 1;
        if (change === 'improvement') falseImprovements += 1;
      }
    }
    const pct = (part: number, whole: number) => `${((100 * part) / whole).toFixed(2)} %`;
    const parameters =
      name === 't_test' ? `confidence ${model.defaults.confidence}` : `threshold ${model.defaults.threshold}`;
    rows.push(
      `| ${name} | ${parameters} | ${pct(found, injected)} | ${pct(falsePositives, quiet)} | ${pct(falseImprovements, quiet)} |`,
    );
  }
  const rule = `min_change_pct ${DEFAULT_RULE.minChangePct}, floor ${DEFAULT_RULE.floors.time}`;
  return `${count} series, seed ${seed}, 20 builds of history, ${rule}\n${rows.join('\n')}\n`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.stdout.write(accuracyTable(Number(process.argv[2] ?? 50_000), Number(process.argv[3] ?? 1)));
}
