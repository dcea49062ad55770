import type { Client } from '@elastic/elasticsearch';
import { withinTimestampYears } from '../../domain/fields.js';
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
 * so a month's index holds exactly the sessions that sort between that month and the next. A month is always spelt
 * with a four-digit year (YYYY.MM), and months are compared as (year, month) numbers, never as text that a fifth
 * digit would reorder. The API takes run dates of TIMESTAMP_YEARS only (domain/fields.ts), which bounds the number of
 * month indices; the month made ahead of need stays within those years too.
 *
 * A store made before partitioning keeps every metric in one index behind the alias; its month aliases then point at
 * that index, and `monitor-admin reindex` splits it by month (reindex-metrics.ts).
 */

/** A month as (year, month) numbers. */
function parseMonth(month: string): [number, number] {
  const [year, number] = month.split('.').map(Number) as [number, number];
  return [year, number];
}

const formatMonth = (year: number, number: number): string =>
  `${String(year).padStart(4, '0')}.${String(number).padStart(2, '0')}`;

/** The month (YYYY.MM, as in index names) a session run at `runDate` keeps its metrics in. */
export function monthOf(runDate: string): string {
  return `${runDate.slice(0, 4)}.${runDate.slice(5, 7)}`;
}

export function nextMonth(month: string): string {
  const [year, number] = parseMonth(month);
  return number === 12 ? formatMonth(year + 1, 1) : formatMonth(year, number + 1);
}

/**
 * True when every run date of `month` sorts before `before` (an ISO 8601 date, with or without a time): the month
 * can go whole. That is when the month comes before the cut-off's month — compared as numbers, so that the month
 * after 9999-12 (an index an older version made) is not taken for one before 2000.
 */
export function endsBefore(month: string, before: string): boolean {
  const [year, number] = parseMonth(month);
  const [beforeYear, beforeNumber] = [Number(before.slice(0, 4)), Number(before.slice(5, 7))];
  return year < beforeYear || (year === beforeYear && number < beforeNumber);
}

/** True when run dates of `month` are ones the API takes (TIMESTAMP_YEARS): a month whose index may be made ahead. */
const monthTaken = (month: string): boolean => withinTimestampYears(parseMonth(month)[0]);

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

/** This month's index and the next one's, made ahead of need (at start), within the years the API takes. */
export async function ensureMonthsAhead(client: Client, names: IndexNames, now = new Date()): Promise<void> {
  const month = currentMonth(now);
  for (const ahead of [month, nextMonth(month)]) if (monthTaken(ahead)) await ensureMonth(client, names, ahead);
}

/** After the month ahead of one written could not be made, how long that month's writes go without trying again. */
const AHEAD_RETRY_MS = 30_000;

/**
 * One instance's view of the month aliases it writes through: each month ensured once, and the month after it made
 * as soon as a month is first written, so that crossing into a month never waits for an index to be created.
 */
export class MetricPartitions {
  private readonly ensured = new Map<string, Promise<string>>();
  /** The months whose index and the next month's are made (or need none): their alias. */
  private readonly made = new Map<string, string>();
  /** The months whose next month's index could not be made, and when: tried again after AHEAD_RETRY_MS. */
  private readonly aheadFailed = new Map<string, number>();

  /** `onAheadFailure` hears why a month ahead of need could not be made (the cluster may refuse more shards). */
  constructor(
    private readonly client: Client,
    private readonly names: IndexNames,
    private readonly onAheadFailure: (error: unknown) => void = () => undefined,
  ) {}

  /** The alias to write the metrics of a session run at `runDate` through. */
  async writeAlias(runDate: string): Promise<string> {
    const month = monthOf(runDate);
    // Every metric comes here: once a month and the next are made, a lookup.
    const made = this.made.get(month);
    if (made !== undefined) return made;
    const next = nextMonth(month);
    const failedAt = this.aheadFailed.get(month);
    // A refused month ahead must not cost every write a refused index creation: it waits its turn.
    if (failedAt !== undefined && Date.now() - failedAt < AHEAD_RETRY_MS) return this.ensure(month);
    const [alias, ahead] = await Promise.all([
      this.ensure(month),
      // Ahead of need only: the write does not depend on it. None beyond the years the API takes.
      monthTaken(next)
        ? this.ensure(next).catch((error: unknown) => {
            this.aheadFailed.set(month, Date.now());
            this.onAheadFailure(error);
            return undefined;
          })
        : Promise.resolve(next),
    ]);
    if (ahead !== undefined) {
      this.made.set(month, alias);
      this.aheadFailed.delete(month);
    }
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
