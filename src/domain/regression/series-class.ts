import { studentTUpper, studentTUpperInverse } from '../stats/distributions.js';
import { median } from '../stats/order.js';
import { summarize } from '../stats/summary.js';

/**
 * What a series' history looks like, and the model a new value of it is judged by. A series is one test's values of
 * one resource, one per earlier build, with the runner's shift already taken out (runner-shift.ts):
 *
 * - **steady**: one level, noise under 10 % of it;
 * - **noisy**: one level, noise of 10 % or more;
 * - **spiky**: one level, and values far above it now and then (a build where the test waited for a disk, a lock);
 * - **multimodal**: two or three levels apart, the test lands on one or another from run to run (an allocation that
 *   happens or not, a cache that is warm or not);
 * - **unresolved**: below what its measure resolves (domain/resolution.ts: the memory of a test shorter than
 *   memory_profiler's sampling interval): counted, never judged.
 *
 * Steady, noisy and spiky series are judged against one level, each with a Student-t predictive distribution from the
 * history's centre and spread; a multimodal one against its nearest mode, so that a value back at its other level is
 * no change and only a value that leaves every mode is.
 *
 * A step is not a mode. Two levels are modes only when the test went back and forth between them; a level that only
 * the latest builds hold (the values in time order end with all of its values, and it is the highest or the lowest)
 * is a change that stayed: the series keeps the shape of its history before the step, and `step` says where the new
 * level began. A level is two values at least: the build after the one where a step appeared is judged against the
 * old level again, and fails the same way (a single high value may be a spike); from the next on, the step stands.
 */

export const SERIES_CLASSES = ['steady', 'noisy', 'multimodal', 'spiky', 'unresolved'] as const;
export type SeriesClass = (typeof SERIES_CLASSES)[number];

/** One level of a series: its centre, the spread of values around it, how many earlier values it holds. */
export interface Mode {
  centre: number;
  spread: number;
  count: number;
}

export interface SeriesShape {
  class: SeriesClass;
  /** One mode, or two or three (multimodal), lowest first. */
  modes: Mode[];
  /** Earlier values above the level by more than a spike's reach (spiky when ≥ 1). */
  spikes: number;
  /** The highest of the earlier values that were spikes above the (highest) level, null when none was. */
  highestSpike: number | null;
  /** The level the latest builds moved to and held, null when they did not: `modes` are the level(s) before it. */
  step: Step | null;
}

/** A change the latest builds of a series kept: where it began, which way, the level it reached. */
interface Step {
  /** The index in the history (oldest first) of the first value at the new level. */
  start: number;
  /** 1: the new level is above every level before it (a regression kept); −1: below them (an improvement kept). */
  direction: 1 | -1;
  level: Mode;
  /**
   * The farthest a value may be from the old level and still be at the new one (its spike line, that way): beyond it
   * the series moved again.
   */
  edge: number;
}

/** What a change must reach to count, by the rule: at least `floor` and `minChangePct` % of the centre. */
export interface Reach {
  floor: number;
  minChangePct: number;
}

/** A series whose spread is at least this share of its level is noisy. */
const NOISY_CV = 0.1;
/**
 * A value this many spreads above the median (and past the rule's reach) that the next value falls back from is a
 * spike: the gate's spike, counted per series for its spike rate (spike-rate.ts). Not changes/change-points.ts's
 * spike (a value off both its neighbours by the rule's spikeSigmas × the consecutive-difference noise, left out of the
 * levels): that one must be told online, at each build, from a few neighbours, where this one sees the whole history.
 */
const SPIKE_SIGMAS = 5;
/** Two modes are this many spreads of the wider one apart at least (and past the rule's reach). */
const MODE_GAP_SIGMAS = 6;
/** A mode holds at least this many earlier values. */
const MODE_MIN_COUNT = 2;
const MAX_MODES = 3;

/** The smallest change the rule reports from `centre`. */
const reachFrom = (centre: number, reach: Reach): number =>
  Math.max(reach.floor, (Math.abs(centre) * reach.minChangePct) / 100);

/** The spread of a group of values: their robust σ (stats/summary.ts), never below a resolution floor. */
function spreadOf(sorted: readonly number[]): number {
  return sorted.length < 2 ? 0 : summarize(sorted).robustStddev;
}

/**
 * The modes of a sorted history: split at the widest gap that both sides can claim as theirs (≥ MODE_MIN_COUNT
 * values each, the gap ≥ MODE_GAP_SIGMAS × the wider side's spread and past the rule's reach), recursively, at most
 * MAX_MODES. A gap between modes is where no value fell; a spike is a lone value, never a mode.
 */
