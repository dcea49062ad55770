/**
 * A writer as pytest-monitor is one: one `POST /api/v1/metrics/` at a time, each on a new connection, every latency
 * and status kept on a clock the bench shares with its other samplers; and what a phase of its writes looks like
 * (p50 / p99 / max of the answered ones, how many waited over a limit, how many failed), with its Markdown row.
 */
import { send, type Target } from '../../lib/http-load.js';
import { sleep } from '../../lib/log.js';
import { fmt, fmtInt, summarize, type LatencySummary } from '../../lib/stats.js';

export interface Write {
  /** ms on the writer's clock when the request was sent. */
  at: number;
  ms: number;
  /** 201 when stored; 0 when the request failed without an answer. */
  status: number;
}

export interface WriterPhase extends LatencySummary {
  /** Stored writes that took over the slow limit. */
  slow: number;
  failed: number;
}

export interface Writer {
  writes: Write[];
  /** The first answer other than 201, or the first error. */
  firstError(): string | undefined;
  /** Lets the request in flight end, and sends no more. */
  stop(): Promise<void>;
}

/** Starts posting `bodyOf(0)`, `bodyOf(1)`... one at a time until stopped (or `limit` writes). */
export function startWriter(
  target: Target,
  bodyOf: (j: number) => string,
  options: { clock: number; limit: number },
): Writer {
  const writes: Write[] = [];
  let firstError: string | undefined;
  const state = { writing: true };
  const { clock } = options;
  const running = (async () => {
    for (let j = 0; state.writing && j < options.limit; j += 1) {
      const at = performance.now() - clock;
      try {
        const answer = await send(
          target,
          { method: 'POST', path: '/api/v1/metrics/', body: bodyOf(j) },
          { fresh: true, timeoutMs: 60_000 },
        );
        if (answer.status !== 201) firstError ??= `${answer.status}: ${answer.body.slice(0, 200)}`;
        writes.push({ at, ms: answer.ms, status: answer.status });
      } catch (error) {
        firstError ??= String(error);
        writes.push({ at, ms: performance.now() - clock - at, status: 0 });
        await sleep(10);
      }
    }
  })();
  return {
    writes,
    firstError: () => firstError,
    stop: async () => {
      state.writing = false;
      await running;
    },
  };
}

/** The figures of some writes: latencies of the stored ones, those over `slowMs`, the failed. */
export function writerPhase(writes: Write[], slowMs: number): WriterPhase {
  const ok = writes.filter((w) => w.status === 201);
  return {
    ...summarize(ok.map((w) => w.ms)),
    slow: ok.filter((w) => w.ms > slowMs).length,
    failed: writes.length - ok.length,
  };
}

/** Writes in flight at any time in [from, to]. */
export const within = (writes: Write[], from: number, to: number): Write[] =>
  writes.filter((w) => w.at <= to && w.at + w.ms >= from);

/** A phase's row of the table `| phase | writes | p50 ms | p99 ms | max ms | > slow ms | failed |`. */
export const writerRow = (name: string, p: WriterPhase): string =>
  `| ${name} | ${fmtInt(p.count)} | ${fmt(p.p50)} | ${fmt(p.p99)} | ${fmt(p.max)} | ${fmtInt(p.slow)} | ${fmtInt(p.failed)} |`;
