import type { Writable } from 'node:stream';
import cliProgress from 'cli-progress';
import type { ProgressSink } from '../store/admin.js';

/**
 * Progress on stderr: a bar on a terminal, plain lines otherwise (logs, CI, pipes). A bar ends as soon as `signal`
 * fires, so that the line saying the operation is stopping is not drawn over.
 */
export function createProgress(stream: Writable, isTTY: boolean, signal?: AbortSignal): ProgressSink {
  if (!isTTY) return new LineProgress(stream);
  const bar = new BarProgress(stream);
  signal?.addEventListener('abort', () => bar.stop(), { once: true });
  return bar;
}

class BarProgress implements ProgressSink {
  private bar: cliProgress.SingleBar | undefined;

  constructor(private readonly stream: Writable) {}

  start(label: string, total: number | undefined): void {
    this.stop();
    const format =
      total === undefined
        ? `${label.padEnd(24)} {value} done, {duration_formatted}`
        : `${label.padEnd(24)} [{bar}] {percentage}% {value}/{total} eta {eta_formatted}`;
    this.bar = new cliProgress.SingleBar(
      { stream: this.stream, format, hideCursor: true, etaBuffer: 100 },
      cliProgress.Presets.shades_classic,
    );
    this.bar.start(total ?? 0, 0);
  }

  advance(units: number): void {
    this.bar?.increment(units);
  }

  stop(): void {
    this.bar?.stop();
    this.bar = undefined;
  }

  note(line: string): void {
    this.stream.write(`${line}\n`);
  }
}

/** One line at the start, then at most every 10 % (or every 5 s when the total is unknown), and one at the end. */
class LineProgress implements ProgressSink {
  private label = '';
  private total: number | undefined;
  private done = 0;
  private started = 0;
  private lastStep = 0;
  private lastTime = 0;
  private active = false;

  constructor(private readonly stream: Writable) {}

  start(label: string, total: number | undefined): void {
    this.stop();
    Object.assign(this, {
      label,
      total,
      done: 0,
      started: Date.now(),
      lastStep: 0,
      lastTime: Date.now(),
      active: true,
    });
    this.stream.write(`${label}: started${total === undefined ? '' : `, ${total} to do`}\n`);
  }

  advance(units: number): void {
    if (!this.active) return;
    this.done += units;
    const now = Date.now();
    if (this.total !== undefined && this.total > 0) {
      const step = Math.floor((this.done / this.total) * 10);
      if (step > this.lastStep && this.done < this.total) {
        this.lastStep = step;
        this.stream.write(`${this.label}: ${this.done}/${this.total} (${step * 10}%)\n`);
      }
    } else if (now - this.lastTime >= 5000) {
      this.lastTime = now;
      this.stream.write(`${this.label}: ${this.done} done\n`);
    }
  }

  stop(): void {
    if (!this.active) return;
    this.active = false;
    const seconds = ((Date.now() - this.started) / 1000).toFixed(1);
    this.stream.write(
      `${this.label}: finished, ${this.done}${this.total === undefined ? '' : `/${this.total}`} in ${seconds}s\n`,
    );
  }

  note(line: string): void {
    this.stream.write(`${line}\n`);
  }
}
