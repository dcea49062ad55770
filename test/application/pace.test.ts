import { expect } from 'chai';
import { AnalysisStoppedError } from '../../src/application/errors.js';
import { paceOf } from '../../src/application/pace.js';

/**
 * An analysis shares the event loop: once its slice is spent a checkpoint lets other work run first, two analyses
 * take turns a slice each, and a stopped analysis (budget spent, client gone) throws at its next checkpoint.
 */

describe('application/pace', function () {
  it('lets other work run at a checkpoint once the slice is spent, not before', async function () {
    let ran = false;
    const other = setImmediate(() => (ran = true));
    await paceOf(new AbortController().signal, Number.POSITIVE_INFINITY).checkpoint();
    expect(ran, 'a slice that lasts: no pause').to.equal(false);
    clearImmediate(other);

    setImmediate(() => (ran = true));
    await paceOf(new AbortController().signal, 0).checkpoint();
    expect(ran, 'a slice spent: the event loop ran first').to.equal(true);
  });

  it('gives two analyses at work a slice each in turn', async function () {
    const order: string[] = [];
    const analysis = async (name: string): Promise<void> => {
      const pace = paceOf(new AbortController().signal, 0);
      for (let slice = 0; slice < 3; slice += 1) {
        await pace.checkpoint();
        order.push(name);
      }
    };
    await Promise.all([analysis('a'), analysis('b')]);
    expect(order).to.deep.equal(['a', 'b', 'a', 'b', 'a', 'b']);
  });

  it('throws the reason it was stopped for at the next checkpoint, even within its slice', async function () {
    const controller = new AbortController();
    const pace = paceOf(controller.signal, Number.POSITIVE_INFINITY);
    await pace.checkpoint();
    const reason = new AnalysisStoppedError('budget', 'the analysis ran out of time');
    controller.abort(reason);
    const thrown = await pace.checkpoint().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(thrown).to.equal(reason);
  });
});
