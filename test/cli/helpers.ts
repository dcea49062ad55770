import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import { runCli } from '../../src/cli/program.js';
import type { Context, Metric, Session } from '../../src/domain/records.js';
import { ElasticsearchStore } from '../../src/store/elasticsearch/elasticsearch-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Slice, Store } from '../../src/store/store.js';
import { aContext, aMetric, aSession, ciTags } from '../support/builders.js';
import { elasticsearchTestConfig } from '../support/stores.js';

/** Running monitor-admin in-process against a test store: captured streams, a pretend terminal, scripted answers. */

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

class Capture extends Writable {
  text = '';

  constructor(private readonly onText?: (text: string) => void) {
    super();
  }

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, callback: () => void): void {
    this.text += chunk.toString();
    this.onText?.(chunk.toString());
    callback();
  }
}

export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  /** What standard input holds (for `import -`). */
  stdin?: string | Readable;
  stdinIsTTY?: boolean;
  stderrIsTTY?: boolean;
  /** Answers to the questions asked, in order. */
  answers?: string[];
  signal?: AbortSignal;
  /** Sees each piece of stderr as it is written (to act at a given point of a long operation). */
  onStderr?: (text: string) => void;
}

export async function runAdmin(argv: string[], options: RunOptions = {}): Promise<CliResult & { questions: string[] }> {
  const stdout = new Capture();
  const stderr = new Capture(options.onStderr);
  const questions: string[] = [];
  const answers = [...(options.answers ?? [])];
  const stdin =
    typeof options.stdin === 'string' ? Readable.from([options.stdin]) : (options.stdin ?? new PassThrough().end());
  const code = await runCli(argv, {
    stdout,
    stderr,
    stdin,
    env: options.env ?? {},
    stdinIsTTY: options.stdinIsTTY ?? false,
    stderrIsTTY: options.stderrIsTTY ?? false,
    ask: async (question) => {
      questions.push(question);
      return answers.shift() ?? '';
    },
    signal: options.signal,
  });
  return { code, stdout: stdout.text, stderr: stderr.text, questions };
}

/** The environment that points monitor-admin at the same store as `store`. */
export function envFor(store: Store): NodeJS.ProcessEnv {
  if (store instanceof SqliteStore) return { MONITOR_STORE: 'sqlite', MONITOR_SQLITE_PATH: store.database().name };
  if (store instanceof ElasticsearchStore) {
    return {
      MONITOR_STORE: 'elasticsearch',
      ELASTICSEARCH_URL: elasticsearchTestConfig().url,
      ELASTICSEARCH_INDEX_PREFIX: store.names.prefix,
    };
  }
  throw new Error(`no environment for the store ${store.name}`);
}

export function tempDir(): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), 'monitor-cli-'));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** Every record of a kind, read a page of at most 5,000 at a time (as a client pages a long listing). */
async function everything<T>(total: number, list: (slice: Slice) => Promise<T[]>): Promise<T[]> {
  const all: T[] = [];
  for (let offset = 0; offset === 0 || offset < total; offset += 5000)
    all.push(...(await list({ offset, limit: Math.max(1, Math.min(5000, total - offset)), total })));
  return all;
}

/** Every record of a store, in insertion order. */
export async function snapshot(store: Store): Promise<{ contexts: Context[]; sessions: Session[]; metrics: Metric[] }> {
  // Writes made by monitor-admin's own client are searchable after a refresh (the store refreshes only for its own).
  if (store instanceof ElasticsearchStore) await store.client.indices.refresh({ index: `${store.names.prefix}-*` });
  const contexts = await everything(await store.countContexts({}), (slice) => store.listContexts({}, slice));
  const sessions = await everything(await store.countSessions({}), (slice) => store.listSessions({}, slice));
  const metrics = await everything(await store.countMetrics({}), (slice) => store.listMetrics({}, slice));
  return { contexts, sessions, metrics };
}

/**
 * A small but varied data set: two contexts, sessions on several dates (two pipelines, tags in a written order
 * that a JS object would change, text that needs escaping), metrics with and without components.
 */
export async function seed(store: Store): Promise<{ contexts: Context[]; sessions: Session[]; metrics: Metric[] }> {
  const contexts = [
    aContext({ h: 'ctx-a' }),
    aContext({ h: 'ctx-b', machine_node: 'node "b"\nwith a newline', cpu_vendor: 'é ü 漢字' }),
  ];
  const sessions = [
    aSession({ session_h: 's-2025-12', run_date: '2025-12-15T10:00:00.000001', tags: ciTags('main', '1') }),
    aSession({
      session_h: 's-2026-01',
      run_date: '2026-01-10T08:30:00',
      scm_ref: null,
      tags: [
        { key: 'z', value: '1' },
        { key: '2', value: 'two' },
        { key: '10', value: '{"x":1}' },
      ],
    }),
    aSession({ session_h: 's-2026-02', run_date: '2026-02-01T00:00:00', tags: ciTags('release', '7') }),
    aSession({ session_h: 's-2026-03', run_date: '2026-03-05T12:00:00', tags: [] }),
  ];
  for (const context of contexts) await store.createContext(context);
  for (const session of sessions) await store.createSession(session);
  const metrics: Metric[] = [];
  const plan: Array<[string, string, string]> = [
    ['s-2025-12', 'ctx-a', 'alpha'],
    ['s-2025-12', 'ctx-a', ''],
    ['s-2026-01', 'ctx-b', 'beta'],
    ['s-2026-01', 'ctx-a', ''],
    ['s-2026-02', 'ctx-a', 'alpha'],
    ['s-2026-03', 'ctx-a', 'gamma'],
  ];
  for (const [i, [session_h, context_h, component]] of plan.entries()) {
    const metric = aMetric({
      session_h,
      context_h,
      component,
      item: `test_${i}`,
      item_variant: `test_${i}[${i}]`,
      item_start_time: `2026-01-01T00:00:0${i}`,
      total_time: 0.1 + i,
      mem_usage: i === 3 ? -1.5 : 12.25 * i,
      cpu_usage: 1 / 3,
    });
    await store.createMetric(metric);
    metrics.push(metric);
  }
  return { contexts, sessions, metrics };
}

/** A loopback port nothing listens on: bound, then closed (a service that is down). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
