// A small Markdown parser for model answers: text in, a plain syntax tree out (no HTML, no DOM),
// so the renderer can build nodes whose text never becomes markup. Raw HTML stays literal text.

export type LinkTarget = { kind: 'external'; url: string } | { kind: 'file'; path: string; line?: number };

export type Inline =
  | { t: 'text'; text: string }
  | { t: 'code'; text: string }
  | { t: 'strong'; children: Inline[] }
  | { t: 'em'; children: Inline[] }
  | { t: 'del'; children: Inline[] }
  | { t: 'link'; target: LinkTarget; children: Inline[] }
  | { t: 'br' };

export type Align = 'left' | 'center' | 'right' | null;

export interface ListItem {
  /** Task list state (`- [x]`), undefined for a plain item. */
  checked?: boolean;
  blocks: Block[];
}

export type Block =
  | { t: 'paragraph'; inlines: Inline[] }
  | { t: 'heading'; level: number; inlines: Inline[] }
  /** `closed` is false while a streamed fence has not been closed yet. */
  | { t: 'code'; lang: string; text: string; closed: boolean }
  | { t: 'list'; ordered: boolean; start: number; items: ListItem[] }
  | { t: 'quote'; blocks: Block[] }
  | { t: 'hr' }
  | { t: 'table'; align: Align[]; header: Inline[][]; rows: Inline[][][] };

