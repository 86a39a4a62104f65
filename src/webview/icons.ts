// Inline SVG icons drawn in the spirit of VS Code's codicons (16×16, currentColor), built with
// createElementNS so they need no font or image and pass the page's CSP.

const SVG_NS = 'http://www.w3.org/2000/svg';

type Shape = [tag: 'path' | 'circle' | 'rect', attrs: Record<string, string>];

const ICONS = {
  send: [['path', { d: 'M2.5 2.5l11 5.5-11 5.5 1.8-5.5zM4.3 8h4.2' }]],
  stop: [['rect', { x: '4', y: '4', width: '8', height: '8', rx: '1', class: 'fill' }]],
  check: [['path', { d: 'M3 8.5l3 3 7-7' }]],
  close: [['path', { d: 'M4 4l8 8M12 4l-8 8' }]],
  ok: [['circle', { cx: '8', cy: '8', r: '6.5' }], ['path', { d: 'M5.2 8.3l1.9 1.9 3.8-4.1' }]],
  error: [['circle', { cx: '8', cy: '8', r: '6.5' }], ['path', { d: 'M5.9 5.9l4.2 4.2M10.1 5.9l-4.2 4.2' }]],
  denied: [['circle', { cx: '8', cy: '8', r: '6.5' }], ['path', { d: 'M3.4 12.6l9.2-9.2' }]],
  pending: [['circle', { cx: '8', cy: '8', r: '6.5' }], ['path', { d: 'M8 4.6V8l2.4 1.6' }]],
  spinner: [['path', { d: 'M8 1.8A6.2 6.2 0 1 1 1.8 8' }]],
  copy: [['rect', { x: '5.5', y: '5.5', width: '8', height: '8', rx: '1' }], ['path', { d: 'M3.5 10.5h-.2a.8.8 0 0 1-.8-.8V3.3c0-.4.4-.8.8-.8h6.4c.4 0 .8.4.8.8v.2' }]],
  sparkle: [['path', { d: 'M8 1.5l1.5 4.6 4.9 1.9-4.9 1.9L8 14.5l-1.5-4.6L1.6 8l4.9-1.9z', class: 'fill' }]],
  account: [['circle', { cx: '8', cy: '5.4', r: '2.8' }], ['path', { d: 'M2.6 14.2c.6-2.9 2.8-4.4 5.4-4.4s4.8 1.5 5.4 4.4' }]],
  bolt: [['path', { d: 'M9.2 1.5L3.6 9h4.1l-1 5.5L12.4 7H8.3z', class: 'fill' }]],
  add: [['path', { d: 'M8 3v10M3 8h10' }]],
  retry: [['path', { d: 'M13 8a5 5 0 1 1-1.6-3.7M13.2 2.3v3h-3' }]],
  warning: [['path', { d: 'M8 1.8l6.6 12H1.4zM8 6.3v3.6M8 11.8v.2' }]],
  diff: [['path', { d: 'M4 1.5h5.2l2.8 2.8v10.2H4zM8 6v4M6 8h4M6 12h4' }]],
  chevron: [['path', { d: 'M6 3.5l4.5 4.5L6 12.5' }]],
  tools: [['path', { d: 'M10.3 2.2a3.2 3.2 0 0 0-3.9 4.2L2.2 10.6a1.3 1.3 0 0 0 1.9 1.9l4.2-4.2a3.2 3.2 0 0 0 4.2-3.9l-2 2-1.9-.3-.3-1.9z' }]],
  key: [['circle', { cx: '5', cy: '10.5', r: '3' }], ['path', { d: 'M7.2 8.4L13.5 2.1M11.2 4.4l1.6 1.6M9.6 6l1.4 1.4' }]],
  gear: [['circle', { cx: '8', cy: '8', r: '2.2' }], ['path', { d: 'M8 1.5v2M8 12.5v2M1.5 8h2M12.5 8h2M3.4 3.4l1.4 1.4M11.2 11.2l1.4 1.4M3.4 12.6l1.4-1.4M11.2 4.8l1.4-1.4' }]],
  shield: [['path', { d: 'M8 1.5l5.2 2v4.1c0 3.2-2.2 5.8-5.2 6.9-3-1.1-5.2-3.7-5.2-6.9V3.5z' }]],
  // chat history, context and messages (issue 18)
  edit: [['path', { d: 'M10.8 2.4l2.8 2.8-7.9 7.9-3.4.6.6-3.4zM9.4 3.8l2.8 2.8' }]],
  history: [['circle', { cx: '8', cy: '8', r: '6' }], ['path', { d: 'M8 4.8V8l2.2 1.5' }]],
  trash: [['path', { d: 'M3 4.5h10M6.3 4.5V3h3.4v1.5M4.4 4.5l.7 9h5.8l.7-9M6.9 7v4.2M9.1 7v4.2' }]],
  attach: [['path', { d: 'M10.5 4.8l-4.6 4.6a1.1 1.1 0 0 0 1.6 1.6l5-5a2.4 2.4 0 0 0-3.4-3.4l-5.2 5.2a3.7 3.7 0 0 0 5.2 5.2l4.3-4.3' }]],
  search: [['circle', { cx: '7', cy: '7', r: '4.3' }], ['path', { d: 'M10.2 10.2l3.6 3.6' }]],
  arrowDown: [['path', { d: 'M8 2.5v10.5M3.8 9l4.2 4.2L12.2 9' }]],
  file: [['path', { d: 'M4 1.5h5.2l2.8 2.8v10.2H4zM9 1.5v3h3' }]],
  selection: [['path', { d: 'M2.5 4h11M2.5 8h7M2.5 12h9' }]],
  dropdown: [['path', { d: 'M4.5 6.5L8 10l3.5-3.5' }]],
  undo: [['path', { d: 'M5.5 3.5L2.5 6.5l3 3M2.8 6.5h6.7a4 4 0 0 1 0 8H7' }]],
  redo: [['path', { d: 'M10.5 3.5l3 3-3 3M13.2 6.5H6.5a4 4 0 0 0 0 8H9' }]],
} satisfies Record<string, Shape[]>;

export type IconName = keyof typeof ICONS;

/** A decorative icon (aria-hidden): pair it with visible or screen-reader text. */
export function icon(name: IconName, extraClass = ''): SVGSVGElement {
  const svg = document.createElementNS(SVG_NS, 'svg');
  svg.setAttribute('viewBox', '0 0 16 16');
  svg.setAttribute('width', '16');
  svg.setAttribute('height', '16');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('focusable', 'false');
  svg.setAttribute('class', `icon icon-${name}${extraClass ? ` ${extraClass}` : ''}`);
  for (const [tag, attrs] of ICONS[name] as Shape[]) {
    const shape = document.createElementNS(SVG_NS, tag);
    for (const [key, value] of Object.entries(attrs)) shape.setAttribute(key, value);
    svg.appendChild(shape);
  }
  return svg;
}
