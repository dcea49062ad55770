/**
 * Every analysis answer the crash harness compares between a service reading run summaries and one reading every
 * metric (MONITOR_SUMMARY_READS=false) over the same store: of each pipeline, the period routes at their defaults
 * (cost, costliest tests and components, creep, noise, changes) and a few variants' changes; of the builds and
 * sessions written in the round (and each pipeline's latest build), the regressions and the cost; and the CI gate,
 * `monitor-admin check --json`, of the latest build. Each answer is its status and its JSON, every page of it.
 */
import { isDeepStrictEqual } from 'node:util';
import { send, type Target } from '../http-load.js';
import { startAdmin } from './processes.js';

export interface Probe {
  name: string;
  /** A path under /api/v1, or `check …` for the CI gate. */
  path: string;
}

export interface Scope {
  pipelines: Array<{ name: string; builds: string[]; variants: string[] }>;
  sessions: string[];
}

const enc = encodeURIComponent;

export function probes(scope: Scope): Probe[] {
  const list: Probe[] = [];
  for (const { name, builds, variants } of scope.pipelines) {
    const p = `/pipelines/${enc(name)}`;
    for (const route of ['cost', 'cost/tests', 'cost/components', 'creep', 'noise', 'changes'])
      list.push({ name: `${route} of ${name}`, path: `${p}/${route}` });
    for (const variant of variants)
      list.push({ name: `changes of ${name} ${variant}`, path: `${p}/variants/${enc(variant)}/changes` });
    for (const build of builds) {
      list.push({ name: `regressions of ${name} ${build}`, path: `${p}/builds/${enc(build)}/regressions` });
      list.push({ name: `cost of ${name} ${build}`, path: `${p}/builds/${enc(build)}/cost` });
    }
  }
  for (const h of scope.sessions) {
    list.push({ name: `regressions of session ${h}`, path: `/sessions/${h}/regressions` });
    list.push({ name: `cost of session ${h}`, path: `/sessions/${h}/cost` });
  }
  return list;
}

/** An answer: its status and its body, each page's (parsed when JSON). */
export interface Answer {
  status: number;
  pages: unknown[];
}

async function get(target: Target, path: string): Promise<Answer> {
  const pages: unknown[] = [];
  let next: string | null = `/api/v1${path}`;
  let status = 0;
  for (let page = 0; next !== null && page < 100; page += 1) {
    const answer = await send(target, { method: 'GET', path: next }, { fresh: false, timeoutMs: 120_000 });
    status = answer.status;
    let body: unknown = answer.body;
    try {
      body = JSON.parse(answer.body);
    } catch {
      /* not JSON: kept as text */
    }
    pages.push(body);
    const link = (body as { next_url?: unknown } | null)?.next_url;
    next = answer.status === 200 && typeof link === 'string' ? link : null;
  }
  return { status, pages };
}

/** `monitor-admin check --json` of a build: its exit code (as the status) and its report. */
async function check(repo: string, server: string, pipeline: string, build: string): Promise<Answer> {
  const run = startAdmin(repo, {}, ['check', '--server', server, '--pipeline', pipeline, '--build', build, '--json']);
  let stdout = '';
  run.child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  const code = await run.done;
  let report: unknown = stdout;
  try {
    report = JSON.parse(stdout);
  } catch {
    /* kept as text */
  }
  // Its verdicts (0 pass, 1 fail, 3 confirm) and 2 (a build the service does not know: a kill before any of its
  // sessions was stored) are answers; 4 (the service could not answer) or no exit code is not.
  return { status: code === 4 || code === null ? 500 + (code ?? 99) : code, pages: [report] };
}

/** Every probe's answer from the service at `target` (one at a time: no analysis waits for a slot). */
export async function collect(
  target: Target,
  list: readonly Probe[],
  gate: { repo: string; pipeline: string; build: string } | undefined,
): Promise<Map<string, Answer>> {
  const answers = new Map<string, Answer>();
  for (const probe of list) answers.set(probe.name, await get(target, probe.path));
  if (gate)
    answers.set(
      `check ${gate.pipeline} ${gate.build}`,
      await check(gate.repo, `http://${target.host}:${target.port}`, gate.pipeline, gate.build),
    );
  return answers;
}

/** A value as a short text. */
const text = (value: unknown): string => {
  const json = value === undefined ? 'undefined' : JSON.stringify(value);
  return json.length > 120 ? `${json.slice(0, 120)}…` : json;
};

/** Every place two answers differ (at most `limit`), each a path and both values. */
function leafDifferences(a: unknown, b: unknown, path: string, found: Array<[string, unknown, unknown]>): void {
  if (found.length >= 1000 || isDeepStrictEqual(a, b)) return;
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    for (let i = 0; i < a.length; i += 1) leafDifferences(a[i], b[i], `${path}[${i}]`, found);
    return;
  }
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)]))
      leafDifferences(
        (a as Record<string, unknown>)[key],
        (b as Record<string, unknown>)[key],
        `${path}.${key}`,
        found,
      );
    return;
  }
  found.push([path, a, b]);
}

/** How two answers differ, when they are not deeply, exactly equal. */
export interface Difference {
  name: string;
  /** The first place, with both values. */
  where: string;
  /** Places that differ (counted up to 1,000). */
  places: number;
  /** Every difference is a number in its last bits (within 1e-9 relative): the order of a sum, not a missing metric. */
  lastBits: boolean;
}

const closeNumbers = (a: unknown, b: unknown): boolean =>
  typeof a === 'number' && typeof b === 'number' && Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));

/** The answers that differ, each with where. */
export function differences(
  summaries: ReadonlyMap<string, Answer>,
  metrics: ReadonlyMap<string, Answer>,
): Difference[] {
  const list: Difference[] = [];
  for (const [name, answer] of summaries) {
    const other = metrics.get(name);
    // An answer that failed (a 5xx) is no answer: it counts as a difference even when both failed alike.
    const failed = [answer, other].find((a) => a === undefined || a.status >= 500);
    if (failed) {
      list.push({ name, where: `failed: ${text(failed)}`, places: 1, lastBits: false });
      continue;
    }
    const found: Array<[string, unknown, unknown]> = [];
    leafDifferences(answer, other, '$', found);
    const [first] = found;
    if (first)
      list.push({
        name,
        where: `${first[0]}: ${text(first[1])} ≠ ${text(first[2])}`,
        places: found.length,
        lastBits: found.every(([, a, b]) => closeNumbers(a, b)),
      });
  }
  return list;
}

/** The difference to show first: one beyond the last bits, if any. */
export const worst = (list: readonly Difference[]): Difference | undefined => list.find((d) => !d.lastBits) ?? list[0];
