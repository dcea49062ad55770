import { expect } from 'chai';
import {
  betaMoments,
  betaPosterior,
  probabilityAllAbove,
  tailForThreshold,
} from '../../../src/domain/stats/beta-binomial.js';

describe('stats: the beta-binomial', function () {
  it('estimates the beta of the rates by the method of moments', function () {
    // Two series at 0 and 1 of 10: mean 1/2, observed Σ n(p̂ − μ)² = 5, binomial part 1/2 over 18 pairs → τ² = 1/4,
    // the largest a rate of mean 1/2 can have: strength 0.
    expect(
      betaMoments([
        { hits: 0, n: 10 },
        { hits: 10, n: 10 },
      ]),
    ).to.deep.equal({ mean: 0.5, strength: 0 });
    // The same rate in every series (less spread than the binomial's): one common rate, no finite strength.
    expect(
      betaMoments([
        { hits: 2, n: 10 },
        { hits: 2, n: 10 },
      ]),
    ).to.deep.equal({ mean: 0.2, strength: Infinity });
    // No hit, or no trial: nothing to spread.
    expect(betaMoments([{ hits: 0, n: 10 }])).to.deep.equal({ mean: 0, strength: Infinity });
    expect(betaMoments([{ hits: 0, n: 0 }])).to.deep.equal({ mean: 0, strength: Infinity });
  });

  it('gives the posterior and the moments several draws need', function () {
    const posterior = betaPosterior({ mean: 0.01, strength: 20 }, { hits: 0, n: 20 });
    expect(posterior).to.deep.equal({ alpha: 0.2, beta: 39.8 });
    // With tail 0 the probability is the beta's moment E[π^r] = Π (α+i)/(α+β+i).
    expect(probabilityAllAbove(posterior, 0, 3)).to.be.closeTo((0.2 * 1.2 * 2.2) / (40 * 41 * 42), 1e-15);
    // No hits at all: draws are independent tails.
    expect(probabilityAllAbove({ alpha: 0, beta: 20 }, 1e-3, 2)).to.be.closeTo(1e-6, 1e-18);
    // One draw: the mean rate plus the tail of the rest, E[π] + (1 − E[π]) · tail.
    expect(probabilityAllAbove({ alpha: 1, beta: 9 }, 0.5, 1)).to.be.closeTo(0.1 + 0.9 * 0.5, 1e-15);
  });

  it('inverts to the tail each draw must reach, none when the hits alone exceed the threshold', function () {
    const posterior = betaPosterior({ mean: 0.01, strength: 20 }, { hits: 0, n: 20 });
    const tail = tailForThreshold(1e-6, posterior, 4);
    expect(tail).to.be.greaterThan(0);
    expect(probabilityAllAbove(posterior, tail, 4)).to.be.closeTo(1e-6, 1e-12);
    expect(tailForThreshold(1e-6, posterior, 1)).to.equal(0);
  });
});