function splitModes(sorted: readonly number[], reach: Reach, budget: number): number[][] {
  if (budget <= 1 || sorted.length < 2 * MODE_MIN_COUNT) return [[...sorted]];
  let best = -1;
  let bestScore = 0;
  for (let i = MODE_MIN_COUNT; i <= sorted.length - MODE_MIN_COUNT; i += 1) {
    const gap = (sorted[i] as number) - (sorted[i - 1] as number);
    // The rule's reach first: it rules out nearly every gap of a one-level series at the cost of a subtraction.
    if (gap < reachFrom(sorted[Math.floor((i - 1) / 2)] as number, reach)) continue;
    const spread = Math.max(spreadOf(sorted.slice(0, i)), spreadOf(sorted.slice(i)));
    const score = spread === 0 ? Infinity : gap / spread;
    if (score >= MODE_GAP_SIGMAS && score > bestScore) {
      best = i;
      bestScore = score;
    }
  }
  if (best < 0) return [[...sorted]];
  const low = splitModes(sorted.slice(0, best), reach, budget - 1);
  return [...low, ...splitModes(sorted.slice(best), reach, budget - low.length)];
}

/** The shape of a series from its earlier values, oldest first. */
export function classifySeries(values: readonly number[], reach: Reach): SeriesShape {
  const sorted = [...values].sort((a, b) => a - b);
  const groups = splitModes(sorted, reach, MAX_MODES);
  if (groups.length > 1) {
    const start = latestLevelStart(values, groups);
    if (start !== null) return stepped(values, start, reach);
    const modes = pooledSpreads(
      groups.map((group) => ({ centre: median(group), spread: spreadOf(group), count: group.length })),
    );
    const top = modes[modes.length - 1] as Mode;
    const { highest } = spikesAbove(
      values,
      top.centre + Math.max(SPIKE_SIGMAS * top.spread, reachFrom(top.centre, reach)),
    );
    return { class: 'multimodal', modes, spikes: 0, highestSpike: highest, step: null };
  }
  const start = heldSuffixStart(values, reach);
  if (start !== null) return stepped(values, start, reach);
  const summary = summarize(sorted);
  const centre = summary.median;
  const spread = summary.robustStddev;
  const spikeLine = centre + Math.max(SPIKE_SIGMAS * spread, reachFrom(centre, reach));
  // A high value at the end of the history is not counted a spike (spikesAbove): it may be the start of a new level
  // (the build before this one regressed), and counting it a spike would excuse its sequel. Nor is it a step yet: one
  // value may be a spike too, and its sequel is judged against the level (bench/results/2026-11-28-steps.md).
  const { count: spikes, highest } = spikesAbove(values, spikeLine);
  const mode: Mode = { centre, spread, count: sorted.length };
  if (spikes > 0) return { class: 'spiky', modes: [mode], spikes, highestSpike: highest, step: null };
  const noisy = centre !== 0 && spread / Math.abs(centre) >= NOISY_CV;
  return { class: noisy ? 'noisy' : 'steady', modes: [mode], spikes: 0, highestSpike: null, step: null };
}

/** The values above `line` that the next value falls back from (spikes), and the highest of them. */
function spikesAbove(values: readonly number[], line: number): { count: number; highest: number | null } {
  let count = 0;
  let highest: number | null = null;
  for (let i = 0; i + 1 < values.length; i += 1) {
    const value = values[i] as number;
    if (value <= line || (values[i + 1] as number) > line) continue;
    count += 1;
    highest = highest === null ? value : Math.max(highest, value);
  }
  return { count, highest };
}

/**
 * Where the level of the latest values began, when its values are exactly the last ones in time and it is the
 * highest or the lowest of the modes (`groups`, sorted slices of the history, lowest first); null when the levels
 * are interleaved in time (modes) or the latest level lies between others.
 */
function latestLevelStart(values: readonly number[], groups: ReadonlyArray<readonly number[]>): number | null {
  const groupOf = (value: number) => groups.findIndex((group) => value <= (group[group.length - 1] as number));
  const latest = groupOf(values[values.length - 1] as number);
  if (latest !== 0 && latest !== groups.length - 1) return null;
  const start = values.length - (groups[latest] as readonly number[]).length;
  for (let i = start; i < values.length; i += 1) if (groupOf(values[i] as number) !== latest) return null;
  return start;
}

/** A step's level holds at least this many of the latest values, and the level before it this many earlier ones. */
const SUFFIX_MIN_COUNT = MODE_MIN_COUNT;
const PREFIX_MIN_COUNT = 2 * MODE_MIN_COUNT;
/** Each value of a step's level lies this many spreads of the level before it away (and the level's median SPIKE_SIGMAS). */
const SUFFIX_SIGMAS = 3;

/**
 * Where the latest values left the level before them and stayed, when no gap between modes says so: a new level
 * noisier than the old one (a CPU loop made slower, on runners of varying load) is rarely 6 spreads clear of it, and
 * its values, sorted in with the old ones, would widen the old level's spread until a value at the new level passed
 * as noise. The earliest start of a suffix of SUFFIX_MIN_COUNT values or more, after PREFIX_MIN_COUNT or more, each of
 * whose values lies SUFFIX_SIGMAS spreads of the values before it (and the rule's reach) away from their median, all
 * the same way, its median SPIKE_SIGMAS spreads away. Null when there is none.
 */
