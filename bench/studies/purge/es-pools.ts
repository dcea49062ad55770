/**
 * The Elasticsearch node's `write` and `search` thread pools, sampled while a bench runs (active threads, queue,
 * rejections), and their figures over a window of the bench's clock.
 */
import { es } from '../../lib/es.js';
import { sleep } from '../../lib/log.js';

export interface PoolSample {
  /** ms on the bench's clock. */
  at: number;
  writeActive: number;
  writeQueue: number;
  writeRejected: number;
  searchActive: number;
  searchQueue: number;
}

export interface Pools {
  samples: number;
  writeActiveMean: number;
  writeQueueMax: number;
  writeQueueMean: number;
  writeRejected: number;
  searchActiveMean: number;
  searchQueueMax: number;
}

async function samplePools(): Promise<Omit<PoolSample, 'at'> | undefined> {
  interface Pool {
    active: number;
    queue: number;
    rejected: number;
  }
  const { json } = (await es(
    'GET',
    '/_nodes/_local/stats/thread_pool?filter_path=nodes.*.thread_pool.write,nodes.*.thread_pool.search',
  )) as { json: { nodes?: Record<string, { thread_pool: { write: Pool; search: Pool } }> } };
  const pools = Object.values(json.nodes ?? {})[0]?.thread_pool;
  if (!pools) return undefined;
  return {
    writeActive: pools.write.active,
    writeQueue: pools.write.queue,
    writeRejected: pools.write.rejected,
    searchActive: pools.search.active,
    searchQueue: pools.search.queue,
  };
}

/** Samples the pools every `everyMs` on the clock `clock` until stopped. */
export function samplePoolsEvery(everyMs: number, clock: number): { samples: PoolSample[]; stop(): Promise<void> } {
  const samples: PoolSample[] = [];
  const state = { sampling: true };
  const running = (async () => {
    while (state.sampling) {
      const at = performance.now() - clock;
      try {
        const sample = await samplePools();
        if (sample) samples.push({ at, ...sample });
      } catch {
        /* a missed sample */
      }
      await sleep(everyMs);
    }
  })();
  return {
    samples,
    stop: async () => {
      state.sampling = false;
      await running;
    },
  };
}

/** The pools over [from, to]: mean active threads, largest and mean queue, rejections since the sample before. */
export function pools(samples: PoolSample[], from: number, to: number): Pools {
  const inside = samples.filter((x) => x.at >= from && x.at <= to);
  const mean = (f: (x: PoolSample) => number): number =>
    inside.length === 0 ? NaN : inside.reduce((sum, x) => sum + f(x), 0) / inside.length;
  const before = samples.filter((x) => x.at < from).pop();
  const last = inside[inside.length - 1];
  return {
    samples: inside.length,
    writeActiveMean: mean((x) => x.writeActive),
    writeQueueMax: Math.max(0, ...inside.map((x) => x.writeQueue)),
    writeQueueMean: mean((x) => x.writeQueue),
    writeRejected: last && before ? last.writeRejected - before.writeRejected : NaN,
    searchActiveMean: mean((x) => x.searchActive),
    searchQueueMax: Math.max(0, ...inside.map((x) => x.searchQueue)),
  };
}
