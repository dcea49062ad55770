/**
 * What a hostile request costs the service (issue: nothing a client sends may stall, crash or slip past it). For each
 * store of BENCH_HOSTILE_STORES (default `sqlite`; add `elasticsearch` with ELASTICSEARCH_URL), the compiled service is
 * started on loopback and sent each attack: the time to its answer, the worst wait of a `GET /healthz` sent every
 * 10 ms meanwhile (what every other client suffers), and the service's resident memory before, at its peak, and 5 s
 * after. Writes bench/results/<date>-hostile.md (or prints it with BENCH_HOSTILE_PRINT=1).
 *
 *   make build && node --import tsx bench/studies/hostile-requests/hostile.ts
 *   BENCH_HOSTILE_STORES=sqlite,elasticsearch ELASTICSEARCH_URL=http://127.0.0.1:9200 \
 *     node --import tsx bench/studies/hostile-requests/hostile.ts
 */
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { aContext, aMetric, aSession } from '../../../test/support/builders.js';
import { deletePrefix } from '../../lib/es.js';
import { send, type RequestSpec, type Target } from '../../lib/http-load.js';
import { sleep } from '../../lib/log.js';
import { loadText } from '../../lib/report-text.js';
import { REPO, sampleRss, startOurService, stopAll, type Service } from '../../lib/services.js';
import { inScratchDir, storeEnv, type StoreName } from '../../lib/stores.js';

const STORES = (process.env.BENCH_HOSTILE_STORES ?? 'sqlite').split(',').map((s) => s.trim()) as StoreName[];
const PORT = Number(process.env.BENCH_PORT ?? 18180) + 40;
/** The lengths of the names the pattern attack runs against (a backtracking matcher needs minutes for 2,048). */
const NAME_LENGTHS = (process.env.BENCH_HOSTILE_NAME_LENGTHS ?? '256,512,1024,2048').split(',').map(Number);

interface Attack {
  name: string;
  /** Requests sent at once. */
  requests: RequestSpec[];
}

const ndjson = { 'Content-Type': 'application/x-ndjson' };
const gzipped = { ...ndjson, 'Content-Encoding': 'gzip' };
const newlines = (mib: number) => gzipSync(Buffer.alloc(mib * 2 ** 20, '\n'));
const deep = `${'{"a":'.repeat(4500)}1${'}'.repeat(4500)}`;
const times = <T>(n: number, value: T): T[] => Array.from({ length: n }, () => value);

const ATTACKS: Attack[] = [
  {
    name: 'bulk: 16 MiB of newlines, gzipped (16 KB sent)',
    requests: [{ method: 'POST', path: '/api/v1/bulk', body: newlines(16), headers: gzipped }],
  },
  {
    name: 'bulk: four of them at once',
    requests: times(4, { method: 'POST', path: '/api/v1/bulk', body: newlines(16), headers: gzipped }),
  },
  {
    name: 'bulk: 64 MiB of newlines, gzipped (over MAX_BULK_BYTES)',
    requests: [{ method: 'POST', path: '/api/v1/bulk', body: newlines(64), headers: gzipped }],
  },
  {
    name: 'bulk: 100,000 record lines, gzipped (over MAX_BULK_LINES)',
    requests: [
      {
        method: 'POST',
        path: '/api/v1/bulk',
        body: gzipSync(Buffer.from(`${JSON.stringify({ type: 'metric', ...aMetric() })}\n`.repeat(100_000))),
        headers: gzipped,
      },
    ],
  },
  {
    name: 'session description nested 4,500 levels',
    requests: [
      {
        method: 'POST',
        path: '/api/v1/sessions/',
        body: `{"session_h":"deep","run_date":"2026-11-22T05:10:45","description":${deep}}`,
      },
    ],
  },
  {
    name: `like \`aaa%aaa%aaa%b\` over names of ${NAME_LENGTHS.join(', ')} a's (count, listing, names)`,
    requests: ['/metrics/count', '/metrics', ''].map((tail) => ({
      method: 'GET' as const,
      path: `/api/v1/variants/like/${encodeURIComponent('aaa%aaa%aaa%b')}${tail}`,
    })),
  },
];

/** The names the pattern attack runs against: they share its trigram, so Elasticsearch's names index hands them over. */
async function seed(target: Target): Promise<void> {
  const post = (path: string, body: unknown) =>
    send(target, { method: 'POST', path: `/api/v1${path}`, body: JSON.stringify(body) }, { fresh: false });
  await post('/contexts/', aContext());
  await post('/sessions/', { ...aSession(), description: {} });
  for (const [k, length] of NAME_LENGTHS.entries()) {
    await post(
      '/metrics/',
      aMetric({ item_variant: `${'a'.repeat(length - 1)}${k}`, item_start_time: `2026-11-22T05:1${k}` }),
    );
  }
}

