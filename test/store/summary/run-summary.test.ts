import { expect } from 'chai';
import {
  bySession,
  summarize,
  summaryHead,
  summaryId,
  MEASURE_FIELDS,
  type RunSummary,
} from '../../../src/store/summary/run-summary.js';
import type { Metric } from '../../../src/domain/records.js';
import { aMetric, aSession, ciTags } from '../../support/builders.js';

/** What a summary says of its metric at `at`, in the metric's own terms. */
const metricAt = (summary: RunSummary, at: number) => ({
  item_variant: summary.variants[at],
  item: summary.items[summary.item[at] as number],
  component: summary.components[summary.component[at] as number],
  kind: summary.kinds[summary.kind[at] as number],
  context_h: summary.contexts[summary.context[at] as number],
  ...Object.fromEntries(MEASURE_FIELDS.map((field) => [field, summary.values[field][at]])),
});

const ofMetric = (metric: Metric) => ({
  item_variant: metric.item_variant,
  item: metric.item,
  component: metric.component,
  kind: metric.kind,
  context_h: metric.context_h,
  ...Object.fromEntries(MEASURE_FIELDS.map((field) => [field, metric[field]])),
});

describe('store/summary/run-summary', function () {
  const session = aSession({ session_h: 's1', tags: [...ciTags('main', '12'), { key: '__ci__', value: 'gitlabci' }] });
  const metrics = Array.from({ length: 9 }, (_, i) =>
    aMetric({
      session_h: 's1',
      item_variant: `test_${i}[p]`,
      item: `test_${i % 3}`,
      component: ['', 'api', 'storage'][i % 3] as string,
      kind: i === 8 ? 'module' : 'function',
      context_h: `ctx-${i % 2}`,
      total_time: i * 0.1,
      mem_usage: 10 + i,
    }),
  );

  it('keeps each metric: its variant, dictionary entries and measures, in the order written', function () {
    const summary = summarize(session, metrics);
    expect(summary.keys).to.have.length(metrics.length);
    metrics.forEach((metric, at) => expect(metricAt(summary, at), `metric ${at}`).to.deep.equal(ofMetric(metric)));
  });

  it('holds each distinct context, component, kind and item once, in the order first met', function () {
    const summary = summarize(session, metrics);
    expect(summary.contexts).to.deep.equal(['ctx-0', 'ctx-1']);
    expect(summary.components).to.deep.equal(['', 'api', 'storage']);
    expect(summary.kinds).to.deep.equal(['function', 'module']);
    expect(summary.items).to.deep.equal(['test_0', 'test_1', 'test_2']);
  });

  it("is headed by the session's pipeline and build (its CI tags), or none outside a pipeline", function () {
    expect(summarize(session, metrics)).to.include({ session_h: 's1', pipeline: 'main', build: '12' });
    expect(summaryHead(aSession({ session_h: 'local', tags: [] }))).to.include({ pipeline: null, build: null });
    // From the head alone, as the store summarizes a pending session: the same head.
    const fromHead = summarize(summaryHead(session), metrics);
    expect(fromHead).to.deep.equal(summarize(session, metrics));
  });

  it('names a record by its session and metrics: the same body again overwrites it, another adds one', function () {
    const once = summaryId(summarize(session, metrics));
    expect(
      summaryId(
        summarize(
          session,
          metrics.map((m) => ({ ...m })),
        ),
      ),
    ).to.equal(once);
    expect(once.startsWith('s1.')).to.equal(true);
    expect(summaryId(summarize(session, metrics.slice(1)))).to.not.equal(once);
    expect(
      summaryId(summarize(session, [{ ...metrics[0], total_time: 99 } as Metric, ...metrics.slice(1)])),
    ).to.not.equal(once);
  });

  it('groups a batch by session, in the order each first appears', function () {
    const mixed = [
      aMetric({ session_h: 'b', item_variant: '1' }),
      aMetric({ session_h: 'a', item_variant: '2' }),
      aMetric({ session_h: 'b', item_variant: '3' }),
    ];
    const groups = bySession(mixed);
    expect([...groups.keys()]).to.deep.equal(['b', 'a']);
    expect(groups.get('b')?.map((m) => m.item_variant)).to.deep.equal(['1', '3']);
  });
});
