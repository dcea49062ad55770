import { expect } from 'chai';
import { classifySeries, heldStepStart, withinSeenSpikes } from '../../../src/domain/regression/series-class.js';

/**
 * A series' shape from its history (issue 41): a level only the latest builds hold is a step, not a second mode; a
 * test that goes back and forth between levels is multimodal; the spikes a history showed bound what one run proves.
 */

const memory = { floor: 2, minChangePct: 15 };
/** A memory level of about `centre` MB, `n` builds long, with a little noise. */
const level = (centre: number, n: number) => Array.from({ length: n }, (_, i) => centre + ((i * 7) % 5) * 0.05);

describe("a series' shape: steps and seen spikes", function () {
  it('a level the latest builds hold is a step from the level before, not a mode', function () {
    const history = [...level(22, 12), ...level(62, 3)];
    const shape = classifySeries(history, memory);
    expect(shape.class).to.not.equal('multimodal');
    expect(shape.modes.map((m) => Math.round(m.centre))).to.deep.equal([22]);
    expect(shape.step).to.include({ start: 12, direction: 1 });
    expect(Math.round(shape.step!.level.centre)).to.equal(62);
    // Still at the new level: held since the step began. Back at the old level, or past the new one: not held.
    expect(heldStepStart(shape, 1, 62.1)).to.equal(12);
    expect(heldStepStart(shape, 1, 140)).to.equal(null);
    expect(heldStepStart(shape, -1, 62.1)).to.equal(null);
  });

  it('the same two levels interleaved in time are modes', function () {
    const history = [22, 22.1, 62, 22, 22.2, 62.1, 22, 22.1, 22, 62.2, 22.1, 22, 62, 22];
    const shape = classifySeries(history, memory);
    expect(shape.class).to.equal('multimodal');
    expect(shape.modes.map((m) => Math.round(m.centre))).to.deep.equal([22, 62]);
    expect(shape.step).to.equal(null);
    expect(heldStepStart(shape, 1, 62)).to.equal(null);
  });

  it('a step back to the old level is a mode again: the levels are interleaved', function () {
    const history = [...level(22, 10), ...level(62, 3), ...level(22, 2)];
    expect(classifySeries(history, memory)).to.include({ class: 'multimodal', step: null });
  });

  it('one high value at the end of the history is neither a spike nor a step yet: it may be either', function () {
    const shape = classifySeries([...level(22, 12), 62], memory);
    expect(shape).to.include({ class: 'steady', spikes: 0, step: null });
    expect(shape.modes[0]!.centre).to.be.closeTo(22, 0.2);
  });

  it('an improvement kept is a step down, judged against the level before it', function () {
    const shape = classifySeries([...level(40, 12), ...level(22, 3)], memory);
    expect(shape.modes.map((m) => Math.round(m.centre))).to.deep.equal([40]);
    expect(shape.step).to.include({ start: 12, direction: -1 });
    expect(heldStepStart(shape, -1, 22)).to.equal(12);
    expect(heldStepStart(shape, 1, 22)).to.equal(null);
  });

  it('remembers the highest spike the history showed, whatever its class', function () {
    // 22 MB, 38 once (build 5), 22 again: a value of 34 is within the spikes already seen, 45 is not.
    const spiky = classifySeries([...level(22, 4), 38, ...level(22, 8)], memory);
    expect(spiky).to.include({ class: 'spiky', spikes: 1, highestSpike: 38 });
    expect(withinSeenSpikes(spiky, 34)).to.equal(true);
    expect(withinSeenSpikes(spiky, 45)).to.equal(false);
    // A test on two levels that spiked above the upper one once.
    const bimodal = classifySeries([17, 22, 17.1, 22.1, 38, 22, 17, 22.2, 17.2, 22, 17.1], memory);
    expect(bimodal).to.include({ class: 'multimodal', highestSpike: 38 });
    expect(withinSeenSpikes(classifySeries(level(22, 12), memory), 34)).to.equal(false);
  });
});
