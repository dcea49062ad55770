import { spawn } from 'node:child_process';
import type { Writable } from 'node:stream';
import { write } from '../io.js';
import type { TestsEnd } from './loop.js';

/**
 * Runs the test command in the current directory (where the re-run file's paths start: pytest's rootdir) with the
 * environment given, its standard input the terminal's, and its output — stdout and stderr both — on `output`, our
 * stderr: gate's stdout holds the report only (`gate --format markdown … > report.md`). Resolves with how it ended;
 * never rejects.
 */
export function runTests(argv: readonly string[], env: NodeJS.ProcessEnv, output: Writable): Promise<TestsEnd> {
  return new Promise((resolve) => {
    const [command = '', ...args] = argv;
    const child = spawn(command, args, { env, stdio: ['inherit', 'pipe', 'pipe'] });
    let writing = Promise.resolve();
    const forward = (text: string): void => {
      writing = writing.then(() => write(output, text));
    };
    child.stdout.setEncoding('utf8').on('data', forward);
    child.stderr.setEncoding('utf8').on('data', forward);
    child.on('error', (error) => {
      void writing.then(() => resolve({ failedToStart: error.message }));
    });
    child.on('close', (code, signal) => {
      void writing.then(() => resolve(code === null ? { signal: signal ?? 'a signal' } : { code }));
    });
  });
}
