import type { Database } from 'better-sqlite3';
import { ExactSum } from '../../domain/cost/exact-sum.js';
import type { CostParts } from '../summary/summary-reads.js';

/**
 * `cost_sums(total_time, user_time, kernel_time, mem_usage)`, an SQL aggregate: the exact sums (ExactSum) of a
 * group's four measures, as their partials in one BLOB — for each sum its number of partials, then the partials, as
 * 64-bit doubles. The cost of metrics summed by SQL is then merged with the totals run summaries keep, and across the
 * builds an analysis reads one at a time, without rounding: SQLite's own SUM is compensated but rounds, in the order
 * the rows come.
 */
export const COST_SUMS = 'cost_sums';

/** Registers cost_sums on a connection (each connection of the store, before any cost query). */
export function registerCostSums(db: Database): void {
  const aggregate = {
    start: () => [new ExactSum(), new ExactSum(), new ExactSum(), new ExactSum()],
    step: (sums: ExactSum[], total: number, user: number, kernel: number, memory: number) => {
      (sums[0] as ExactSum).add(total);
      (sums[1] as ExactSum).add(user);
      (sums[2] as ExactSum).add(kernel);
      (sums[3] as ExactSum).add(memory);
      return sums;
    },
    result: (sums: ExactSum[]) => {
      const partials = sums.map((sum) => sum.partials());
      const blob = Buffer.allocUnsafe(8 * partials.reduce((length, each) => length + 1 + each.length, 0));
      let offset = 0;
      for (const each of partials) {
        offset = blob.writeDoubleLE(each.length, offset);
        for (const partial of each) offset = blob.writeDoubleLE(partial, offset);
      }
      return blob;
    },
    deterministic: true,
  };
  // The type definitions know aggregates of one argument only; better-sqlite3 passes a step every argument.
  db.aggregate(COST_SUMS, aggregate as unknown as Parameters<Database['aggregate']>[1]);
}

/** The sums of a cost_sums BLOB, with a group's count and highest memory: CostParts. */
export function costParts(blob: Buffer, tests: number, mem_max: number): CostParts {
  let offset = 0;
  const next = (): number[] => {
    const partials = new Array<number>(blob.readDoubleLE(offset));
    offset += 8;
    for (let at = 0; at < partials.length; at += 1, offset += 8) partials[at] = blob.readDoubleLE(offset);
    return partials;
  };
  // In the order of cost_sums' arguments.
  const [total_time, user_time, kernel_time, mem_sum] = [next(), next(), next(), next()] as const;
  return { tests, mem_max, total_time, user_time, kernel_time, mem_sum };
}
