import { InvalidArgumentError, Option } from 'commander';

/** Parsers of option values shared by the commands: each refuses with what a valid value looks like. */

export function wholeNumber(min: number, max: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^\s*\d+\s*$/.test(value) || n < min || n > max)
      throw new InvalidArgumentError(`must be a whole number from ${min} to ${max}`);
    return n;
  };
}

/** A count: a whole number, at least 1, however large. */
export function atLeastOne(value: string): number {
  const n = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || n < 1) throw new InvalidArgumentError('must be a whole number, at least 1');
  return n;
}

export function aNumber(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError('must be a number');
  return n;
}

function seconds(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n <= 0 || n > 3600)
    throw new InvalidArgumentError('must be a number of seconds, more than 0 and at most 3600');
  return n;
}

/** `--timeout <s>` of the commands that speak HTTP to a service. */
export const timeoutOption = (defaultSeconds: number): Option =>
  new Option('--timeout <s>', 'give up on a request after this many seconds')
    .default(defaultSeconds)
    .argParser(seconds);
