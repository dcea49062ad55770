import client from 'prom-client';
import type { ChangeCounts } from '../domain/changes/steps.js';
import type { CostTotals } from '../domain/cost/totals.js';
import { REFUSAL_REASONS } from '../store/errors.js';
import type { Store } from '../store/store.js';

/**
 * What the latest-build cost gauges look at: which pipelines, how long one pipeline's answer may take, and the use
 * case that answers (application/cost/latest-build.ts, given by server.ts: observability runs no use case itself).
 */
export interface CostWatch {
  /** The pipelines (MONITOR_COST_PIPELINES); none: the gauges have no series. */
  pipelines: readonly string[];
  /** A pipeline whose cost has not come within this time is left out of the scrape. */
  timeoutMs: number;
  /** The totals of the pipeline's most recent build; rejects for a pipeline with no build or a store failure. */
  latestBuildTotals(pipeline: string): Promise<CostTotals>;
}

/**
 * What the change gauges (`monitor_changes_last_day`, `monitor_changes_untriaged`) look at: the pipelines (those of
 * MONITOR_COST_PIPELINES), how long one pipeline's answer may take, and the use case that counts
 * (application/changes/change-counts.ts, given by server.ts).
 */
export interface ChangeWatch {
  pipelines: readonly string[];
  /** A pipeline whose count has not come within this time is left out of the scrape (its work goes on, and is kept). */
  timeoutMs: number;
  /**
   * The pipeline's counts from one walk of its changes (`since`: ISO date and time, compared with `run_date` as
   * instants); rejects for a pipeline with no build or a store failure.
   */
  changeCounts(pipeline: string, since: string): Promise<ChangeCounts>;
  /** How long a pipeline's counts are kept (default CHANGES_CACHE_MS). */
  cacheMs?: number;
}

/**
 * How long `monitor_changes_last_day` keeps a pipeline's count before computing it again: a pipeline's changes take
 * seconds to find at 10 M metrics (100 builds of every test), and change points move only when a build comes, so
 * scrapes every 15–60 s reuse one answer for 5 minutes (an alert on the gauge is that much later at most). The counts
 * are computed one pipeline at a time, so that the gauge never runs more than one such analysis beside the routes'.
 */
const CHANGES_CACHE_MS = 5 * 60_000;

/** The window of `monitor_changes_last_day`. */
const DAY_MS = 24 * 60 * 60_000;

/** `work`, or a rejection once `ms` have passed (the work itself goes on; its outcome is ignored). */
function within<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/**
 * `compute` shared by every call while one is running: the gauges of one scrape, which prom-client collects
 * concurrently, get one computation; the next scrape computes afresh once this one has settled.
 */
function perScrape<T>(compute: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  return () => {
    if (running) return running;
    const started = compute();
    running = started;
    const forget = (): void => {
      if (running === started) running = undefined;
    };
    void started.then(forget, forget);
    return started;
  };
}

const LATEST_BUILD_HELP =
  "the total over the tests of the pipeline's most recent build; the build is no label, so there is one series per " +
  'pipeline (those of MONITOR_COST_PIPELINES)';

/**
 * The Prometheus registry of one service instance: prom-client's default process metrics (unprefixed), the HTTP
 * histogram, and the application's `monitor_` metrics. One registry per instance keeps tests independent.
 */
interface LatestBuildGauge {
  name: string;
  /** What it measures, the start of its help. */
  what: string;
  total: keyof CostTotals;
}

/** The gauges of each watched pipeline's latest build: one total of its cost each (domain/cost/totals.ts). */
const LATEST_BUILD_GAUGES: readonly LatestBuildGauge[] = [
  { name: 'monitor_pipeline_latest_build_tests', what: 'Tests measured', total: 'tests' },
  { name: 'monitor_pipeline_latest_build_wall_seconds', what: 'Wall time in seconds, summed', total: 'wall_time' },
  {
    name: 'monitor_pipeline_latest_build_cpu_seconds',
    what: 'CPU time (user + kernel) in seconds, summed',
    total: 'cpu_time',
  },
  {
    name: 'monitor_pipeline_latest_build_memory_peak_megabytes',
    what: 'The highest memory one test used, in MB',
    total: 'memory_peak',
  },
];

export class ServiceMetrics {
  readonly registry = new client.Registry();
  /** The store the scrape-time gauges look at (set by watchStore). */
  private store: Store | undefined;
  /** The pipelines whose latest build's cost is exported (set by watchStore). */
  private cost: CostWatch | undefined;
  /** The pipelines whose recent changes are counted (set by watchStore). */
  private changes: ChangeWatch | undefined;
  /** Each watched pipeline's counts: in progress, or done at `at` (a failure is not kept). */
  private changeCounts = new Map<string, { at: number; count: Promise<ChangeCounts> }>();
  /** The scrape in progress's change counts, shared by the two change gauges' collect (one computation). */
  private readonly changeScrapeCounts = perScrape(() => this.pipelineChangeCounts());
  /** The last count asked for, settled either way: the next one starts when it has ended (one analysis at a time). */
  private changeQueue: Promise<unknown> = Promise.resolve();
  /** The scrape in progress's costs, shared by the four gauges' collect (each calls it; one computation). */
  private readonly latestBuildCosts = perScrape(() => this.latestBuildCostsNow());