interface Row {
  store: string;
  attack: string;
  statuses: string;
  answerMs: number;
  healthzWorstMs: number;
  rssBefore: number;
  rssPeak: number;
  rssAfter: number;
}

const rssOf = (pid: number): number => sampleRss(pid).stop();

async function measure(service: Service, store: string, attack: Attack): Promise<Row> {
  const rssBefore = rssOf(service.pid);
  const peak = sampleRss(service.pid, { everyMs: 20 });
  let healthzWorstMs = 0;
  const probe = { running: true };
  const probing = (async () => {
    while (probe.running) {
      const sent = performance.now();
      // A probe the service fails to answer counts as having waited until it failed.
      const ms = await send(service.target, { method: 'GET', path: '/healthz' }, { fresh: false }).then(
        (answer) => answer.ms,
        () => performance.now() - sent,
      );
      healthzWorstMs = Math.max(healthzWorstMs, ms);
      await sleep(10);
    }
  })();
  const started = performance.now();
  const answers = await Promise.all(
    attack.requests.map((spec) =>
      send(service.target, spec, { fresh: true, timeoutMs: 300_000 }).catch((error: unknown) => ({
        status: (error as Error).message,
      })),
    ),
  );
  const answerMs = performance.now() - started;
  probe.running = false;
  await probing;
  const rssPeak = peak.stop();
  await sleep(5000);
  return {
    store,
    attack: attack.name,
    statuses: [...new Set(answers.map((answer) => answer.status))].join(', '),
    answerMs,
    healthzWorstMs,
    rssBefore,
    rssPeak,
    rssAfter: rssOf(service.pid),
  };
}

// ---- the story -----------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const rows: Row[] = [];
  for (const store of STORES) rows.push(...(await inScratchDir('bench-hostile-', (dir) => attackStore(store, dir))));
  const text = report(rows);
  if (process.env.BENCH_HOSTILE_PRINT === '1') console.log(text);
  else {
    const file = join(REPO, 'bench', 'results', `${new Date().toISOString().slice(0, 10)}-hostile.md`);
    writeFileSync(file, text);
    console.error(`wrote ${file}`);
  }
}

/** The service on `store`, seeded with the names the pattern attack runs against, then each attack in turn. */
async function attackStore(store: StoreName, dir: string): Promise<Row[]> {
  const rows: Row[] = [];
  const prefix = `bench-hostile-${process.pid}`;
  const env = storeEnv(store, { sqlitePath: join(dir, 'monitor.sqlite'), prefix });
  const service = await startOurService({ name: store, port: PORT, env, logFile: join(dir, 'service.log') });
  try {
    await seed(service.target);
    // Elasticsearch: the names written are searchable after a refresh (1 s).
    await sleep(1500);
    for (const attack of ATTACKS) {
      const row = await measure(service, store, attack);
      rows.push(row);
      console.error(`${store}: ${attack.name}: ${row.statuses} in ${row.answerMs.toFixed(0)} ms`);
    }
  } finally {
    await service.stop();
    if (store === 'elasticsearch') await deletePrefix(prefix);
  }
  return rows;
}

function report(rows: Row[]): string {
  return [
    `# Hostile requests — ${new Date().toISOString().slice(0, 10)}`,
    '',
    `${cpus().length} cores, load average ${loadText(' ')}. Command: \`node --import tsx bench/studies/hostile-requests/hostile.ts\` ` +
      `(BENCH_HOSTILE_STORES=${STORES.join(',')}). RSS in MB; "healthz worst" is the longest a \`GET /healthz\` sent ` +
      'every 10 ms waited while the attack ran.',
    '',
    '| store | attack | answer | time to answer (ms) | healthz worst (ms) | RSS before | RSS peak | RSS 5 s after |',
    '|---|---|---|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.store} | ${r.attack} | ${r.statuses} | ${r.answerMs.toFixed(0)} | ${r.healthzWorstMs.toFixed(1)} | ` +
        `${r.rssBefore.toFixed(0)} | ${r.rssPeak.toFixed(0)} | ${r.rssAfter.toFixed(0)} |`,
    ),
    '',
  ].join('\n');
}

main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => stopAll());
