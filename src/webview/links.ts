// File paths in answers become links: `src/app.ts`, src/app.ts:42, app.ts#L42 — in plain text and in
// inline code. Clicking asks the host, which opens the file only when it is inside the workspace.

/** Extensions a bare file name (no folder) must have to count as a path, so "e.g." stays text. */
const KNOWN_EXTENSIONS = new Set(
  ('ts tsx mts cts js jsx mjs cjs json jsonc md mdx txt py pyi rs go java kt kts scala c h cc cpp cxx hpp hh cs fs rb php swift m mm ' +
    'sh bash zsh fish ps1 bat cmd yml yaml toml ini cfg conf env lock css scss sass less html htm xml svg vue svelte astro sql graphql gql ' +
    'proto gradle cmake mk dockerfile tf hcl lua dart ex exs erl hs clj r jl zig nim ml mli sol wasm ipynb csv tsv log gitignore').split(' '),
);

/** A path with an optional :line(:column) or #Lline: letters, digits, `._-@+` and `/`. */
const PATH_TOKEN = /(?<![\w/.@:-])((?:\.{1,2}\/|\/)?(?:[\w@+.-]+\/)*[\w@+-][\w@+.-]*)(?:(?::(\d+)(?::\d+)?)|#L(\d+)(?:-L?\d+)?)?(?![\w/])/g;

export interface PathMatch {
  index: number;
  length: number;
  path: string;
  line?: number;
}

function isPath(candidate: string): boolean {
  if (/^\d/.test(candidate.split('/').pop() ?? '') && !candidate.includes('/')) return false;
  const name = candidate.split('/').pop() ?? '';
  const dot = name.lastIndexOf('.');
  const extension = dot > 0 ? name.slice(dot + 1).toLowerCase() : name.toLowerCase();
  if (!/[A-Za-z]/.test(name)) return false;
  if (candidate.includes('/')) return dot > 0 && /^[A-Za-z][A-Za-z0-9]{0,9}$/.test(extension) && !candidate.startsWith('//');
  return dot > 0 && KNOWN_EXTENSIONS.has(extension);
}

/** The paths in a piece of text, left to right. */
export function findPaths(text: string): PathMatch[] {
  const found: PathMatch[] = [];
  for (const match of text.matchAll(PATH_TOKEN)) {
    let path = match[1]!;
    let length = match[0].length;
    // A sentence's full stop is not part of the name.
    while (path.endsWith('.') && !match[2] && !match[3]) {
      path = path.slice(0, -1);
      length--;
    }
    if (!isPath(path)) continue;
    // Part of a URL (`https://x.org/a.js`) is left to the URL's own link.
    const before = text.slice(Math.max(0, match.index! - 3), match.index!);
    if (before.endsWith('://') || before.endsWith(':/')) continue;
    const line = Number(match[2] ?? match[3]);
    found.push({ index: match.index!, length, path, ...(Number.isInteger(line) && line >= 1 ? { line } : {}) });
  }
  return found;
}

function fileLink(path: string, line: number | undefined, children: Node[]): HTMLAnchorElement {
  const link = document.createElement('a');
  link.href = '#';
  link.className = 'link file';
  link.dataset.path = path;
  if (line !== undefined) link.dataset.line = String(line);
  link.title = line !== undefined ? `Open ${path}, line ${line}` : `Open ${path}`;
  link.append(...children);
  return link;
}

/** Wraps the paths in `root`'s text (outside links and code blocks) in file links, in place. */
export function linkifyPaths(root: ParentNode): void {
  const walker = document.createTreeWalker(root as Node, NodeFilter.SHOW_TEXT | NodeFilter.SHOW_ELEMENT, {
    acceptNode: (node) => {
      if (node.nodeType === Node.ELEMENT_NODE) {
        const tag = (node as Element).tagName;
        return tag === 'A' || tag === 'PRE' || tag === 'BUTTON' ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_SKIP;
      }
      return NodeFilter.FILTER_ACCEPT;
    },
  });
  const texts: Text[] = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) texts.push(node as Text);
  for (const text of texts) {
    const parent = text.parentElement;
    // Inline code that is exactly one path links as a whole (the code styling stays inside).
    if (parent?.tagName === 'CODE' && parent.childNodes.length === 1) {
      const [only] = findPaths(text.data);
      if (only && only.index === 0 && only.length === text.data.length) {
        parent.replaceWith(fileLink(only.path, only.line, [parent.cloneNode(true)]));
      }
      continue;
    }
    if (parent?.tagName === 'CODE') continue;
    const matches = findPaths(text.data);
    if (matches.length === 0) continue;
    const pieces: Node[] = [];
    let at = 0;
    for (const match of matches) {
      if (match.index > at) pieces.push(document.createTextNode(text.data.slice(at, match.index)));
      pieces.push(fileLink(match.path, match.line, [document.createTextNode(text.data.slice(match.index, match.index + match.length))]));
      at = match.index + match.length;
    }
    if (at < text.data.length) pieces.push(document.createTextNode(text.data.slice(at)));
    text.replaceWith(...pieces);
  }
}
