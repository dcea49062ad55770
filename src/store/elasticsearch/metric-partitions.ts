import type { Client } from '@elastic/elasticsearch';
import { indicesOf } from './aliases.js';
import { isAlreadyExists } from './errors.js';
import type { IndexNames } from './indices.js';

/**
 * Metrics are kept in one index per month of their session's run date, so that retention drops whole indices
 * instead of deleting documents one by one from an ever-growing index (Elastic's advice for time series). Each
 * month's index joins the `-metrics` alias that every read goes through, and has a month alias of its own that
 * writes go through with `require_alias`: a write never creates an index by itself (one made by Elasticsearch's
 * auto-creation would be outside the read alias), and it follows its month's index when a reindex replaces it.
 *
 * The month is the run date's as written (its first seven characters): the purge compares run dates as written,
 * so a month's index holds exactly the sessions that sort between that month and the next.
 *
 * A store made before partitioning keeps every metric in one index behind the alias; its month aliases then point at
 * that index, and `monitor-admin reindex` splits it by month (reindex-metrics.ts).
 */

/** The month (YYYY.MM, as in index names) a session run at `runDate` keeps its metrics in. */
export function monthOf(runDate: string): string {
  return `${runDate.slice(0, 4)}.${runDate.slice(5, 7)}`;
}

export function nextMonth(month: string): string {
  const [year, number] = month.split('.').map(Number) as [number, number];
  return number === 12 ? `${year + 1}.01` : `${year}.${String(number + 1).padStart(2, '0')}`;
}

/** True when every run date of `month` sorts before `before` (a run date or a prefix of one): the month can go whole. */
export function endsBefore(month: string, before: string): boolean {
  return nextMonth(month).replace('.', '-') <= before;
}

/** The month of a run date that is now (UTC). */
export const currentMonth = (now = new Date()): string => monthOf(now.toISOString());

/**
 * Makes `month`'s alias point at an index: a new month index (with the read alias, atomically), or the single index
 * of a store not partitioned yet. Idempotent, and safe when several instances do it at once: the loser of a creation
 * race sees "already exists", and the index it lost to came with its aliases.
 */
async function ensureMonth(client: Client, names: IndexNames, month: string): Promise<string> {
  const alias = names.monthAlias(month);
  if (await client.indices.existsAlias({ name: alias })) return alias;
  const behind = await indicesOf(client, names.alias('metrics'));
  const single = behind.length === 1 && names.monthOfIndex(behind[0] as string) === undefined ? behind[0] : undefined;
  if (single !== undefined) {
    await client.indices.updateAliases({ actions: [{ add: { index: single, alias } }] });
    return alias;
  }
  try {
    await client.indices.create({
      index: names.partition(month),
      aliases: { [names.alias('metrics')]: {}, [alias]: {} },
      wait_for_active_shards: 1,
    });
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
    if (!(await client.indices.existsAlias({ name: alias }))) {
      throw new Error(
        `the index ${names.partition(month)} exists without the alias ${alias}; run "monitor-admin init --check"`,
        { cause: error },
      );
    }
  }
  return alias;
}

/** This month's index and the next one's, made ahead of need (at start). */
export async function ensureMonthsAhead(client: Client, names: IndexNames, now = new Date()): Promise<void> {
  const month = currentMonth(now);
  await ensureMonth(client, names, month);
  await ensureMonth(client, names, nextMonth(month));
}

/**
 * One instance's view of the month aliases it writes through: each month ensured once, and the month after it made
 * as soon as a month is first written, so that crossing into a month never waits for an index to be created.
 */
export class MetricPartitions {
  private readonly ensured = new Map<string, Promise<string>>();
  /** The months whose index and the next month's are made: their alias. */
  private readonly made = new Map<string, string>();

  constructor(
    private readonly client: Client,
    private readonly names: IndexNames,
  ) {}

  /** The alias to write the metrics of a session run at `runDate` through. */
  async writeAlias(runDate: string): Promise<string> {
    const month = monthOf(runDate);
    // Every metric comes here: once a month and the next are made, a lookup.
    const made = this.made.get(month);
    if (made !== undefined) return made;
    const [alias, ahead] = await Promise.all([
      this.ensure(month),
      this.ensure(nextMonth(month)).catch(() => undefined), // ahead of need only: the write does not depend on it
    ]);
    if (ahead !== undefined) this.made.set(month, alias);
    return alias;
  }

  /** The month's alias was found missing (a purge dropped its index): the next write makes it again. */
  forget(runDate: string): void {
    const month = monthOf(runDate);
    this.ensured.delete(month);
    this.made.delete(month);
  }

  private ensure(month: string): Promise<string> {
    let ensured = this.ensured.get(month);
    if (!ensured) {
      ensured = ensureMonth(this.client, this.names, month);
      this.ensured.set(month, ensured);
      ensured.catch(() => this.ensured.delete(month));
    }
    return ensured;
  }
}
