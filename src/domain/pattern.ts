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

export const LONE_BACKSLASH = 'the pattern ends with a lone "\\"; write "\\\\" for a literal backslash';

/**
 * The length (in UTF-16 code units, as field limits count) of the shortest value containing a match: its literal
 * characters plus one for each `_`. A pattern longer than a field holds matches no value of it.
 */
export function shortestMatch(pattern: LikePattern): number {
  return pattern.tokens.reduce(
    (length, token) => length + (token.kind === 'literal' ? token.text.length : token.kind === 'oneChar' ? 1 : 0),
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
