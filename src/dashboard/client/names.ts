import { needsIsolation } from '../bidi.js';
import { h } from './dom.js';

/**
 * A test's name as the tables show it: on one line where it fits, else broken only where its parts meet — before the
 * `[` of its parameters, after a `::`, a `/` or a `.` (not a decimal point, nor `.py`) — never a few characters a line: each part
 * is a span the styles keep whole (white-space: nowrap), the parts are separated by <wbr>, and a table wider than the
 * page scrolls. Neither is text: the name reads, copies and searches as it is.
 *
 * A name that needs isolation (a bidi control, right-to-left letters: dom.ts) goes in whole, as any other text: its
 * <bdi> must hold it in one piece for the isolation to hold.
 */

/** Where a break may go: before `[`, after `::` or `/`, after a `.` but that of a number or of `.py`. */
const BREAKS = /(?=\[)|(?<=::|\/)|(?<=\.)(?!\d|py\b)/;

export function testName(name: string): HTMLElement {
  if (needsIsolation(name)) return h('span', { class: 'test-name' }, name);
  const parts = name.split(BREAKS).filter((part) => part !== '');
  return h(
    'span',
    { class: 'test-name' },
    parts.flatMap((part, i) => [i === 0 ? null : h('wbr'), h('span', { class: 'part' }, part)]),
  );
}