const FENCE_OPEN = /^( {0,3})(`{3,}|~{3,})(.*)$/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const HR = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const LIST_ITEM = /^( *)([-*+]|\d{1,9}[.)])([ \t]+|$)(.*)$/;
const TABLE_SEPARATOR = /^ {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;
const TASK = /^\[([ xX])\][ \t]+/;

/** Parses a whole (possibly still streaming) Markdown document. */
export function parseMarkdown(source: string): Block[] {
  const lines = source.replace(/\r\n?/g, '\n').replace(/\t/g, '    ').split('\n');
  return parseBlocks(lines);
}

function isBlank(line: string): boolean {
  return line.trim() === '';
}

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

function startsBlock(line: string): boolean {
  return FENCE_OPEN.test(line) || HEADING.test(line) || HR.test(line) || QUOTE.test(line) || LIST_ITEM.test(line);
}

function parseBlocks(lines: string[]): Block[] {
  const blocks: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] as string;
    if (isBlank(line)) {
      i++;
      continue;
    }

    const fence = FENCE_OPEN.exec(line);
    if (fence && !(fence[2]!.startsWith('`') && (fence[3] ?? '').includes('`'))) {
      const indent = fence[1]!.length;
      const marker = fence[2]!;
      const lang = (fence[3] ?? '').trim().split(/\s+/)[0] ?? '';
      const body: string[] = [];
      let closed = false;
      i++;
      while (i < lines.length) {
        const current = lines[i] as string;
        const close = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(current);
        if (close && close[1]![0] === marker[0] && close[1]!.length >= marker.length) {
          closed = true;
          i++;
          break;
        }
        body.push(current.slice(Math.min(indent, indentOf(current))));
        i++;
      }
      blocks.push({ t: 'code', lang, text: body.join('\n'), closed });
      continue;
    }

    const heading = HEADING.exec(line);
    if (heading) {
      blocks.push({ t: 'heading', level: heading[1]!.length, inlines: parseInline(heading[2] ?? '') });
      i++;
      continue;
    }

    if (HR.test(line)) {
      blocks.push({ t: 'hr' });
      i++;
      continue;
    }

    if (QUOTE.test(line)) {
      const inner: string[] = [];
      while (i < lines.length && !isBlank(lines[i] as string)) {
        const quoted = QUOTE.exec(lines[i] as string);
        if (quoted) inner.push(quoted[1] ?? '');
        else if (startsBlock(lines[i] as string)) break;
        else inner.push(lines[i] as string); // lazy continuation of a quoted paragraph
        i++;
      }
      blocks.push({ t: 'quote', blocks: parseBlocks(inner) });
      continue;
    }

    if (LIST_ITEM.test(line)) {
      const [list, next] = parseList(lines, i);
      blocks.push(list);
      i = next;
      continue;
    }

    if (line.includes('|') && i + 1 < lines.length && TABLE_SEPARATOR.test(lines[i + 1] as string) && (lines[i + 1] as string).includes('-')) {
      const header = splitRow(line);
      const align = splitRow(lines[i + 1] as string).map(alignOf);
      const rows: Inline[][][] = [];
      i += 2;
      while (i < lines.length && !isBlank(lines[i] as string) && (lines[i] as string).includes('|')) {
        rows.push(splitRow(lines[i] as string).map((cell) => parseInline(cell)));
        i++;
      }
      blocks.push({ t: 'table', align, header: header.map((cell) => parseInline(cell)), rows });
      continue;
    }

    const paragraph: string[] = [];
    while (i < lines.length && !isBlank(lines[i] as string) && (paragraph.length === 0 || !startsBlock(lines[i] as string))) {
      paragraph.push((lines[i] as string).trim());
      i++;
    }
    blocks.push({ t: 'paragraph', inlines: parseInline(paragraph.join('\n')) });
  }
  return blocks;
}

function parseList(lines: string[], from: number): [Block, number] {
  const first = LIST_ITEM.exec(lines[from] as string)!;
  const baseIndent = first[1]!.length;
  const ordered = /\d/.test(first[2]!);
  const start = ordered ? Number.parseInt(first[2]!, 10) : 1;
  const items: ListItem[] = [];
  let i = from;
  while (i < lines.length) {
    const match = LIST_ITEM.exec(lines[i] as string);
    if (!match || match[1]!.length > baseIndent + 3 || /\d/.test(match[2]!) !== ordered) break;
    const spacing = match[3]!.length;
    const contentIndent = match[1]!.length + match[2]!.length + (spacing >= 1 && spacing <= 4 ? spacing : 1);
    let firstLine = match[4] ?? '';
    let checked: boolean | undefined;
    const task = TASK.exec(firstLine);
    if (task) {
      checked = task[1] !== ' ';
      firstLine = firstLine.slice(task[0].length);
    }
    const body: string[] = [firstLine];
    i++;
    while (i < lines.length) {
      const line = lines[i] as string;
      if (isBlank(line)) {
        let j = i + 1;
        while (j < lines.length && isBlank(lines[j] as string)) j++;
        if (j < lines.length && indentOf(lines[j] as string) >= contentIndent) {
          body.push('');
          i++;
          continue;
        }
        break;
      }
      const indent = indentOf(line);
      if (indent >= contentIndent) body.push(line.slice(contentIndent));
      else if (LIST_ITEM.test(line) && indent > baseIndent) body.push(line.slice(indent)); // loosely indented sub-list
      else if (LIST_ITEM.test(line) || startsBlock(line)) break;
      else body.push(line.trim()); // lazy continuation
      i++;
    }
    items.push(checked === undefined ? { blocks: parseBlocks(body) } : { checked, blocks: parseBlocks(body) });
    // Blank lines between items keep the list going when another item of the same kind follows.
    let j = i;
    while (j < lines.length && isBlank(lines[j] as string)) j++;
    const next = j < lines.length ? LIST_ITEM.exec(lines[j] as string) : null;
    if (next && next[1]!.length <= baseIndent + 3 && /\d/.test(next[2]!) === ordered) i = j;
    else break;
  }
  return [{ t: 'list', ordered, start, items }, i];
}

function splitRow(line: string): string[] {
  let row = line.trim();
  if (row.startsWith('|')) row = row.slice(1);
  if (row.endsWith('|') && !row.endsWith('\\|')) row = row.slice(0, -1);
  const cells: string[] = [];
  let cell = '';
  let inCode = false;
  for (let k = 0; k < row.length; k++) {
    const ch = row[k] as string;
    if (ch === '\\' && row[k + 1] === '|') {
      cell += '|';
      k++;
    } else if (ch === '`') {
      inCode = !inCode;
      cell += ch;
    } else if (ch === '|' && !inCode) {
      cells.push(cell.trim());
      cell = '';
    } else cell += ch;
  }
  cells.push(cell.trim());
  return cells;
}

function alignOf(cell: string): Align {
  const left = cell.startsWith(':');
  const right = cell.endsWith(':');
  return left && right ? 'center' : right ? 'right' : left ? 'left' : null;
}

// ───────────────────────────── inline ─────────────────────────────

