import { expect } from 'chai';
import { SeriesFold, TEST_PARTS } from '../../../src/application/cost/series-by-build.js';
import type { MeasureRow } from '../../../src/store/store.js';

/** A test's values across builds, one per build, whatever order the store hands the rows in. */

const row = (build: string | null, item_variant: string, value: number): MeasureRow => ({
  item_variant,
  item: item_variant,
  component: 'core',
  context_h: 'ctx',
  session_h: `s-${build}`,
  build,
  values: [value, -value],
});

describe('application/cost/series-by-build', function () {
  const rows = [
    row('2', 'b', 20),
    row('1', 'a', 1),
    row('3', 'a', 3),
    row('2', 'a', 2),
    row('2', 'a', 8),
    row('2', 'a', 5),
    row('9', 'a', 99),
    row(null, 'a', 99),
  ];
  const fold = (order: MeasureRow[]) => {
    const one = new SeriesFold(['1', '2', '3'], 2, TEST_PARTS);
    order.forEach(one.add);
    return one.series();
  };

  it("gives one value per build in the builds' order, a build's several values by their median", function () {
    const series = fold(rows);
    expect([...series.keys()]).to.deep.equal(['core\u0000a', 'core\u0000b']);
    expect(series.get('core\u0000a')).to.deep.equal({
      item_variant: 'a',
      item: 'a',
      component: 'core',
      builds: ['1', '2', '3'],
      values: [
        [1, 5, 3],
        [-1, -5, -3],
      ],
    });
    expect(series.get('core\u0000b')?.builds, 'a build outside the period, or none, is left out').to.deep.equal(['2']);
  });

  it('gives the same series whatever order the rows come in', function () {
    expect(fold([...rows].reverse())).to.deep.equal(fold(rows));
  });
});
