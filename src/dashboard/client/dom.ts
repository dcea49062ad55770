import { balanced, needsIsolation } from '../bidi.js';
import { ApiError } from './api.js';

/** Attribute values; null, undefined and false leave the attribute out. */
export type Attrs = Record<string, string | number | boolean | null | undefined>;
/** What an element may hold: nodes and text; null, undefined and false are skipped. */
export type Child = Node | string | number | null | undefined | false;

/**
 * Text as a page shows it. Text that could reorder the words around it — a stored name holding a bidi control or
 * right-to-left letters — goes in a <bdi> of its own, balanced (../bidi.ts); other text as it is. Every text of the
 * pages passes here: a name is isolated wherever it is shown, provided it is a child of its own (a sentence holding
 * names is written as a list of children, each name one of them).
 */
function textNode(text: string): Node {
  if (!needsIsolation(text)) return document.createTextNode(text);
  const isolate = document.createElement('bdi');
  isolate.textContent = balanced(text);
  return isolate;
}

/**
 * An element with its attributes (`class`, `href`, `data-*`, …) and children; text always goes in as text, never HTML,
 * each text child isolated when it could reorder the page's words around it (textNode).
 */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Array<Child | readonly Child[]>
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value !== null && value !== undefined && value !== false) element.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : textNode(String(child)));
  }
  return element;
}

/** The `.content` of a section the server rendered. */
export function contentOf(sectionId: string): Element {
  const content = document.querySelector(`#${sectionId} .content`);
  if (!content) throw new Error(`the page has no section #${sectionId}`);
  return content;
}

/** Replaces what a section shows. */
export function fill(sectionId: string, ...nodes: Array<Node | null | ReadonlyArray<Node | null>>): Element {
  const content = contentOf(sectionId);
  content.replaceChildren(...nodes.flat().filter((node) => node !== null));
  return content;
}

export const errorNode = (error: unknown): HTMLParagraphElement =>
  h(
    'p',
    { class: 'error' },
    error instanceof ApiError ? `The API answered ${error.status}: ${error.message}` : String(error),
  );

/** The <main> the server rendered, whose data-* attributes say which page this is. */
export function appMain(): HTMLElement {
  const main = document.getElementById('app');
  if (!main) throw new Error('the page has no <main id="app">');
  return main;
}
