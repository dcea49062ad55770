import { expect } from 'chai';
import fc from 'fast-check';
import { encodeSummary, decodeSummary } from '../../../src/store/summary/summary-codec.js';
import { MEASURE_FIELDS, summarize, type RunSummary } from '../../../src/store/summary/run-summary.js';
import { aMetric, aSession, ciTags } from '../../support/builders.js';

/**
 * A run summary is stored as bytes (a SQLite BLOB, an Elasticsearch binary field) and every analysis reads it back:
 * what comes back must be what was written, each double to the last bit, or an answer from summaries would differ
 * from the answer from metrics.
 */

/** A typed array's bytes: equal bytes are equal values bit for bit (-0, NaN and subnormals included). */
const bytesOf = (column: Float64Array | Uint32Array): string =>
  Buffer.from(column.buffer, column.byteOffset, column.byteLength).toString('hex');

function expectSame(decoded: RunSummary, written: RunSummary): void {
  const { keys, context, component, kind, item, values, ...head } = written;
  const { keys: k, context: c, component: co, kind: ki, item: i, values: v, ...decodedHead } = decoded;
  expect(decodedHead).to.deep.equal(head);
  expect(bytesOf(k)).to.equal(bytesOf(keys));
  expect([c, co, ki, i].map(bytesOf)).to.deep.equal([context, component, kind, item].map(bytesOf));
  for (const field of MEASURE_FIELDS) expect(bytesOf(v[field]), field).to.equal(bytesOf(values[field]));
}

const session = aSession({ session_h: 'codec', tags: ciTags('main', '7') });

describe('store/summary/summary-codec', function () {
  it('gives back every column of a summary, each double bit for bit', function () {
    const awkward = [0.1 + 0.2, -0, 5e-324, 1.7976931348623157e308, 1 / 3, 0];
    const metrics = awkward.map((value, i) =>
      aMetric({
        session_h: 'codec',
        item_variant: `test_${i}[${value}]`,
        item: `test_${i % 2}`,
        component: i % 3 === 0 ? '' : 'storage',
        kind: i === 5 ? 'module' : 'function',
        context_h: `ctx-${i % 2}`,
        total_time: value,
        user_time: value / 7,
        kernel_time: i,
        cpu_usage: -value,
        mem_usage: value * 1e6,
      }),
    );
    const summary = summarize(session, metrics);
    expectSame(decodeSummary(encodeSummary(summary)), summary);
  });

  it('measures its header in bytes: variants in any script round-trip', function () {
    const variants = ['test_é[ü]', 'test_数据[😀]', 'test_ascii', 'test_\u05d0\u05d1[rtl]'];
    const summary = summarize(
      session,
      variants.map((item_variant, i) => aMetric({ session_h: 'codec', item_variant, total_time: i + 0.5 })),
    );
    expectSame(decodeSummary(encodeSummary(summary)), summary);
  });

  it('round-trips whatever the header length (the columns are aligned after it) and an empty summary', function () {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 24 }),
        fc.array(fc.double(), { maxLength: 12 }),
        (session_h, times) => {
          const summary = summarize(
            { session_h, pipeline: null, build: null, run_date: '2026-11-22T05:10:45' },
            times.map((total_time, i) => aMetric({ session_h, item_variant: `t${i}`, total_time })),
          );
          expectSame(decodeSummary(encodeSummary(summary)), summary);
        },
      ),
      { numRuns: 200 },
    );
  });
});
