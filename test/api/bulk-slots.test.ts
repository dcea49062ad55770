import { expect } from 'chai';
import { Slots } from '../../src/api/slots.js';

/** MAX_BULK_CONCURRENCY: at most that many `POST /bulk` bodies are read and stored at once; the others wait. */
describe('bulk slots (MAX_BULK_CONCURRENCY)', function () {
  it('runs at most `size` works at once, the others in the order they came, and frees a slot on failure too', async function () {
    const slots = new Slots(2);
    const started: number[] = [];
    let running = 0;
    let most = 0;
    const releases: Array<() => void> = [];
    const works = [0, 1, 2, 3, 4].map((n) =>
      slots.hold(async () => {
        started.push(n);
        running += 1;
        most = Math.max(most, running);
        await new Promise<void>((resolve) => releases.push(resolve));
        running -= 1;
        if (n === 1) throw new Error('refused');
        return n;
      }),
    );
    const settling = Promise.allSettled(works);
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).to.deep.equal([0, 1]);
    expect(slots.queued).to.equal(3);
    // Each release lets the next waiting work in, a failing one as well.
    for (let released = 0; released < 5; released += 1) {
      releases[released]?.();
      await new Promise((resolve) => setImmediate(resolve));
    }
    const settled = await settling;
    expect(settled.map((s) => s.status)).to.deep.equal([
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
      'fulfilled',
    ]);
    expect(started).to.deep.equal([0, 1, 2, 3, 4]);
    expect(most).to.equal(2);
    expect(slots.queued).to.equal(0);
  });
});
