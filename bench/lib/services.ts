import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { send, type Target } from './http-load.js';

/**
 * The processes a benchmark starts: our service (the compiled dist/src/server.js) and the original server
 * (bench/suite/original-server.sh run). Every one is stopped in `stopAll`, which also runs on exit and on signals.
 */

export const REPO = resolve(import.meta.dirname, '..', '..');

export interface Service {
  name: string;
  target: Target;
  process: ChildProcess;
  pid: number;
  stop(): Promise<void>;
}

const running = new Set<Service>();

function killAllNow(): void {
  for (const service of running) {
    try {
      service.process.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
}
process.once('exit', killAllNow);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void stopAll().finally(() => process.exit(130));
  });
}

export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((service) => service.stop()));
}

async function waitReady(
  target: Target,
  path: string,
  child: ChildProcess,
  timeoutMs: number,
  logFile: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`the server exited with ${child.exitCode} before it was ready; see ${logFile}`);
    try {
      const answer = await send(target, { method: 'GET', path }, { fresh: true, timeoutMs: 2000 });
      if (answer.status === 200) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`not ready at ${target.host}:${target.port}${path} after ${timeoutMs} ms; see ${logFile}`);
}

function track(name: string, child: ChildProcess, target: Target): Service {
  const service: Service = {
    name,
    target,
    process: child,
    pid: child.pid ?? -1,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((r) => child.once('exit', () => r()));
        child.kill('SIGTERM');
        const killed = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(killed);
      }
      running.delete(service);
    },
  };
  running.add(service);
  return service;
}

async function openLog(file: string): Promise<number> {
  const { openSync } = await import('node:fs');
  return openSync(file, 'w');
}

/** The variables a service started with `ownEnv` takes from this process: none of its settings. */
const PLAIN_ENV = ['PATH', 'HOME', 'TMPDIR', 'LANG', 'TZ'];

/**
 * Our service, compiled: `node dist/src/server.js` (of `cwd`, default this tree), LOG_LEVEL=warn. `extraNodeArgs`
 * e.g. ['--cpu-prof']. With `ownEnv`, its environment is `env` alone (plus PATH, HOME...), not this process's.
 */
export async function startOurService(options: {
  name: string;
  port: number;
  env: Record<string, string>;
  logFile: string;
  extraNodeArgs?: string[];
  cwd?: string;
  ownEnv?: boolean;
}): Promise<Service> {
  const target = { host: '127.0.0.1', port: options.port };
  const log = await openLog(options.logFile);
  const base = options.ownEnv
    ? Object.fromEntries(
        PLAIN_ENV.flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name]]])),
      )
    : process.env;
  const child = spawn(process.execPath, [...(options.extraNodeArgs ?? []), 'dist/src/server.js'], {
    cwd: options.cwd ?? REPO,
    env: { ...base, PORT: String(options.port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...options.env },
    stdio: ['ignore', log, log],
  });
  const service = track(options.name, child, target);
  await waitReady(target, '/readyz', child, 60_000, options.logFile);
  return service;
}

/** The original monitor-server-api 1.1.0 under uWSGI (4 workers) on a SQLite file. */
export async function startOriginal(options: { port: number; dbFile: string; logFile: string }): Promise<Service> {
  const target = { host: '127.0.0.1', port: options.port };
  const log = await openLog(options.logFile);
  const child = spawn('bash', ['bench/suite/original-server.sh', 'run', String(options.port), options.dbFile], {
    cwd: REPO,
    stdio: ['ignore', log, log],
  });
  const service = track('original', child, target);
  await waitReady(target, '/api/v1/metrics/count', child, 60_000, options.logFile);
  return service;
}

/** Resident memory (MB, 10^6 bytes) of a process, or of it and all its descendants, from /proc. */
function rssMB(rootPid: number, tree = false): number {
  if (!tree) return (statusField(rootPid, 'VmRSS') * 1024) / 1e6;
  const kib = descendants(rootPid).reduce((sum, pid) => sum + (statusField(pid, 'VmRSS') || 0), 0);
  return (kib * 1024) / 1e6;
}

/** Peak-of-process-lifetime resident memory (VmHWM, MB) of one process. */
export function hwmMB(pid: number): number {
  return (statusField(pid, 'VmHWM') * 1024) / 1e6;
}

/** A kB field of /proc/<pid>/status (VmRSS, VmHWM), NaN when the process is gone. */
function statusField(pid: number, field: string): number {
  try {
    const match = new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** Samples RSS every `everyMs` until stopped; returns the peak seen. */
export function sampleRss(pid: number, options: { tree?: boolean; everyMs?: number } = {}): { stop(): number } {
  const read = (): number => rssMB(pid, options.tree ?? false);
  let peak = read();
  const timer = setInterval(() => {
    const now = read();
    if (now > peak) peak = now;
  }, options.everyMs ?? 100);
  timer.unref();
  return {
    stop: () => {
      clearInterval(timer);
      return Math.max(peak, read());
    },
  };
}

/** CPU seconds (user + system) a process, or it and its descendants, has used so far, from /proc (100 ticks/s). */
export function cpuSeconds(rootPid: number, tree = false): number {
  const pids = tree ? descendants(rootPid) : [rootPid];
  let ticks = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      /* gone */
    }
  }
  return ticks / 100;
}

function descendants(rootPid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      /* gone */
    }
  }
  const all: number[] = [];
  const stack = [rootPid];
  while (stack.length > 0) {
    const pid = stack.pop() as number;
    all.push(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return all;
}

/** The pid of the benchmark's Elasticsearch node (scripts/elasticsearch.sh keeps it per port), if known. */
export function elasticsearchPid(url: string): number | undefined {
  try {
    const port = new URL(url).port || '9200';
    const pid = Number(
      readFileSync(resolve(REPO, '.cache', 'elasticsearch', `run-${port}`, 'elasticsearch.pid'), 'utf8').trim(),
    );
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
