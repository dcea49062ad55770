/**
 * How deep a JSON text may nest objects and arrays. Parsing, validating, storing and serialising a value walk it
 * recursively; a body nested thousands of levels deep (a few KB) would exhaust the stack of any of them. No record
 * needs more than a few levels — only a session's tags may hold JSON values — so a text deeper than this is refused,
 * before anything recursive reads it.
 */
export const MAX_JSON_DEPTH = 64;

/** A JSON text that nests too deeply: the top-level member where it does (undefined: not inside an object member). */
export interface TooDeep {
  member: string | undefined;
}

/**
 * Whether `text` nests more than `max` objects and arrays inside one another, read in one pass without recursion
 * (strings skipped, so brackets inside them do not count). The text need not be valid JSON: only the depth is
 * checked here, the parser says what else is wrong.
 */
export function nestsTooDeep(text: string, max = MAX_JSON_DEPTH): TooDeep | undefined {
  // Nesting past `max` needs more than `max` opening brackets: most texts have far fewer, and a native regular
  // expression (linear: its two classes are disjoint) says so faster than the scan below.
  if (!openers(max + 1).test(text)) return undefined;
  let depth = 0;
  /** At depth 1 of an object, whether the next string is a member's name. */
  let expectName = false;
  /** Where the current top-level member's name starts and ends (its quotes included); decoded only if reported. */
  let member: [number, number] | undefined;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      const start = i;
      for (i += 1; i < text.length && text.charCodeAt(i) !== 0x22; i += 1) if (text.charCodeAt(i) === 0x5c) i += 1;
      if (depth === 1 && expectName) {
        member = [start, i + 1];
        expectName = false;
      }
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      depth += 1;
      if (depth > max) return { member: member && memberName(text.slice(...member)) };
      if (depth === 1) expectName = c === 0x7b;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth -= 1;
    } else if (c === 0x2c /* , */ && depth === 1) {
      expectName = true;
      member = undefined;
    }
  }
  return undefined;
}

const OPENERS = new Map<number, RegExp>();
/** A regular expression finding at least `count` of `{` and `[` (strings not told apart: an upper bound). */
function openers(count: number): RegExp {
  let regex = OPENERS.get(count);
  if (!regex) OPENERS.set(count, (regex = new RegExp(`^(?:[^{[]*[{[]){${count}}`)));
  return regex;
}

/** A member name as written (a JSON string literal), decoded; as written when it does not decode. */
function memberName(literal: string): string {
  try {
    return JSON.parse(literal) as string;
  } catch {
    return literal.slice(1, -1);
  }
}
