/** A bench's progress lines on stderr (`[tag] HH:MM:SS text`), and the one sleep. */

export const logger =
  (tag: string) =>
  (line: string): void =>
    console.error(`[${tag}] ${new Date().toISOString().slice(11, 19)} ${line}`);

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