const ESCAPABLE = /[\\`*_{}[\]()#+\-.!|~<>"'$&]/;
const BARE_URL = /^https?:\/\/[^\s<>"]*[^\s<>"'.,:;!?)\]}*_~]/i;

/** Classifies a link destination: http(s) opens outside, a path opens in the editor, anything else is not a link. */
export function classifyLink(raw: string): LinkTarget | undefined {
  const url = raw.trim();
  if (/^https?:\/\/[^\s]+$/i.test(url)) return { kind: 'external', url };
  // Other schemes (javascript:, data:, command:, vscode:, file:), protocol-relative and in-page
  // anchors are not followed: the webview never navigates and only opens workspace files.
  if (url === '' || /^[a-z][a-z0-9+.-]*:/i.test(url) || url.startsWith('//') || url.startsWith('#')) return undefined;
  let path = url;
  let line: number | undefined;
  const anchor = /#L(\d+)(?:-L?\d+)?$/i.exec(path);
  const suffix = /:(\d+)(?::\d+)?$/.exec(path);
  if (anchor) {
    line = Number(anchor[1]);
    path = path.slice(0, anchor.index);
  } else if (suffix) {
    line = Number(suffix[1]);
    path = path.slice(0, suffix.index);
  }
  try {
    path = decodeURI(path);
  } catch {
    // keep the path as written
  }
  if (path.startsWith('./')) path = path.slice(2);
  if (path === '' || /[\0\n]/.test(path)) return undefined;
  return line !== undefined && line >= 1 ? { kind: 'file', path, line } : { kind: 'file', path };
}

/** Parses inline Markdown; a newline inside a paragraph is a line break (as in chat). */
export function parseInline(src: string): Inline[] {
  const out: Inline[] = [];
  let buffer = '';
  const flush = (): void => {
    if (buffer) out.push({ t: 'text', text: buffer });
    buffer = '';
  };
  const push = (node: Inline): void => {
    flush();
    out.push(node);
  };

  let i = 0;
  while (i < src.length) {
    const ch = src[i] as string;

    if (ch === '\\' && i + 1 < src.length) {
      const next = src[i + 1] as string;
      if (next === '\n') {
        push({ t: 'br' });
        i += 2;
        continue;
      }
      if (ESCAPABLE.test(next)) {
        buffer += next;
        i += 2;
        continue;
      }
    }

    if (ch === '\n') {
      push({ t: 'br' });
      i++;
      continue;
    }

    if (ch === '`') {
      const run = runLength(src, i, '`');
      const close = findBacktickRun(src, i + run, run);
      if (close >= 0) {
        let code = src.slice(i + run, close).replace(/\n/g, ' ');
        if (code.length > 2 && code.startsWith(' ') && code.endsWith(' ') && code.trim() !== '') code = code.slice(1, -1);
        push({ t: 'code', text: code });
        i = close + run;
      } else {
        buffer += src.slice(i, i + run);
        i += run;
      }
      continue;
    }

    if (ch === '[' || (ch === '!' && src[i + 1] === '[')) {
      const image = ch === '!';
      const link = parseLinkAt(src, image ? i + 1 : i);
      if (link) {
        const target = classifyLink(link.url);
        // Images are never loaded (the CSP forbids remote images): their alt text links to them.
        const label = image ? [{ t: 'text', text: link.text || link.url } as Inline] : parseInline(link.text);
        if (target) push({ t: 'link', target, children: label });
        else {
          flush();
          out.push(...label);
        }
        i = link.end;
        continue;
      }
    }

    if (ch === '<') {
      const auto = /^<(https?:\/\/[^\s<>]+)>/i.exec(src.slice(i));
      if (auto) {
        push({ t: 'link', target: { kind: 'external', url: auto[1]! }, children: [{ t: 'text', text: auto[1]! }] });
        i += auto[0].length;
        continue;
      }
    }

    if ((ch === 'h' || ch === 'H') && (i === 0 || /[\s(]/.test(src[i - 1] as string))) {
      const bare = BARE_URL.exec(src.slice(i));
      if (bare) {
        push({ t: 'link', target: { kind: 'external', url: bare[0] }, children: [{ t: 'text', text: bare[0] }] });
        i += bare[0].length;
        continue;
      }
    }

    if (ch === '*' || ch === '_' || ch === '~') {
      const emphasis = parseEmphasisAt(src, i);
      if (emphasis) {
        push(emphasis.node);
        i = emphasis.end;
        continue;
      }
      const run = runLength(src, i, ch);
      buffer += src.slice(i, i + run);
      i += run;
      continue;
    }

    buffer += ch;
    i++;
  }
  flush();
  return out;
}

