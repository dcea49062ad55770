/**
 * The processes of the crash-recovery harness: the built service (`node dist/src/server.js`), started, killed with
 * SIGKILL, started again on the same port and store, stopped; and `monitor-admin` runs (`node dist/src/cli/main.js`),
 * which a kill may interrupt. Readiness is `/readyz` answering 200, polled: never a fixed sleep.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { send, type Target } from '../http-load.js';
import { sleep } from '../log.js';

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const exited = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once('exit', () => resolve()));

/** The built service on one port and one store; `env` says which store and how to read it. */
export class ServiceProcess {
  private child: ChildProcess | undefined;
  private starts = 0;
  readonly target: Target;

  constructor(
    private readonly options: { repo: string; port: number; env: Record<string, string>; logDir: string; name: string },
  ) {
    this.target = { host: '127.0.0.1', port: options.port };
  }

  get url(): string {
    return `http://127.0.0.1:${this.options.port}`;
  }

  running(): boolean {
    return this.child?.exitCode === null && this.child.signalCode === null;
  }

  /** Starts the service and resolves once `/readyz` answers 200 (at most `timeoutMs`). */
  async start(timeoutMs = 60_000): Promise<void> {
    if (this.running()) throw new Error(`${this.options.name} is running already`);
    this.starts += 1;
    const logFile = join(this.options.logDir, `${this.options.name}-${this.starts}.log`);
    const log = openSync(logFile, 'w');
    const child = spawn(process.execPath, ['dist/src/server.js'], {
      cwd: this.options.repo,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        ...this.options.env,
        PORT: String(this.options.port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', log, log],
    });
    closeSync(log);
    this.child = child;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (!this.running()) throw new Error(`${this.options.name} exited before it was ready; see ${logFile}`);
      try {
        const answer = await send(this.target, { method: 'GET', path: '/readyz' }, { fresh: true, timeoutMs: 5000 });
        if (answer.status === 200) return;
      } catch {
        /* not listening yet */
      }
      if (Date.now() > deadline)
        throw new Error(`${this.options.name} not ready after ${timeoutMs} ms; see ${logFile}`);
      await sleep(25);
    }
  }

  /** SIGKILL, and its exit. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || !this.running()) return;
    child.kill('SIGKILL');
    await exited(child);
  }

  /** SIGTERM (its graceful shutdown), SIGKILL after `graceMs`. */
  async stop(graceMs = 30_000): Promise<void> {
    const child = this.child;
    if (!child || !this.running()) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited(child);
    clearTimeout(timer);
  }

  /** `/readyz`'s answer, parsed (undefined when it does not answer). */
  async readiness(): Promise<{ status: number; body: unknown } | undefined> {
    try {
      const answer = await send(this.target, { method: 'GET', path: '/readyz' }, { fresh: true, timeoutMs: 5000 });
      return { status: answer.status, body: JSON.parse(answer.body) as unknown };
    } catch {
      return undefined;
    }
  }
}

/** A `monitor-admin` run: its exit (null when killed), what it printed, when it started and ended. */
export interface AdminRun {
  args: string[];
  child: ChildProcess;
  startedAt: number;
  /** Resolves with its exit code (null when killed) once it ended. */
  done: Promise<number | null>;
  endedAt?: number;
  output: string;
}

export function startAdmin(repo: string, env: Record<string, string>, args: string[]): AdminRun {
  const child = spawn(process.execPath, ['dist/src/cli/main.js', ...args], {
    cwd: repo,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const run: AdminRun = {
    args,
    child,
    startedAt: performance.now(),
    output: '',
    done: new Promise((resolve) =>
      child.once('exit', (code) => {
        run.endedAt = performance.now();
        resolve(code);
      }),
    ),
  };
  const keep = (chunk: Buffer): void => {
    run.output = (run.output + chunk.toString('utf8')).slice(-20_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  return run;
}

export const adminRunning = (run: AdminRun | undefined): boolean => run !== undefined && run.endedAt === undefined;

/** A run to its end; throws with its output unless it exits 0. */
export async function runAdmin(repo: string, env: Record<string, string>, args: string[]): Promise<AdminRun> {
  const run = startAdmin(repo, env, args);
  const code = await run.done;
  if (code !== 0) throw new Error(`monitor-admin ${args.join(' ')} exited ${code}:\n${run.output}`);
  return run;
}
