import { setMaxListeners } from 'node:events';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { RequestSpec, Target } from '../../lib/http-load.js';
import { cpuSeconds } from '../../lib/services.js';
import { summarize } from '../../lib/stats.js';

/**
 * What other clients suffer while a service is under pressure (bench/studies/flood/flood.ts): a latency prober (open
 * loop: a request every `everyMs` whether or not the last one answered, so that a stalled service shows as many slow
 * probes and not as one), closed-loop clients that flood it and can be abandoned, and a sampler of a process's CPU and
 * RSS. Every request has a deadline; every loop stops when told or at its deadline.
 */

export interface Outcome {
  /** The HTTP status; absent when no answer came (see `failure`). */
  status?: number;
  ms: number;
  /** timeout (our deadline), aborted (by us), reset (ECONNRESET, socket hang up), refused, or the error's code. */
  failure?: string;
  retryAfter?: string;
}

/** One request with an absolute deadline (not an idle timeout) and an optional abort signal; never rejects. */
export function timedRequest(
  target: Target,
  spec: RequestSpec,
  options: { timeoutMs: number; agent: http.Agent | false; signal?: AbortSignal },
): Promise<Outcome> {
  const started = performance.now();
  return new Promise<Outcome>((resolve) => {
    let done = false;
    const finish = (outcome: Omit<Outcome, 'ms'>): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      resolve({ ...outcome, ms: performance.now() - started });
    };
    const headers: Record<string, string | number> = { Accept: 'application/json', ...spec.headers };
    if (options.agent === false) headers.Connection = 'close';
    if (spec.body !== undefined) {
      headers['Content-Type'] ??= 'application/json';
      headers['Content-Length'] = Buffer.byteLength(spec.body);
    }
    const request = http.request(
      { host: target.host, port: target.port, method: spec.method, path: spec.path, headers, agent: options.agent },
      (response) => {
        response.on('data', () => undefined);
        response.on('end', () => {
          const retryAfter = response.headers['retry-after'];
          finish({ status: response.statusCode ?? 0, ...(retryAfter === undefined ? {} : { retryAfter }) });
        });
        response.on('error', (error) => finish({ failure: kind(error) }));
      },
    );
    const timer = setTimeout(() => {
      finish({ failure: 'timeout' });
      request.destroy();
    }, options.timeoutMs);
    const onAbort = (): void => {
      finish({ failure: 'aborted' });
      request.destroy();
    };
    if (options.signal?.aborted) onAbort();
    options.signal?.addEventListener('abort', onAbort);
    request.on('error', (error) => finish({ failure: kind(error) }));
    request.end(spec.body);
  });
}

function kind(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ECONNRESET' || error.message === 'socket hang up') return 'reset';
  if (code === 'ECONNREFUSED') return 'refused';
  return code ?? error.message.slice(0, 60);
}

// ---- the prober --------------------------------------------------------------------------------------------------

export type StreamName = 'healthz' | 'metric' | 'keepAlive';

interface ProbeRecord {
  stream: StreamName;
  sentAt: number;
  outcome?: Outcome;
}

export interface StreamStats {
  sent: number;
  failed: number;
  failures: Record<string, number>;
  /** Over every probe sent in the window, a failed one counted as infinitely slow. */
  p50: number;
  p99: number;
  max: number;
}

/**
 * Sends `GET /healthz` every `healthzEveryMs` and `POST /api/v1/metrics` (body `metricBody(i)`, a new metric each
 * time) every `metricEveryMs`, each on a new connection as kubelet probes and pytest-monitor do; and a `GET /healthz`
 * on one kept-alive connection, `keepAliveIdleMs` after the previous answer (closed loop: it sees resets of idle
 * connections). A probe fails when it gets no expected status within `timeoutMs`.
 */
export class Prober {
  private readonly records: ProbeRecord[] = [];
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly pending = new Set<Promise<void>>();
  private readonly keepAliveAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  private running = false;
  private metricIndex = 0;

  constructor(
    private readonly target: Target,
    private readonly options: {
      metricBody(i: number): string;
      healthzEveryMs: number;
      metricEveryMs: number;
      keepAliveIdleMs: number;
      timeoutMs: number;
    },
  ) {}

  start(): this {
    this.running = true;
    const healthz: RequestSpec = { method: 'GET', path: '/healthz' };
    this.timers.push(setInterval(() => void this.probe('healthz', healthz, false), this.options.healthzEveryMs));
    this.timers.push(
      setInterval(() => {
        const body = this.options.metricBody(this.metricIndex++);
        void this.probe('metric', { method: 'POST', path: '/api/v1/metrics/', body }, false);
      }, this.options.metricEveryMs),
    );
    const keepAlive = async (): Promise<void> => {
      while (this.running) {
        await this.probe('keepAlive', healthz, this.keepAliveAgent);
        await new Promise((r) => setTimeout(r, this.options.keepAliveIdleMs));
      }
    };
    void this.track(keepAlive());
    return this;
  }

