import { expect } from 'chai';
import { aContext, aMetric, aSession } from '../support/builders.js';
import type { ApiClient } from '../support/service.js';

/** One request of the load and its answer; times in ms since the epoch. */
export interface Outcome {
  op: 'create' | 'read';
  started: number;
  ended: number;
  /** 0: no HTTP answer at all. */
  status: number;
  retryAfter: string | null;
  /** The created metric's item (each create has its own, so a metric is found by it). */
  item?: string;
  /** The error message of an answer other than 2xx. */
  message?: string;
}

/**
 * A steady load over HTTP, as pytest-monitor clients make it: `workers` loops each creating metrics one after the
 * other (every one with its own item) and, every fourth request, counting the session's metrics. Every answer is
 * recorded, with when its request started and ended.
 */
export class SteadyLoad {
  readonly outcomes: Outcome[] = [];
  /** Run now, as a client's session is: its metrics go to this month's index. */
  readonly session = aSession({ session_h: `cluster-${Date.now()}`, run_date: new Date().toISOString().slice(0, 23) });
  private running = false;
  private loops: Array<Promise<void>> = [];

  constructor(
    private readonly api: ApiClient,
    private readonly workers = 4,
  ) {}

  async start(): Promise<void> {
    expect((await this.api.post('/contexts/', aContext())).status).to.equal(201);
    expect((await this.api.post('/sessions/', { ...this.session, description: {} })).status).to.equal(201);
    this.running = true;
    this.loops = Array.from({ length: this.workers }, (_, worker) => this.loop(worker));
  }

  async stop(): Promise<Outcome[]> {
    this.running = false;
    await Promise.all(this.loops);
    return this.outcomes;
  }

  private async loop(worker: number): Promise<void> {
    for (let i = 0; this.running; i += 1) {
      if (i % 4 === 3) await this.record('read', `/sessions/${this.session.session_h}/metrics/count`);
      else await this.record('create', '/metrics/', `w${worker}-${i}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  private async record(op: Outcome['op'], path: string, item?: string): Promise<void> {
    const started = Date.now();
    let status = 0;
    let retryAfter: string | null = null;
    let message: string | undefined;
    try {
      const response =
        op === 'create'
          ? await this.api.post(path, aMetric({ session_h: this.session.session_h, item, item_variant: item }))
          : await this.api.get(path);
      status = response.status;
      retryAfter = response.headers.get('retry-after');
      if (status >= 300) message = (response.body as { message?: string } | undefined)?.message ?? response.text;
    } catch {
      // No HTTP answer at all: recorded as status 0.
    }
    this.outcomes.push({
      op,
      started,
      ended: Date.now(),
      status,
      retryAfter,
      ...(item ? { item } : {}),
      ...(message ? { message } : {}),
    });
  }

  async storedCount(): Promise<number> {
    const response = await this.api.get<{ count: number }>(`/sessions/${this.session.session_h}/metrics/count`);
    expect(response.status, response.request).to.equal(200);
    return response.body.count;
  }

  /** The items of the session's metrics as the API lists them, every page. */
  async storedItems(): Promise<string[]> {
    const items: string[] = [];
    for (let page = 1; ; page += 1) {
      const response = await this.api.get<{ metrics: Array<{ item: string }>; next_url: string | null }>(
        `/sessions/${this.session.session_h}/metrics?per_page=500&page=${page}`,
      );
      expect(response.status, response.request).to.equal(200);
      items.push(...response.body.metrics.map((metric) => metric.item));
      if (response.body.next_url === null) return items;
    }
  }
}

/** What a run of the load amounts to, for the assertions and the report. */
export function summarise(outcomes: Outcome[], since: number) {
  const unavailable = outcomes.filter((o) => o.status === 503);
  const first = unavailable[0];
  const last = unavailable.at(-1);
  return {
    creates: outcomes.filter((o) => o.op === 'create').length,
    acknowledged: outcomes.filter((o) => o.op === 'create' && o.status === 201).length,
    reads: outcomes.filter((o) => o.op === 'read').length,
    readsAnswered: outcomes.filter((o) => o.op === 'read' && o.status === 200).length,
    unavailable: unavailable.length,
    /** From the fault to the end of the last 503, ms (0: none). */
    unavailableUntilMs: last ? last.ended - since : 0,
    unavailableFromMs: first ? first.started - since : 0,
    otherStatuses: [...new Set(outcomes.map((o) => o.status))].filter((s) => ![200, 201, 503].includes(s)),
    /** What the 503s said (each message once). */
    unavailableMessages: [...new Set(unavailable.map((o) => `${o.op}: ${o.message ?? ''}`))],
  };
}
