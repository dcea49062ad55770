/**
 * Stored names — pipelines, builds, tests, components, paths, tags, context fields — are text that any writer chose.
 * Shown in a page, the bidirectional formatting characters one may hold (U+202E RIGHT-TO-LEFT OVERRIDE, the isolates
 * U+2066–U+2069, …) or its right-to-left letters must not reorder the page's own words around it ("Noise by machine
 * class" drawn "ssalc enihcam yb esioN" after a pipeline `release\u202E`). So each name is shown isolated: in a <bdi>
 * element (frames.ts, and the client's `h`), or between FSI and PDI where no element can be (a page's title).
 *
 * Isolation holds only if the name closes what it opens and closes nothing it did not open: a PDI of its own with no
 * opener in the name would end the isolate around it, and an opener left open would swallow the PDI that ends it.
 * `balanced` drops the one and closes the other (both invisible: the name looks the same), and turns paragraph
 * separators, which end every isolate, into spaces. Embeddings and overrides (LRE, RLE, LRO, RLO) left open end with
 * the isolate.
 *
 * Plain module: no DOM, no Node (the server's frames and the browser's modules both use it).
 */

const FSI = '\u2068';
const PDI = '\u2069';
/** LRI, RLI, FSI. */
const ISOLATE_OPENERS = new Set(['\u2066', '\u2067', '\u2068']);
/** Characters of bidi class B, which end the paragraph — and with it every isolate and embedding. */
const PARAGRAPH_SEPARATORS = new Set(['\n', '\r', '\u001C', '\u001D', '\u001E', '\u0085', '\u2029']);

/**
 * Characters outside printable ASCII: only text holding one can reorder the text around it (ASCII has no
 * right-to-left letter and no bidi control). What the client isolates.
 */
const BEYOND_ASCII = /[^\u0020-\u007E]/;

/** True when `text` may reorder what is around it, so that it must be shown isolated. */
export const needsIsolation = (text: string): boolean => BEYOND_ASCII.test(text);

/** `text` closing every isolate it opens and closing none it did not open, on one paragraph: see above. */
export function balanced(text: string): string {
  let open = 0;
  let out = '';
  for (const char of text) {
    if (PARAGRAPH_SEPARATORS.has(char)) {
      out += ' ';
      continue;
    }
    if (ISOLATE_OPENERS.has(char)) open += 1;
    else if (char === PDI) {
      if (open === 0) continue;
      open -= 1;
    }
    out += char;
  }
  return out + PDI.repeat(open);
}

/** A name inside plain text (a page title, a plot's label): between FSI and PDI, balanced. */
export const isolated = (text: string): string => (needsIsolation(text) ? `${FSI}${balanced(text)}${PDI}` : text);