  /** Stops sending and waits for the probes still out (each ends by its deadline). */
  async stop(): Promise<void> {
    this.running = false;
    for (const timer of this.timers) clearInterval(timer);
    while (this.pending.size > 0) await Promise.all([...this.pending]);
    this.keepAliveAgent.destroy();
  }

  /** The probes of `stream` sent in [from, to) (performance.now() times). */
  stats(stream: StreamName, from = 0, to = Infinity): StreamStats {
    const failures: Record<string, number> = {};
    const latencies: number[] = [];
    for (const r of this.records) {
      if (r.stream !== stream || r.sentAt < from || r.sentAt >= to || r.outcome === undefined) continue;
      const expected = stream === 'metric' ? 201 : 200;
      const failure = r.outcome.failure ?? (r.outcome.status === expected ? undefined : String(r.outcome.status));
      if (failure !== undefined) failures[failure] = (failures[failure] ?? 0) + 1;
      latencies.push(failure === undefined ? r.outcome.ms : Infinity);
    }
    const summary = summarize(latencies);
    const failed = Object.values(failures).reduce((a, b) => a + b, 0);
    return { sent: latencies.length, failed, failures, p50: summary.p50, p99: summary.p99, max: summary.max };
  }

  private probe(stream: StreamName, spec: RequestSpec, agent: http.Agent | false): Promise<void> {
    if (!this.running) return Promise.resolve();
    const record: ProbeRecord = { stream, sentAt: performance.now() };
    this.records.push(record);
    return this.track(
      timedRequest(this.target, spec, { timeoutMs: this.options.timeoutMs, agent }).then((outcome) => {
        record.outcome = outcome;
      }),
    );
  }

  private track(work: Promise<void>): Promise<void> {
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work));
    return work;
  }
}

export interface PhaseFigures {
  /** The window's length. */
  seconds: number;
  probes: Record<StreamName, StreamStats>;
  /** The service's CPU time over the window's wall time; the node's, when its pid is known. */
  cores: number;
  nodeCores?: number;
  /** The service's highest RSS (MB) from the window's start to the end of `body`. */
  peakRssMB: number;
}

/**
 * Runs `body` while a Prober probes `service` and its CPU and RSS (and a node's) are sampled; the figures are over the
 * window [from, to) that `body` returns (a probe belongs to the window it was sent in), merged into what it returns.
 */
export async function probed<T extends { from: number; to: number }>(
  service: { target: Target; pid: number },
  options: ConstructorParameters<typeof Prober>[1],
  nodePid: number | undefined,
  body: (service: ProcessSampler, node?: ProcessSampler) => Promise<T>,
): Promise<T & PhaseFigures> {
  const [sampler, node] = [new ProcessSampler(service.pid), nodePid ? new ProcessSampler(nodePid) : undefined];
  const prober = new Prober(service.target, options).start();
  try {
    const result = await body(sampler, node);
    await prober.stop();
    const { from, to } = result;
    const seconds = (to - from) / 1000;
    const probes = {
      healthz: prober.stats('healthz', from, to),
      metric: prober.stats('metric', from, to),
      keepAlive: prober.stats('keepAlive', from, to),
    };
    const nodeCores = node ? { nodeCores: node.cpuBetween(from, to) / seconds } : {};
    const cores = sampler.cpuBetween(from, to) / seconds;
    return { ...result, seconds, probes, cores, ...nodeCores, peakRssMB: sampler.peakRss(from) };
  } finally {
    await prober.stop();
    sampler.stop();
    node?.stop();
  }
}

// ---- the flood ---------------------------------------------------------------------------------------------------

export interface FloodStats {
  name: string;
  sent: number;
  /** Count per status, or per failure (timeout, reset, aborted: still running when the flood was called off). */
  outcomes: Record<string, number>;
  /** Over the requests that got an answer (any status). */
  p50: number;
  p99: number;
  max: number;
  retryAfter: number;
}

/**
 * `clients` closed-loop clients, client c starting at route c and going round the list: the next request as soon as
 * the last answered (100 ms later after a 503 or a failure: pressure, not a hot loop). On kept-alive connections (a
 * dashboard, a script with a session), or a new connection per request with `fresh`.
 */
export class Flood {
  private readonly agent: http.Agent | false;
  private readonly controller = new AbortController();
  private readonly outcomes = new Map<string, Outcome[]>();
  private readonly sentCount = new Map<string, number>();
  private readonly clients: Array<Promise<void>> = [];
  private running = true;
  private inFlightNow = 0;