function runLength(src: string, at: number, ch: string): number {
  let n = 0;
  while (src[at + n] === ch) n++;
  return n;
}

function findBacktickRun(src: string, from: number, length: number): number {
  let j = src.indexOf('`', from);
  while (j >= 0) {
    const run = runLength(src, j, '`');
    if (run === length) return j;
    j = src.indexOf('`', j + run);
  }
  return -1;
}

const WORD = /[\p{L}\p{N}]/u;

function parseEmphasisAt(src: string, i: number): { node: Inline; end: number } | undefined {
  const ch = src[i] as string;
  const run = runLength(src, i, ch);
  const prev = i > 0 ? (src[i - 1] as string) : ' ';
  if (ch === '_' && WORD.test(prev)) return undefined; // snake_case stays text
  if (ch === '~') {
    if (run !== 2) return undefined;
    const close = findClosing(src, i + 2, '~', 2);
    return close === undefined ? undefined : { node: { t: 'del', children: parseInline(src.slice(i + 2, close)) }, end: close + 2 };
  }
  const size = run >= 2 ? 2 : 1;
  const open = i + size;
  if (open >= src.length || /\s/.test(src[open] as string)) return undefined;
  const close = findClosing(src, open, ch, size);
  if (close === undefined) {
    // `**` with no closing pair may still open a single `*` emphasis (`**a*` is rare; ignore).
    return undefined;
  }
  const inner = parseInline(src.slice(open, close));
  return { node: size === 2 ? { t: 'strong', children: inner } : { t: 'em', children: inner }, end: close + size };
}

/** Where the delimiter run of `size` that closes an emphasis opened before `from` starts. */
function findClosing(src: string, from: number, ch: string, size: number): number | undefined {
  let j = from;
  while (j < src.length) {
    const c = src[j] as string;
    if (c === '\\') {
      j += 2;
      continue;
    }
    if (c === '`') {
      const run = runLength(src, j, '`');
      const close = findBacktickRun(src, j + run, run);
      j = close >= 0 ? close + run : j + run;
      continue;
    }
    if (c === '\n' && src[j + 1] === '\n') return undefined;
    if (c === ch) {
      const run = runLength(src, j, ch);
      const before = src[j - 1] as string;
      const after = src[j + run];
      const closes = j > from && !/\s/.test(before) && !(ch === '_' && after !== undefined && WORD.test(after));
      if (closes && size === 2 && run >= 2) return j + run - 2;
      if (closes && size === 1 && (run === 1 || run >= 3)) return j + run - 1;
      j += run; // a nested run of another size (e.g. `**` inside `*…*`)
      continue;
    }
    j++;
  }
  return undefined;
}

function parseLinkAt(src: string, i: number): { text: string; url: string; end: number } | undefined {
  // [text](url "title") with nested brackets in the text and balanced parentheses in the url.
  let depth = 0;
  let j = i;
  for (; j < src.length; j++) {
    const c = src[j];
    if (c === '\\') {
      j++;
      continue;
    }
    if (c === '`') {
      const run = runLength(src, j, '`');
      const close = findBacktickRun(src, j + run, run);
      if (close >= 0) j = close + run - 1;
      continue;
    }
    if (c === '\n' && src[j + 1] === '\n') return undefined;
    if (c === '[') depth++;
    else if (c === ']') {
      depth--;
      if (depth === 0) break;
    }
  }
  if (j >= src.length || src[j + 1] !== '(') return undefined;
  const text = src.slice(i + 1, j);
  let k = j + 2;
  while (src[k] === ' ') k++;
  let url = '';
  if (src[k] === '<') {
    const close = src.indexOf('>', k);
    if (close < 0) return undefined;
    url = src.slice(k + 1, close);
    k = close + 1;
  } else {
    let parens = 0;
    const startUrl = k;
    for (; k < src.length; k++) {
      const c = src[k] as string;
      if (/\s/.test(c)) break;
      if (c === '(') parens++;
      else if (c === ')') {
        if (parens === 0) break;
        parens--;
      }
    }
    url = src.slice(startUrl, k);
  }
  while (src[k] === ' ') k++;
  const quote = src[k];
  if (quote === '"' || quote === "'") {
    const close = src.indexOf(quote, k + 1);
    if (close < 0) return undefined;
    k = close + 1;
    while (src[k] === ' ') k++;
  }
  if (src[k] !== ')') return undefined;
  return { text, url, end: k + 1 };
}
