import type { Readable, Writable } from 'node:stream';

/**
 * Everything a command touches outside itself, so that the tests run commands in-process with captured streams,
 * a pretend terminal and scripted answers, and main.ts wires the real process.
 */
export interface CliIo {
  /** Data: exports, --json answers, counts, reports. */
  stdout: Writable;
  /** Progress, summaries, errors. */
  stderr: Writable;
  /** NDJSON for `import -`. */
  stdin: Readable;
  env: NodeJS.ProcessEnv;
  /** A person can answer a question (purge asks for confirmation only then). */
  stdinIsTTY: boolean;
  /** Progress is drawn as a bar on a terminal, as plain lines otherwise. */
  stderrIsTTY: boolean;
  /** Asks a question on the terminal and resolves with the answer. */
  ask(question: string): Promise<string>;
  /** Fires on Ctrl-C: long operations stop at the next consistent point. */
  signal?: AbortSignal;
}

/** Exit codes, documented in the README. */
export const EXIT = {
  ok: 0,
  /** The operation failed, the store is unhealthy, init --check found drift, or check's verdict is "fail". */
  failure: 1,
  /** Bad arguments, options or configuration. */
  usage: 2,
  /** import or push finished, but some records were rejected. */
  rejected: 3,
  /**
   * check: the verdict is "confirm" — regressions one run cannot prove (the build may hold proven ones already): re-run
   * the tests it names (--rerun-file) as a new session of the same build, then check again.
   */
  confirm: 3,
  /** check, push: the service could not answer (unreachable, timed out, 5xx, or it refused the token). */
  unavailable: 4,
  /** gate: the tests failed (pytest exited 1); the build was judged once and its report printed, not re-run. */
  testsFailed: 5,
  /**
   * gate: the test command did not run the suite through (it could not start, pytest refused its arguments, found no
   * test, crashed or was killed: any end but 0 or 1), so nothing was judged (or a re-run could not confirm).
   */
  testsDidNotRun: 6,
  /** Interrupted by Ctrl-C (SIGINT): 128 + 2. */
  interrupted: 130,
} as const;

/** A command used wrongly: what to write instead (exit code 2). */
export class UsageError extends Error {}

/** Writes text, waiting when the stream's buffer is full (constant memory however much is written). */
export async function write(stream: Writable, text: string): Promise<void> {
  if (stream.write(text)) return;
  await new Promise<void>((resolve, reject) => {
    const done = (error?: Error): void => {
      stream.off('drain', onDrain);
      stream.off('error', done);
      if (error) reject(error);
      else resolve();
    };
    const onDrain = (): void => done();
    stream.once('drain', onDrain);
    stream.once('error', done);
  });
}