  readonly httpDuration = new client.Histogram({
    name: 'http_request_duration_seconds',
    help: 'Duration of HTTP requests, by method, route template and status code.',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  readonly recordsIngested = new client.Counter({
    name: 'monitor_records_ingested_total',
    help: 'Create requests by record kind and outcome (created, replayed, rejected, conflict, unknown_reference, unavailable, error).',
    labelNames: ['kind', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly storeDuration = new client.Histogram({
    name: 'monitor_store_request_duration_seconds',
    help: 'Duration of store operations, by operation (the Store method).',
    labelNames: ['operation'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
    registers: [this.registry],
  });

  readonly bulkBatchSize = new client.Histogram({
    name: 'monitor_bulk_batch_size',
    help: 'Records per group commit: documents per _bulk request (Elasticsearch), writes per transaction (SQLite).',
    buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000],
    registers: [this.registry],
  });

  readonly writeQueueDepth = new client.Gauge({
    name: 'monitor_write_queue_depth',
    help: 'Records waiting for their group commit (their _bulk request or their SQLite transaction).',
    registers: [this.registry],
    collect: () => {
      const depth = (this.store as { writeQueueDepth?: unknown } | undefined)?.writeQueueDepth;
      this.writeQueueDepth.set(typeof depth === 'number' ? depth : 0);
    },
  });

  readonly storeUp = new client.Gauge({
    name: 'monitor_store_up',
    help: '1 when the store answers its health check (made at each scrape and by /readyz), 0 otherwise.',
    labelNames: ['store'] as const,
    registers: [this.registry],
    collect: async () => {
      if (!this.store) return;
      const store = this.store;
      this.storeUp.set(
        { store: store.name },
        await store.ping().then(
          () => 1,
          () => 0,
        ),
      );
    },
  });

  readonly summariesPending = new client.Gauge({
    name: 'monitor_summaries_pending_sessions',
    help:
      'Sessions pending a run summary after the last summary sweep (every 30 s): written by small writes, or cut off ' +
      'by a crash. Analyses summarize them before reading them; a count that stays high means the sweep cannot write.',
    registers: [this.registry],
  });

  readonly storeRefusals = this.reasonCounter(
    'monitor_store_refusals_total',
    'Writes the store refused until an operator acts, by reason: shard_limit (Elasticsearch cannot make a month ' +
      'index within cluster.max_shards_per_node), disk_watermark (indices read-only past the flood-stage watermark), ' +
      'index_create_block, write_block. Each is answered 503 and fails /readyz for a minute.',
  );

  readonly authFailures = this.reasonCounter(
    'monitor_auth_failures_total',
    'Requests refused by access control, by reason (missing, malformed, unknown token; forbidden: a read token on a write).',
  );

  readonly analysesRunning = new client.Gauge({
    name: 'monitor_analyses_running',
    help: 'Analysis reads (history, regressions, cost, creep, noise, classes) being worked on (at most ANALYSIS_CONCURRENCY).',
    registers: [this.registry],
  });

  readonly analysesWaiting = new client.Gauge({
    name: 'monitor_analyses_waiting',
    help: 'Analysis reads waiting for their turn (each at most ANALYSIS_QUEUE_TIMEOUT_MS).',
    registers: [this.registry],
  });

  readonly analysesRefused = this.reasonCounter(
    'monitor_analyses_refused_total',
    'Analysis reads answered 503 or dropped before their end, by reason: queue (no turn within ' +
      'ANALYSIS_QUEUE_TIMEOUT_MS), budget (stopped at ANALYSIS_TIMEOUT_MS), client (the client went away).',
  );

  /** Counted by the process-wide handler that server.ts installs; a bug wherever it comes from. */
  readonly unhandledRejections = new client.Counter({
    name: 'monitor_unhandled_rejections_total',
    help: 'Promise rejections no code handled: each is a bug (logged with its stack); the service keeps running.',
    registers: [this.registry],
  });

  /** One gauge a total of each watched pipeline's latest build (LATEST_BUILD_GAUGES). */
  readonly latestBuild = LATEST_BUILD_GAUGES.map((gauge) => this.latestBuildGauge(gauge));

  readonly changesLastDay = this.changeGauge(
    'monitor_changes_last_day',
    "Builds of the pipeline with changes (a test's time or memory stepped to a new level and stayed; GET " +
      '/pipelines/{p}/changes, its default period and resources) that had a step first reported by a build started in ' +
      'the last 24 h (run_date read as UTC), either direction',
    'reportedSince',
  );

  readonly changesUntriaged = this.changeGauge(
    'monitor_changes_untriaged',
    "Steps of the pipeline's changes (GET /pipelines/{p}/changes, its default period and resources) that nobody has " +
      'triaged: state new (not acknowledged, accepted or invalid, and not fixed by a later change)',
    'untriaged',
  );

  /** A gauge of one of the change counts of each watched pipeline, computed at scrape (reset first). */
  private changeGauge(name: string, what: string, count: keyof ChangeCounts): client.Gauge<'pipeline'> {
    const gauge: client.Gauge<'pipeline'> = new client.Gauge({
      name,
      help: `${what}; one series per pipeline of MONITOR_COST_PIPELINES, each count kept ${CHANGES_CACHE_MS / 60_000} minutes.`,
      labelNames: ['pipeline'] as const,
      registers: [this.registry],
      collect: async () => {
        const counts = await this.changeScrapeCounts();
        gauge.reset();
        for (const [pipeline, counted] of counts) gauge.set({ pipeline }, counted[count]);
      },
    });
    return gauge;
  }

  /**
   * Each watched pipeline's counts, those that came in time, the pipelines in parallel; a count younger than the cache
   * time (or still being computed) is reused, so that a slow pipeline's work, given up by one scrape, serves the next.
   */
  private async pipelineChangeCounts(): Promise<Map<string, ChangeCounts>> {
    const watch = this.changes;
    const counts = new Map<string, ChangeCounts>();
    if (!watch) return counts;
    const now = Date.now();
    const cacheMs = watch.cacheMs ?? CHANGES_CACHE_MS;
    const since = new Date(now - DAY_MS).toISOString().slice(0, 19);
    const outcomes = await Promise.allSettled(
      watch.pipelines.map((pipeline) => {
        let entry = this.changeCounts.get(pipeline);
        if (!entry || now - entry.at >= cacheMs) {
          const count = this.changeQueue.then(() => watch.changeCounts(pipeline, since));
          this.changeQueue = count.catch(() => undefined);
          const started = { at: now, count };
          this.changeCounts.set(pipeline, started);
          entry = started;
          // Kept from when it is done; a failure is forgotten, so the next scrape asks again.
          void started.count.then(
            () => {
              started.at = Date.now();
            },
            () => {
              if (this.changeCounts.get(pipeline) === started) this.changeCounts.delete(pipeline);
            },
          );
        }
        return within(entry.count, watch.timeoutMs);
      }),
    );
    outcomes.forEach((outcome, i) => {
      if (outcome.status === 'fulfilled') counts.set(watch.pipelines[i] as string, outcome.value);
    });
    return counts;
  }

  /** A counter by `reason`, whose values its help names. */
  private reasonCounter(name: string, help: string): client.Counter<'reason'> {
    return new client.Counter({ name, help, labelNames: ['reason'] as const, registers: [this.registry] });
  }

  /**
   * A gauge of one total of each watched pipeline's latest build, computed at scrape. Reset first, so a pipeline no
   * longer watched, or without an answer this time (no build, store failure, too slow), has no sample.
   */
  private latestBuildGauge({ name, what, total }: LatestBuildGauge): client.Gauge<'pipeline'> {
    const gauge: client.Gauge<'pipeline'> = new client.Gauge({
      name,
      help: `${what}: ${LATEST_BUILD_HELP}.`,
      labelNames: ['pipeline'] as const,
      registers: [this.registry],
      collect: async () => {
        const costs = await this.latestBuildCosts();
        gauge.reset();
        for (const [pipeline, totals] of costs) gauge.set({ pipeline }, totals[total]);
      },
    });
    return gauge;
  }

  /**
   * Each watched pipeline's latest build totals, those that came in time; the pipelines in parallel.
   */
  private latestBuildCostsNow(): Promise<Map<string, CostTotals>> {
    const { cost } = this;
    if (!cost || cost.pipelines.length === 0) return Promise.resolve(new Map<string, CostTotals>());
    return Promise.allSettled(
      cost.pipelines.map((pipeline) => within(cost.latestBuildTotals(pipeline), cost.timeoutMs)),
    ).then((outcomes) => {
      const costs = new Map<string, CostTotals>();
      outcomes.forEach((outcome, i) => {
        if (outcome.status === 'fulfilled') costs.set(cost.pipelines[i] as string, outcome.value);
      });
      return costs;
    });
  }

  /**
   * Scrape-time gauges read `store`; `cost` names the pipelines whose latest build's cost is exported, `changes` those
   * whose recent changes are counted (a new watch forgets the counts kept).
   */
  watchStore(store: Store, cost?: CostWatch, changes?: ChangeWatch): void {
    this.store = store;
    if (cost) this.cost = { ...cost, pipelines: [...cost.pipelines] };
    if (changes) {
      this.changes = { ...changes, pipelines: [...changes.pipelines] };
      this.changeCounts.clear();
    }
    store.observeWriteBatches?.((size) => this.bulkBatchSize.observe(size));
    if (store.observeRefusals) {
      // Every reason has a series from the start, so that an alert on its increase sees the first refusal.
      for (const reason of REFUSAL_REASONS) this.storeRefusals.inc({ reason }, 0);
      store.observeRefusals((reason) => this.storeRefusals.inc({ reason }));
    }
  }

  constructor() {
    client.collectDefaultMetrics({ register: this.registry });
  }
}
