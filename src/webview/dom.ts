// Tiny DOM construction helpers for the webview: elements are built node by node with text set
// through textContent, so no string ever becomes markup (the page's CSP forbids inline anyway).

type Attrs = Record<string, string | boolean | undefined>;
type Child = Node | string | null | undefined | false;

/** Creates an element; `attrs` values of false/undefined are skipped, true sets an empty attribute. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (name === 'class') element.className = String(value);
    else element.setAttribute(name, value === true ? '' : value);
  }
  append(element, ...children);
  return element;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
  }
}

/** Text only a screen reader reads (paired with an icon that carries the meaning visually). */
export function srOnly(text: string): HTMLSpanElement {
  return h('span', { class: 'sr-only' }, text);
}

/** A button that runs `onClick`; keyboard activation comes with the element. */
export function button(
  label: string | Node,
  onClick: (event: MouseEvent) => void,
  attrs: Attrs = {},
): HTMLButtonElement {
  const el = h('button', { type: 'button', ...attrs }, label);
  el.addEventListener('click', onClick);
  return el;
}

/** True when a scroller shows its end (within a small slack), so new content should keep it there. */
export function isScrolledToEnd(scroller: HTMLElement): boolean {
  return scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 32;
}

/** An id usable inside an element id (host ids are free text). */
export function cssId(id: string): string {
  return id.replace(/[^A-Za-z0-9_-]/g, '_');
}