  constructor(
    private readonly target: Target,
    private readonly routes: ReadonlyArray<{ name: string; path: string }>,
    options: { clients: number; timeoutMs: number; fresh?: boolean },
  ) {
    this.agent = options.fresh ? false : new http.Agent({ keepAlive: true, maxSockets: options.clients });
    setMaxListeners(0, this.controller.signal);
    for (let c = 0; c < options.clients; c += 1) this.clients.push(this.client(c, options.timeoutMs));
  }

  get inFlight(): number {
    return this.inFlightNow;
  }

  /** No new request; those out go on. */
  stopSending(): void {
    this.running = false;
  }

  /** Abandons every request still out (the client closes its connection) and waits for the clients to end. */
  async abandon(): Promise<void> {
    this.running = false;
    this.controller.abort();
    await Promise.all(this.clients);
    if (this.agent) this.agent.destroy();
  }

  stats(): FloodStats[] {
    return this.routes.map(({ name }) => {
      const all = this.outcomes.get(name) ?? [];
      const counts: Record<string, number> = {};
      for (const o of all) counts[o.failure ?? String(o.status)] = (counts[o.failure ?? String(o.status)] ?? 0) + 1;
      const summary = summarize(all.filter((o) => o.status !== undefined).map((o) => o.ms));
      const inFlight = (this.sentCount.get(name) ?? 0) - all.length;
      if (inFlight > 0) counts['in flight'] = inFlight;
      return {
        name,
        sent: this.sentCount.get(name) ?? 0,
        outcomes: counts,
        p50: summary.p50,
        p99: summary.p99,
        max: summary.max,
        retryAfter: all.filter((o) => o.retryAfter !== undefined).length,
      };
    });
  }

  private async client(c: number, timeoutMs: number): Promise<void> {
    for (let i = c; this.running; i += 1) {
      const route = this.routes[i % this.routes.length] as { name: string; path: string };
      this.sentCount.set(route.name, (this.sentCount.get(route.name) ?? 0) + 1);
      this.inFlightNow += 1;
      const outcome = await timedRequest(
        this.target,
        { method: 'GET', path: route.path },
        { timeoutMs, agent: this.agent, signal: this.controller.signal },
      );
      this.inFlightNow -= 1;
      const list = this.outcomes.get(route.name) ?? [];
      list.push(outcome);
      this.outcomes.set(route.name, list);
      if (outcome.status === 503 || outcome.failure !== undefined) await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** Sends `count` requests at once and abandons each (closes its connection) after `afterMs`. */
export async function abandoned(target: Target, path: string, count: number, afterMs: number): Promise<Outcome[]> {
  const agent = new http.Agent({ keepAlive: false });
  const outcomes = await Promise.all(
    Array.from({ length: count }, () => timedRequest(target, { method: 'GET', path }, { timeoutMs: afterMs, agent })),
  );
  agent.destroy();
  return outcomes;
}

// ---- a process's CPU and memory ----------------------------------------------------------------------------------

interface Sample {
  at: number;
  cpu: number;
  rssMB: number;
}

/** Samples a process's CPU time (/proc/<pid>/stat) and VmRSS (/proc/<pid>/status) every `everyMs` until stopped. */
export class ProcessSampler {
  private readonly samples: Sample[] = [];
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pid: number,
    everyMs = 250,
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), everyMs);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The highest RSS (MB) sampled in [from, to). */
  peakRss(from = 0, to = Infinity): number {
    return Math.max(...this.samples.filter((s) => s.at >= from && s.at < to).map((s) => s.rssMB));
  }

  /** CPU seconds used between the samples nearest `from` and `to`. */
  cpuBetween(from: number, to = Infinity): number {
    const at = (t: number): number => {
      let best = this.samples[0] as Sample;
      for (const s of this.samples) if (Math.abs(s.at - t) < Math.abs(best.at - t)) best = s;
      return best.cpu;
    };
    return at(to === Infinity ? performance.now() : to) - at(from);
  }

  /**
   * Waits until the process used less than `idleCores` of CPU over `windowMs`, for a window starting at or after
   * `from`; returns when that window began, or null when no such window ended before `deadline`.
   */
  async idleSince(
    from: number,
    options: { idleCores: number; windowMs: number; deadline: number },
  ): Promise<number | null> {
    for (;;) {
      const recent = this.samples.filter((s) => s.at >= from);
      for (const start of recent) {
        const end = recent.find((s) => s.at - start.at >= options.windowMs);
        if (end === undefined) break;
        if ((end.cpu - start.cpu) / ((end.at - start.at) / 1000) < options.idleCores) return start.at;
      }
      if (performance.now() >= options.deadline) return null;
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  private sample(): void {
    this.samples.push({ at: performance.now(), cpu: cpuSeconds(this.pid), rssMB: rssMB(this.pid) });
  }
}

function rssMB(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? (Number(match[1]) * 1024) / 1e6 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}