function heldSuffixStart(values: readonly number[], reach: Reach): number | null {
  const n = values.length;
  for (let start = PREFIX_MIN_COUNT; start <= n - SUFFIX_MIN_COUNT; start += 1) {
    const before = summarize(values.slice(0, start));
    const least = reachFrom(before.median, reach);
    const each = Math.max(SUFFIX_SIGMAS * before.robustStddev, least);
    const level = Math.max(SPIKE_SIGMAS * before.robustStddev, least);
    const suffix = values.slice(start);
    const centre = median(suffix);
    for (const direction of [1, -1]) {
      const away = (v: number) => (v - before.median) * direction;
      if (away(centre) > level && suffix.every((v) => away(v) > each)) return start;
    }
  }
  return null;
}

/** The shape of the history before `start`, with the level from `start` on as its step. */
function stepped(values: readonly number[], start: number, reach: Reach): SeriesShape {
  const before = classifySeries(values.slice(0, start), reach);
  const after = values.slice(start).sort((a, b) => a - b);
  const centre = median(after);
  const old = (
    centre > (before.modes[0] as Mode).centre ? before.modes[before.modes.length - 1] : before.modes[0]
  ) as Mode;
  const direction = centre > old.centre ? 1 : -1;
  // A level of one or two values has a spread of little worth: at least the old level's, relative to its centre.
  const relative = old.centre === 0 ? 0 : old.spread / Math.abs(old.centre);
  const spread = Math.max(spreadOf(after), relative * Math.abs(centre));
  const edge = centre + direction * Math.max(SPIKE_SIGMAS * spread, reachFrom(centre, reach));
  return { ...before, step: { start, direction, level: { centre, spread, count: after.length }, edge } };
}

/**
 * The index in the history where the level `value` still holds began, when the series stepped `direction`'s way and
 * `value` is at that level: short of its edge, and nearer it than the level before (in spreads of each); null
 * otherwise.
 */
export function heldStepStart(shape: SeriesShape, direction: 1 | -1, value: number): number | null {
  const { step } = shape;
  if (step?.direction !== direction || (value - step.edge) * direction > 0) return null;
  const old = referenceMode(shape, direction);
  const spreads = (mode: Mode) => Math.abs(value - mode.centre) / Math.max(mode.spread, Number.MIN_VALUE);
  return spreads(step.level) <= spreads(old) ? step.start : null;
}

/**
 * Whether `value` is no higher than a spike the history already showed: one run at such a size may be one more of
 * them, and is re-run before it fails.
 */
export const withinSeenSpikes = (shape: SeriesShape, value: number): boolean =>
  shape.highestSpike !== null && value <= shape.highestSpike;

/**
 * Modes of few values have spreads of little worth (two values may even agree exactly): each mode's spread is at
 * least the series' pooled relative spread times its centre.
 */
function pooledSpreads(modes: Mode[]): Mode[] {
  let squares = 0;
  let freedom = 0;
  for (const mode of modes) {
    if (mode.centre === 0 || mode.count < 2) continue;
    squares += (mode.spread / Math.abs(mode.centre)) ** 2 * (mode.count - 1);
    freedom += mode.count - 1;
  }
  const cv = freedom > 0 ? Math.sqrt(squares / freedom) : 0;
  return modes.map((mode) => ({ ...mode, spread: Math.max(mode.spread, cv * Math.abs(mode.centre)) }));
}

/** The mode a change is measured from: the highest for a value above every mode, the lowest for one below. */
function referenceMode(shape: SeriesShape, direction: 1 | -1): Mode {
  return (direction === 1 ? shape.modes[shape.modes.length - 1] : shape.modes[0]) as Mode;
}

/**
 * P(a new value ≥ `value`) (direction 1) or ≤ it (direction −1) under the series' model, spikes left out: Student's
 * t from the reference mode's centre and spread, widened by √(1 + 1/n) for the centre's own uncertainty, n − 1
 * degrees of freedom. A value on the wrong side of its mode, or between two modes, has p = 1: it left no mode that
 * way. A spread of 0 (every earlier value equal) makes any value past the centre certain: the rule's reach decides.
 */
export function tailProbability(shape: SeriesShape, value: number, direction: 1 | -1): number {
  const mode = referenceMode(shape, direction);
  const distance = (value - mode.centre) * direction;
  if (distance <= 0) return 1;
  const scale = mode.spread * Math.sqrt(1 + 1 / mode.count);
  if (scale === 0) return 0;
  return studentTUpper(distance / scale, Math.max(1, mode.count - 1));
}

/** The value whose tail probability is `p` (direction 1: above the reference mode), for the limit a report shows. */
export function valueAtTail(shape: SeriesShape, p: number, direction: 1 | -1): number {
  const mode = referenceMode(shape, direction);
  const scale = mode.spread * Math.sqrt(1 + 1 / mode.count);
  if (scale === 0 || p >= 0.5) return mode.centre;
  return mode.centre + direction * studentTUpperInverse(p, Math.max(1, mode.count - 1)) * scale;
}

/** The centre a value is judged against (its reference mode), e.g. for the change in %. */
export const centreOf = (shape: SeriesShape, direction: 1 | -1): number => referenceMode(shape, direction).centre;
