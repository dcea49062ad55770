/**
 * Timing a command-line run (`monitor-admin` and the like) to its exit: each line it writes (stdout and stderr)
 * stamped with the time it arrived, on the caller's clock, so a bench can split the run by the lines that mark its
 * parts; killed after a time limit.
 */
import { spawn } from 'node:child_process';

export interface CliLine {
  /** ms on the caller's clock when the line arrived. */
  at: number;
  line: string;
}

export interface CliRun {
  exit: number | null;
  /** ms on the caller's clock. */
  spawnAt: number;
  exitAt: number;
  /** Its non-blank lines, trimmed. */
  lines: CliLine[];
}

/** `command args...` in `cwd` with `env` added to this process's environment; `clock` is the caller's time origin. */
export async function runCli(
  command: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string>; clock?: number; timeoutMs?: number },
): Promise<CliRun> {
  const clock = options.clock ?? 0;
  const lines: CliLine[] = [];
  const spawnAt = performance.now() - clock;
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let pending = '';
  const onData = (chunk: Buffer): void => {
    const at = performance.now() - clock;
    pending += chunk.toString('utf8');
    const parts = pending.split('\n');
    pending = parts.pop() ?? '';
    for (const text of parts) if (text.trim() !== '') lines.push({ at, line: text.trim() });
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const killer =
    options.timeoutMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
  const exit = await new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  clearTimeout(killer);
  const exitAt = performance.now() - clock;
  if (pending.trim() !== '') lines.push({ at: exitAt, line: pending.trim() });
  return { exit, spawnAt, exitAt, lines };
}
