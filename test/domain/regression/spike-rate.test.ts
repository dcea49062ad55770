import { expect } from 'chai';
import { spikePrior } from '../../../src/domain/regression/spike-rate.js';

/** The suite's spike prior (spike-rate.ts): its mean from every series' spikes, its strength held within bounds. */

describe("the gate's spike prior", function () {
  it("estimates the suite's spike prior, its strength held within bounds", function () {
    // Every series alike (binomial counts): the prior is as strong as the bound allows.
    const alike = spikePrior(Array.from({ length: 500 }, (_, i) => ({ hits: i % 50 === 0 ? 1 : 0, n: 20 })));
    expect(alike.mean).to.be.closeTo(1 / 1000, 1e-12);
    expect(alike.strength).to.equal(20);
    // A few series spike often, the others never: over-dispersed, a weaker prior.
    const apart = spikePrior(Array.from({ length: 500 }, (_, i) => ({ hits: i % 10 === 0 ? 4 : 0, n: 20 })));
    expect(apart.strength).to.be.lessThan(10);
  });
});
