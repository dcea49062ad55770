/**
 * Dates compared as instants. A session's `run_date` is kept and returned as the client wrote it (ISO 8601, with or
 * without a time, a fraction of up to 9 digits, an offset), so one instant has many spellings: `…T10:00:00`,
 * `…T10:00:00.000`, `…T10:00:00Z`, `…T11:00:00+01:00`. Every comparison of dates — a period's `since`/`until`, the
 * order a pipeline's builds started in, a baseline's "started before" — goes through `instantOf`, one parse to one
 * normalised form, so that the spelling never decides, and both stores answer alike (they hold the text only).
 *
 * A date without an offset is read as UTC. pytest-monitor writes the runner's local time without an offset, which
 * the service cannot know; reading it as UTC keeps two such dates in the order they are written (a period given
 * without an offset selects exactly what the text says), does not depend on the zone of the machine the service
 * runs on, and is how the `monitor_changes_last_day` gauge reads them. A date without a time is its midnight. A leap
 * second (`:60`) is the first instant of the next minute.
 */

/** An instant, normalised: `YYYY-MM-DDTHH:MM:SS.fffffffffZ` (UTC, nine fraction digits), so text order is time order. */
export type Instant = string & { readonly instant: unique symbol };

/** The parts of an ISO 8601 date as the timestamp fields accept it (validation/field-schema.ts states the calendar). */
const PARTS =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:(Z)|([+-])(\d{2})(?::?(\d{2}))?)?)?$/;

/** The instant an ISO 8601 date names (UTC when it has no offset); undefined for text that is not one. */
export function instantOf(text: string): Instant | undefined {
  const parts = PARTS.exec(text);
  if (!parts) return undefined;
  const [, year, month, day, hour = '0', minute = '0', second = '0', fraction = ''] = parts;
  const [sign, offsetHours = '0', offsetMinutes = '0'] = parts.slice(9);
  const offset = (sign === '-' ? -1 : 1) * (Number(offsetHours) * 60 + Number(offsetMinutes));
  const at = new Date(0);
  // setUTCFullYear, not Date.UTC: the latter reads the years 0 to 99 as 1900 to 1999.
  at.setUTCFullYear(Number(year), Number(month) - 1, Number(day));
  at.setUTCHours(Number(hour), Number(minute) - offset, Number(second), 0);
  if (Number.isNaN(at.getTime())) return undefined;
  return `${at.toISOString().slice(0, -5)}.${fraction.padEnd(9, '0')}Z` as Instant;
}

/**
 * The instant of a stored run date. One stored before dates were validated, which names none, is compared as it is
 * written (as every date was before): it still sorts among the others by its text.
 */
export const runInstant = (runDate: string): Instant => instantOf(runDate) ?? (runDate as Instant);

/** Negative, zero or positive as run date `a` is earlier than, the same instant as, or later than `b`. */
export function compareRunDates(a: string, b: string): number {
  const [x, y] = [runInstant(a), runInstant(b)];
  return x < y ? -1 : x > y ? 1 : 0;
}
