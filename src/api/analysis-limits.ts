import type { Context as KoaContext } from 'koa';
import { AnalysisStoppedError } from '../application/errors.js';
import { paceOf, type Pace } from '../application/pace.js';
import type { Config } from '../config.js';
import type { ServiceMetrics } from '../observability/metrics.js';
import { serviceUnavailable } from './errors.js';
import { NoSlotError, Slots } from './slots.js';

/**
 * What an analysis read may cost an instance: at most ANALYSIS_CONCURRENCY at once, the others waiting their turn at
 * most ANALYSIS_QUEUE_TIMEOUT_MS (then 503 with Retry-After), each stopped at ANALYSIS_TIMEOUT_MS or as soon as its
 * client goes away. The work itself runs at a Pace (application/pace.ts) that yields the event loop between slices, so
 * that writes, listings and probes never wait for an analysis.
 */
export class AnalysisLimits {
  private readonly slots: Slots;

  constructor(
    private readonly limits: Config['analysis'],
    private readonly metrics: ServiceMetrics,
  ) {
    this.slots = new Slots(limits.concurrency);
  }

  /** Runs `work` for the request `ctx` once it has its turn, with the pace that stops it. */
  async run<T>(ctx: KoaContext, work: (pace: Pace) => Promise<T>): Promise<T> {
    const stop = new AbortController();
    const clientLeft = (): void => {
      if (!ctx.res.writableEnded)
        stop.abort(new AnalysisStoppedError('client', 'the client closed its connection before the answer'));
    };
    ctx.res.once('close', clientLeft);
    this.metrics.analysesWaiting.set(this.slots.queued + 1);
    try {
      return await this.slots.hold(() => this.started(stop, work), {
        ms: this.limits.queueTimeoutMs,
        signal: stop.signal,
      });
    } catch (error) {
      throw this.refusal(error);
    } finally {
      ctx.res.off('close', clientLeft);
      this.metrics.analysesWaiting.set(this.slots.queued);
    }
  }

  private async started<T>(stop: AbortController, work: (pace: Pace) => Promise<T>): Promise<T> {
    this.metrics.analysesWaiting.set(this.slots.queued);
    this.metrics.analysesRunning.set(this.slots.busy);
    const { timeoutMs } = this.limits;
    const budget = setTimeout(() => {
      stop.abort(
        new AnalysisStoppedError(
          'budget',
          `the analysis was stopped at its time budget of ${timeoutMs} ms (ANALYSIS_TIMEOUT_MS); ask for fewer ` +
            'builds, resources or tests, or raise ANALYSIS_TIMEOUT_MS',
        ),
      );
    }, timeoutMs);
    try {
      return await work(paceOf(stop.signal));
    } finally {
      clearTimeout(budget);
      // This holder's slot is freed after `work` settles: it is still counted here.
      this.metrics.analysesRunning.set(this.slots.busy - 1);
    }
  }

  /** The error an analysis that did not end answers with (counted by reason). */
  private refusal(error: unknown): unknown {
    if (error instanceof NoSlotError) {
      this.metrics.analysesRefused.inc({ reason: 'queue' });
      return serviceUnavailable(
        `${this.limits.concurrency} analyses are running and others wait; this one had no turn within ` +
          `${error.waitedMs} ms (ANALYSIS_QUEUE_TIMEOUT_MS); retry later`,
        Math.max(1, Math.ceil(this.limits.queueTimeoutMs / 1000)),
      );
    }
    if (error instanceof AnalysisStoppedError) this.metrics.analysesRefused.inc({ reason: error.reason });
    return error;
  }
}
