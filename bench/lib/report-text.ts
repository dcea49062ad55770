/** What every bench's Markdown report says about its run: the load average, the exact command, times in ms or s. */
import { loadavg } from 'node:os';
import { fmt } from './stats.js';

/** The load average (1 / 5 / 15 min), two decimals, joined by `separator`; now, or the values given. */
export const loadText = (separator = ', ', values: number[] = loadavg()): string =>
  values.map((v) => v.toFixed(2)).join(separator);

/** The command that ran the bench: the settings of this process's environment that `keep` picks, then `command`. */
export const commandLine = (keep: (name: string) => boolean, command: string): string =>
  `${Object.entries(process.env)
    .filter(([k]) => keep(k))
    .map(([k, v]) => `${k}=${v ?? ''} `)
    .join('')}${command}`;

/** A latency: "failed" when infinite, seconds from 1 s, else milliseconds. */
export const fmtMs = (ms: number): string =>
  ms === Infinity ? 'failed' : ms >= 1000 ? `${fmt(ms / 1000, 2)} s` : `${fmt(ms)} ms`;
