import { expect } from 'chai';
import {
  classifySeries,
  heldStepStart,
  tailProbability,
  withinSeenSpikes,
} from '../../../src/domain/regression/series-class.js';
import { gaussian, random } from '../../../bench/lib/random.js';

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

  it('a new level noisier than the old, never 6 spreads clear of it, is a step all the same: it is not absorbed', function () {
    // A CPU loop's user time (s, the runner divided out) with the real client: +50 % CPU from the 17th build on, on
    // runners of varying load. Sorted in with the old level, the new values would triple its spread, and a run at the
    // new level would pass as noise four builds after the regression.
    const cpu = { floor: 0.05, minChangePct: 10 };
    const old = [0.487, 0.454, 0.473, 0.445, 0.439, 0.485, 0.471, 0.502, 0.452, 0.473, 0.442, 0.584, 0.491, 0.493];
    const shape = classifySeries([...old, 0.485, 0.452, 0.706, 0.763, 0.969, 0.768], cpu);
    expect(shape.step).to.include({ start: 16, direction: 1 });
    expect(shape.modes[0]!.spread).to.be.below(0.04);
    // A run between the two levels, nearer the new one, still holds it; one nearer the old level does not.
    expect(heldStepStart(shape, 1, 0.604)).to.equal(16);
    expect(heldStepStart(shape, 1, 0.52)).to.equal(null);
    // The same values but the last, back near the old level: no level held, no step.
    expect(classifySeries([...old, 0.485, 0.452, 0.706, 0.763, 0.969, 0.5], cpu).step).to.equal(null);
    // Two values at the end each within 3 spreads of the level before: noise, not a step.
    expect(classifySeries([...old, 0.51, 0.52], cpu).step).to.equal(null);
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

describe("a series' class", function () {
  const reach = { floor: 0.05, minChangePct: 15 };

  it('tells steady from noisy by the spread beside the level', function () {
    const next = random(1);
    const around = (level: number, cv: number) => Array.from({ length: 20 }, () => level * (1 + cv * gaussian(next)));
    expect(classifySeries(around(2, 0.03), reach).class).to.equal('steady');
    expect(classifySeries(around(2, 0.2), reach).class).to.equal('noisy');
  });

  it('counts a spike the next build falls back from, not a high value at the end of the history', function () {
    const level = [1, 1.01, 0.99, 1, 1.02, 0.98, 1, 1.01];
    expect(classifySeries([...level, 2.1, ...level], reach)).to.include({ class: 'spiky', spikes: 1 });
    expect(classifySeries([...level, ...level, 2.1], reach)).to.include({ class: 'steady', spikes: 0 });
  });

  it('finds the modes of a bimodal test: its other mode is no change, leaving every mode is', function () {
    const memory = [2, 2.05, 1.98, 45, 2.02, 44.1, 2.01, 1.97, 46, 2.03, 2, 1.99, 45.5, 2.04, 2, 1.96];
    const shape = classifySeries(memory, { floor: 2, minChangePct: 15 });
    expect(shape.class).to.equal('multimodal');
    expect(shape.modes.map((m) => Math.round(m.centre))).to.deep.equal([2, 45]);
    expect(tailProbability(shape, 45.3, 1), 'back at its upper mode').to.be.greaterThan(0.1);
    expect(tailProbability(shape, 2.1, 1), 'at its lower mode').to.equal(1);
    // Four values in the upper mode: three degrees of freedom, heavy tails; still far below any level of doubt.
    expect(tailProbability(shape, 95, 1), 'above every mode').to.be.lessThan(1e-4);
  });
});
