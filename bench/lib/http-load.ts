import http from 'node:http';
import { summarize, type LatencySummary } from './stats.js';

/**
 * Closed-loop HTTP load: N clients, each sending one request at a time and the next as soon as the answer is in,
 * as pytest-monitor does. `fresh` connections mean a new TCP connection per request (`agent: false` and
 * `Connection: close`, what `requests.post` without a session amounts to); otherwise a keep-alive agent.
 * Every loop is bounded by a deadline and a request budget.
 */

export interface RequestSpec {
  method: 'GET' | 'POST';
  path: string;
  /** A Buffer for a body sent as is (e.g. gzipped). */
  body?: string | Buffer;
  headers?: Record<string, string>;
}

export interface Answer {
  status: number;
  body: string;
  ms: number;
}

export interface Target {
  host: string;
  port: number;
}

const keepAliveAgent = new http.Agent({ keepAlive: true, maxSockets: 256 });

/** The headers python-requests sends with `requests.post(url, json=...)`. */
const CLIENT_HEADERS = {
  'User-Agent': 'python-requests/2.32.3',
  'Accept-Encoding': 'gzip, deflate',
  Accept: '*/*',
};

export function send(
  target: Target,
  spec: RequestSpec,
  options: { fresh: boolean; timeoutMs?: number },
): Promise<Answer> {
  const started = process.hrtime.bigint();
  return new Promise<Answer>((resolve, reject) => {
    const headers: Record<string, string | number> = { ...CLIENT_HEADERS, ...spec.headers };
    if (options.fresh) headers.Connection = 'close';
    if (spec.body !== undefined) {
      headers['Content-Type'] ??= 'application/json';
      headers['Content-Length'] = Buffer.byteLength(spec.body);
    }
    const request = http.request(
      {
        host: target.host,
        port: target.port,
        method: spec.method,
        path: spec.path,
        headers,
        agent: options.fresh ? false : keepAliveAgent,
        timeout: options.timeoutMs ?? 60_000,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            ms: Number(process.hrtime.bigint() - started) / 1e6,
          }),
        );
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error(`timed out after ${options.timeoutMs ?? 60_000} ms`)));
    request.on('error', reject);
    request.end(spec.body);
  });
}

export interface LoadOptions {
  target: Target;
  clients: number;
  /** Requests before this many ms are sent but not measured. */
  warmupMs: number;
  /** Measured time after the warm-up. */
  durationMs: number;
  /** Upper bound on measured requests (all clients together). */
  maxRequests: number;
  fresh: boolean;
  timeoutMs?: number;
  /** The next request of client `client` (its `sequence`-th). */
  next(client: number, sequence: number): RequestSpec;
  /** Statuses that count as success. */
  ok(status: number): boolean;
  /** Looks at each measured successful answer's body (e.g. per-item errors of a _bulk). */
  inspect?(body: string): void;
  /** Called once when the measured window opens (after the warm-up). */
  onMeasureStart?(): void;
}

export interface LoadResult extends LatencySummary {
  clients: number;
  seconds: number;
  rps: number;
  errors: number;
  statuses: Record<string, number>;
  firstError?: string;
  /** CPU seconds this load generator used while measuring (it shares the machine with the server). */
  generatorCpuSeconds: number;
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let errors = 0;
  let firstError: string | undefined;
  const begin = performance.now();
  const measureFrom = begin + options.warmupMs;
  const deadline = measureFrom + options.durationMs;
  let measuredStart = Number.NaN;
  let cpuAtStart: NodeJS.CpuUsage | undefined;
  let lastEnd = measureFrom;

  const client = async (id: number): Promise<void> => {
    for (let sequence = 0; ; sequence += 1) {
      const now = performance.now();
      if (now >= deadline || latencies.length + errors >= options.maxRequests) return;
      const measuring = now >= measureFrom;
      if (measuring && cpuAtStart === undefined) {
        cpuAtStart = process.cpuUsage();
        measuredStart = now;
        options.onMeasureStart?.();
      }
      const spec = options.next(id, sequence);
      try {
        const answer = await send(options.target, spec, { fresh: options.fresh, timeoutMs: options.timeoutMs });
        if (!measuring) continue;
        statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
        if (options.ok(answer.status)) {
          latencies.push(answer.ms);
          options.inspect?.(answer.body);
        } else {
          errors += 1;
          firstError ??= `${answer.status} ${spec.method} ${spec.path}: ${answer.body.slice(0, 300)}`;
        }
      } catch (error) {
        if (!measuring) {
          // A failure while warming up is as telling as one later: count it, slow down a little.
          await new Promise((resolve) => setTimeout(resolve, 10));
          continue;
        }
        errors += 1;
        statuses.network = (statuses.network ?? 0) + 1;
        firstError ??= `${spec.method} ${spec.path}: ${(error as Error).message}`;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      lastEnd = performance.now(); // reached only while measuring: warm-up requests `continue` above
    }
  };
  await Promise.all(Array.from({ length: options.clients }, (_, i) => client(i)));
  const cpu = cpuAtStart ? process.cpuUsage(cpuAtStart) : { user: 0, system: 0 };
  const seconds = Number.isNaN(measuredStart) ? 0 : Math.max(1e-9, lastEnd - measuredStart) / 1000;
  return {
    clients: options.clients,
    seconds,
    rps: seconds > 0 ? latencies.length / seconds : 0,
    errors,
    statuses,
    ...(firstError ? { firstError } : {}),
    generatorCpuSeconds: (cpu.user + cpu.system) / 1e6,
    ...summarize(latencies),
  };
}
