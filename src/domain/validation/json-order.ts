/**
 * The members of a JSON object in the order its text writes them. A parsed JS object cannot tell: it lists
 * integer-like keys ("2", "10") first, in numeric order. Session tags keep the submitted order,
 * so the description's key order is read from the request text.
 */
export interface JsonMember {
  key: string;
  /** The member's value as written. */
  source: string;
}

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);

/** Members of the top-level object of `text`, which must be valid JSON (already through JSON.parse); undefined if not an object. */
export function jsonMembers(text: string): JsonMember[] | undefined {
  let i = 0;
  const skipWhitespace = (): void => {
    while (WHITESPACE.has(text[i] ?? '')) i += 1;
  };
  const skipString = (): void => {
    i += 1;
    while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i += 1;
  };
  /** Skips one value: a string, a number or literal, or a whole object or array. */
  const skipValue = (): void => {
    let depth = 0;
    for (;;) {
      const c = text[i];
      if (c === undefined) return;
      if (depth === 0 && (c === ',' || c === '}' || c === ']' || WHITESPACE.has(c))) return;
      if (c === '"') {
        skipString();
        if (depth === 0) return;
        continue;
      }
      i += 1;
      if (c === '{' || c === '[') depth += 1;
      else if ((c === '}' || c === ']') && --depth === 0) return;
    }
  };

  skipWhitespace();
  if (text[i] !== '{') return undefined;
  i += 1;
  const members: JsonMember[] = [];
  skipWhitespace();
  while (text[i] === '"') {
    const keyStart = i;
    skipString();
    const key = JSON.parse(text.slice(keyStart, i)) as string;
    skipWhitespace();
    i += 1; // the colon
    skipWhitespace();
    const valueStart = i;
    skipValue();
    members.push({ key, source: text.slice(valueStart, i) });
    skipWhitespace();
    if (text[i] === ',') i += 1;
    skipWhitespace();
  }
  return members;
}

/** The keys of the object `text` holds, in written order (a repeated key where it first appears, as JSON.parse places it). */
export function jsonKeysInWrittenOrder(text: string): string[] | undefined {
  const members = jsonMembers(text);
  return members && [...new Set(members.map((m) => m.key))];
}
