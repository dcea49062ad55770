import { charCount } from './fields.js';

/**
 * A `like` pattern: a "contains" match, ASCII case-insensitive, where `%` or `*` match any run of
 * characters, `_` or `?` match exactly one, and `\` makes the next character literal. The pattern is parsed here into
 * data; each store renders that data in its own syntax with its own escaping, so user text never reaches a query
 * language as code.
 */
type PatternToken = { kind: 'literal'; text: string } | { kind: 'anyRun' } | { kind: 'oneChar' };

export interface LikePattern {
  /** The pattern as the caller wrote it (for messages and logs). */
  source: string;
  tokens: PatternToken[];
}

export class PatternError extends Error {}

/**
 * The longest pattern accepted, in characters: twice the longest name (2,048), room for an escape before every
 * character. Longer ones are refused (400) rather than matched.
 */
export const MAX_PATTERN_LENGTH = 4096;

export const LONE_BACKSLASH = 'the pattern ends with a lone "\\"; write "\\\\" for a literal backslash';

/**
 * The length (in characters, as field limits count) of the shortest value containing a match: its literal
 * characters plus one for each `_`. A pattern longer than a field holds matches no value of it.
 */
export function shortestMatch(pattern: LikePattern): number {
  return pattern.tokens.reduce(
    (length, token) => length + (token.kind === 'literal' ? charCount(token.text) : token.kind === 'oneChar' ? 1 : 0),
    0,
  );
}

export function parseLikePattern(source: string): LikePattern {
  const tokens: PatternToken[] = [];
  let literal = '';
  const flushLiteral = (): void => {
    if (literal !== '') tokens.push({ kind: 'literal', text: literal });
    literal = '';
  };
  // Code points, so that a character outside the BMP is one character of the pattern.
  const chars = Array.from(source);
  for (let i = 0; i < chars.length; i += 1) {
    const c = chars[i] as string;
    if (c === '\\') {
      const next = chars[i + 1];
      if (next === undefined) throw new PatternError(LONE_BACKSLASH);
      literal += next;
      i += 1;
    } else if (c === '%' || c === '*') {
      flushLiteral();
      if (tokens.at(-1)?.kind !== 'anyRun') tokens.push({ kind: 'anyRun' });
    } else if (c === '_' || c === '?') {
      flushLiteral();
      tokens.push({ kind: 'oneChar' });
    } else {
      literal += c;
    }
  }
  flushLiteral();
  return { source, tokens };
}

/** ASCII lowercase only: a match folds ASCII letters and keeps every other character as it is (as SQLite's LIKE). */
const asciiLower = (text: string): string => text.replace(/[A-Z]/g, (c) => c.toLowerCase());

/**
 * The distinct trigrams of a text, by code point, ASCII-lowercased: what the stores' name indexes hold for each name
 * and look a pattern up by.
 */
export function trigramsOf(text: string): string[] {
  const chars = Array.from(asciiLower(text));
  const found = new Set<string>();
  for (let i = 0; i + 3 <= chars.length; i += 1) found.add(`${chars[i]}${chars[i + 1]}${chars[i + 2]}`);
  return [...found];
}

/**
 * The trigrams every match of the pattern holds: those of its literal runs of three characters or more. None when
 * no literal run is that long — such a pattern cannot be narrowed by a trigram index.
 */
export function patternTrigrams(pattern: LikePattern): string[] {
  const all = new Set<string>();
  for (const token of pattern.tokens) {
    if (token.kind === 'literal') for (const trigram of trigramsOf(token.text)) all.add(trigram);
  }
  return [...all];
}

/**
 * The pattern as a test of one text, with the stores' semantics: contains, ASCII case-insensitive, `_` one code
 * point, `%` any run (newlines included). For a store that narrows candidates by an index and decides in code.
 *
 * No regular expression and no backtracking: the pattern is cut at its `%` into segments (literal characters and
 * `_`), and each segment is found at its leftmost place after the one before — for a contains match the leftmost place
 * is always right, since a later one leaves the segments that follow less text. A segment is found by bit-parallel
 * matching (Shift-And: one bit per position of the segment, one pass over the text), so each character of the text is
 * read once, in O(segment length / 32) word operations: linear in the text's length, whatever the pattern.
 */
export function likeMatcher(pattern: LikePattern): (text: string) => boolean {
  const segments = segmentsOf(pattern).map(segmentMatcher);
  return (text) => {
    const chars = Array.from(asciiLower(text));
    let from = 0;
    for (const find of segments) {
      const end = find(chars, from);
      if (end < 0) return false;
      from = end;
    }
    return true;
  };
}

/** One position of a segment: a code point (ASCII-lowercased), or undefined for `_` (any one). */
type SegmentChar = string | undefined;

/** The runs between the pattern's `%`, empty runs dropped (they match anywhere). */
function segmentsOf(pattern: LikePattern): SegmentChar[][] {
  const segments: SegmentChar[][] = [[]];
  for (const token of pattern.tokens) {
    if (token.kind === 'anyRun') segments.push([]);
    else if (token.kind === 'oneChar') segments.at(-1)?.push(undefined);
    else segments.at(-1)?.push(...Array.from(asciiLower(token.text)));
  }
  return segments.filter((segment) => segment.length > 0);
}

/**
 * A finder of one segment: given the text's code points and where to start, the index just past the segment's
 * leftmost occurrence, or -1. State bit i is set when the segment's first i + 1 positions match the text ending here.
 */
function segmentMatcher(segment: SegmentChar[]): (chars: string[], from: number) => number {
  const words = Math.ceil(segment.length / 32);
  const anyChar = new Uint32Array(words);
  segment.forEach((c, i) => {
    if (c === undefined) anyChar[i >>> 5] = (anyChar[i >>> 5] as number) | (1 << (i & 31));
  });
  // The positions each character can take: its own ones and every `_`.
  const masks = new Map<string, Uint32Array>();
  segment.forEach((c, i) => {
    if (c === undefined) return;
    let mask = masks.get(c);
    if (!mask) masks.set(c, (mask = Uint32Array.from(anyChar)));
    mask[i >>> 5] = (mask[i >>> 5] as number) | (1 << (i & 31));
  });
  const lastWord = (segment.length - 1) >>> 5;
  const lastBit = 1 << ((segment.length - 1) & 31);
  const state = new Uint32Array(words);
  return (chars, from) => {
    state.fill(0);
    for (let at = from; at < chars.length; at += 1) {
      const mask = masks.get(chars[at] as string) ?? anyChar;
      let carry = 1;
      for (let w = 0; w < words; w += 1) {
        const bits = state[w] as number;
        state[w] = ((bits << 1) | carry) & (mask[w] as number);
        carry = bits >>> 31;
      }
      if (((state[lastWord] as number) & lastBit) !== 0) return at + 1;
    }
    return -1;
  };
}

/** How a query language writes a pattern's parts: its two wildcards, and a literal run with its own escaping. */
export interface PatternSyntax {
  anyRun: string;
  oneChar: string;
  literal(text: string): string;
}

/** The pattern's tokens in a syntax, in order (no leading or trailing wildcard added). */
export function renderPattern(pattern: LikePattern, syntax: PatternSyntax): string {
  return pattern.tokens
    .map((token) =>
      token.kind === 'anyRun' ? syntax.anyRun : token.kind === 'oneChar' ? syntax.oneChar : syntax.literal(token.text),
    )
    .join('');
}
