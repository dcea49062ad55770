import { expect } from 'chai';
import { ValidationError } from '../../../src/domain/errors.js';
import { TIMESTAMP_YEARS } from '../../../src/domain/fields.js';
import { isIso8601, isTimestamp } from '../../../src/domain/validation/field-schema.js';
import { validateMetric } from '../../../src/domain/validation/metric.js';
import { validateSession } from '../../../src/domain/validation/session.js';
import { aMetric } from '../../support/builders.js';

const isLeap = (year: number): boolean => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
const within = (year: number): boolean => year >= TIMESTAMP_YEARS.first && year <= TIMESTAMP_YEARS.last;

/** The field error a create body gets, or undefined when it is accepted. */
function refusal(validate: () => unknown, field: string): string | undefined {
  try {
    validate();
    return undefined;
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    return error.fieldErrors[field];
  }
}

/** The dates the store holds: one rule (domain/fields.ts TIMESTAMP_YEARS) for run_date and item_start_time. */
describe('domain: the years a date may fall in', function () {
  it('takes every day of the years 2000 to 2099 and none of any other four-digit year (leap days included)', function () {
    expect(TIMESTAMP_YEARS).to.deep.equal({ first: 2000, last: 2099 });
    for (let year = 0; year <= 9999; year += 1) {
      const y = String(year).padStart(4, '0');
      for (const day of [`${y}-01-01`, `${y}-12-31T23:59:59.999999`, `${y}-02-28`])
        expect(isTimestamp(day), day).to.equal(within(year));
      expect(isTimestamp(`${y}-02-29`), `${y}-02-29`).to.equal(within(year) && isLeap(year));
      // A command's date option (a purge's cut-off) is any four-digit year.
      expect(isIso8601(`${y}-02-29`), `${y}-02-29 as an option`).to.equal(isLeap(year));
    }
  });

  it('refuses a run_date or item_start_time of another year with a field error naming the field and the years', function () {
    for (const date of ['1800-01-01', '1999-12-31T23:59:59', '2100-01-01T00:00:00', '9999-12-01', '0999-03-01']) {
      const session = refusal(() => validateSession({ session_h: 's', run_date: date, description: {} }), 'run_date');
      expect(session, date).to.equal(
        `must be a date of the years 2000 to 2099 (the years the store holds), not of ${date.slice(0, 4)}`,
      );
      const metric = refusal(() => validateMetric({ ...aMetric(), item_start_time: date }), 'item_start_time');
      expect(metric, date).to.match(/years 2000 to 2099/);
    }
    // Not a date at all: the format, with the years.
    expect(refusal(() => validateMetric({ ...aMetric(), item_start_time: 'yesterday' }), 'item_start_time')).to.equal(
      'must be an ISO 8601 date and time of the years 2000 to 2099, e.g. 2026-11-22T05:10:45.684828',
    );
    for (const date of ['2000-01-01T00:00:00', '2099-12-31T23:59:59.999999', '2000-02-29', '2026-11-22 05:10:45Z'])
      expect(validateSession({ session_h: 's', run_date: date, description: {} }).run_date).to.equal(date);
  });
});
