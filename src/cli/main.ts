#!/usr/bin/env node
import { createInterface } from 'node:readline';
import { isatty } from 'node:tty';
import { runCli } from './program.js';

/** monitor-admin: the process around runCli — real streams, a terminal prompt, Ctrl-C handling, the exit code. */

const interrupt = new AbortController();
process.on('SIGINT', () => {
  if (interrupt.signal.aborted) process.exit(130);
  // First: a progress bar on the terminal ends on this signal, so the line below is not drawn over.
  interrupt.abort();
  process.stderr.write('monitor-admin: stopping at the next consistent point (Ctrl-C again to quit at once)\n');
});
// `monitor-admin export | head` closes the pipe early: that is not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

/** Asks on the terminal; Ctrl-C or Ctrl-D answers "" (which cancels whatever asked). */
function ask(question: string): Promise<string> {
  return new Promise((resolve) => {
    const terminal = createInterface({ input: process.stdin, output: process.stderr });
    let answered = false;
    terminal.on('SIGINT', () => terminal.close());
    terminal.on('close', () => {
      if (answered) return;
      process.stderr.write('\n');
      resolve('');
    });
    terminal.question(question, (answer) => {
      answered = true;
      terminal.close();
      resolve(answer);
    });
  });
}

const code = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  stdinIsTTY: isatty(0),
  stderrIsTTY: isatty(2),
  ask,
  signal: interrupt.signal,
});
process.exitCode = code;
