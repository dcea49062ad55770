import type { Store } from '../store/store.js';

/**
 * The summary sweep (src/store/summary/): the service summarizes the sessions pending a run summary — written by small
 * writes such as pytest-monitor's single creates, or by a write that a crash cut off between its metrics and their
 * summary — once at start (`recovering`: every pending session, so that each stored metric is in a summary from then
 * on) and then every SWEEP_MS, SWEEP_SESSIONS at a time. Analyses never wait for it: they summarize the pending
 * sessions of their scope first. A store that is down is swept when it comes back.
 */

/** How often the sweep runs. */
const SWEEP_MS = 30_000;
/** Sessions summarized per run at most (a backlog goes over several runs). */
const SWEEP_SESSIONS = 100;

export interface SweepEvents {
  /** After each run: how many sessions it summarized, and how many are still pending. */
  swept(summarized: number, pending: number): void;
  failed(error: unknown): void;
}

export class SummarySweep {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private recovered = false;
  private stopped = false;

  constructor(
    private readonly store: Store,
    private readonly events: SweepEvents,
    private readonly everyMs = SWEEP_MS,
  ) {}

  /** Runs the recovery now, then the sweep periodically. */
  start(): void {
    void this.run();
    this.timer = setInterval(() => void this.run(), this.everyMs);
    this.timer.unref();
  }

  /** Stops the timer and waits for a run in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }

  /** One run (never two at once); its failure is reported, and the next run tries again. */
  run(): Promise<void> {
    this.running ??= (async () => {
      try {
        const summarized = await this.store.summarizePending(
          this.recovered ? SWEEP_SESSIONS : Number.POSITIVE_INFINITY,
          !this.recovered,
        );
        this.recovered = true;
        if (!this.stopped) this.events.swept(summarized, await this.store.pendingSummaries());
      } catch (error) {
        this.events.failed(error);
      }
    })().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }
}
