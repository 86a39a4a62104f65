// Syntax highlighting of code blocks with Prism's tokenizer: tokens become spans built node by node
// (text only through text nodes), coloured by theme variables in media/highlight.css. A block is
// highlighted once it is on screen and its text has stopped changing, so long answers stay cheap.
import './prismSetup';
import Prism from 'prismjs/components/prism-core';
import 'prismjs/components/prism-markup';
import 'prismjs/components/prism-clike';
import 'prismjs/components/prism-javascript';
import 'prismjs/components/prism-typescript';
import 'prismjs/components/prism-jsx';
import 'prismjs/components/prism-tsx';
import 'prismjs/components/prism-css';
import 'prismjs/components/prism-json';
import 'prismjs/components/prism-python';
import 'prismjs/components/prism-bash';
import 'prismjs/components/prism-markdown';
import 'prismjs/components/prism-yaml';
import 'prismjs/components/prism-toml';
import 'prismjs/components/prism-rust';
import 'prismjs/components/prism-go';
import 'prismjs/components/prism-java';
import 'prismjs/components/prism-c';
import 'prismjs/components/prism-cpp';
import 'prismjs/components/prism-csharp';
import 'prismjs/components/prism-diff';
import 'prismjs/components/prism-sql';

/** The names models write after ``` mapped to Prism's grammars. */
const ALIASES: Record<string, string> = {
  ts: 'typescript', typescript: 'typescript', mts: 'typescript', cts: 'typescript', tsx: 'tsx', jsx: 'jsx',
  js: 'javascript', javascript: 'javascript', mjs: 'javascript', cjs: 'javascript', node: 'javascript',
  json: 'json', jsonc: 'json', json5: 'json',
  py: 'python', python: 'python', python3: 'python',
  sh: 'bash', bash: 'bash', shell: 'bash', zsh: 'bash', console: 'bash', shellscript: 'bash',
  html: 'markup', xml: 'markup', svg: 'markup', vue: 'markup', markup: 'markup',
  css: 'css', md: 'markdown', markdown: 'markdown', yaml: 'yaml', yml: 'yaml', toml: 'toml',
  rs: 'rust', rust: 'rust', go: 'go', golang: 'go', java: 'java', c: 'c', h: 'c',
  cpp: 'cpp', 'c++': 'cpp', cc: 'cpp', hpp: 'cpp', cs: 'csharp', csharp: 'csharp', 'c#': 'csharp',
  diff: 'diff', patch: 'diff', sql: 'sql',
};

/** Longer blocks stay plain: tokenizing them would cost more than the colours are worth. */
export const MAX_HIGHLIGHT_CHARS = 200_000;
/** A streaming block is highlighted once its text has not changed for this long. */
const SETTLE_MS = 120;
const MAX_CACHED = 200;

/** The Prism grammar name for a fence's language label, or undefined when there is none. */
export function grammarFor(lang: string): string | undefined {
  const name = ALIASES[lang.toLowerCase()];
  return name && Prism.languages[name] ? name : undefined;
}

type Token = string | Prism.Token;

function appendTokens(parent: Node, tokens: readonly Token[]): void {
  for (const token of tokens) {
    if (typeof token === 'string') {
      parent.appendChild(document.createTextNode(token));
      continue;
    }
    const span = document.createElement('span');
    const aliases = Array.isArray(token.alias) ? token.alias : token.alias ? [token.alias] : [];
    span.className = ['tok', `tok-${token.type}`, ...aliases.map((a: string) => `tok-${a}`)].join(' ');
    const content = token.content;
    if (typeof content === 'string') span.textContent = content;
    else appendTokens(span, Array.isArray(content) ? content : [content]);
    parent.appendChild(span);
  }
}

/** The highlighted nodes of `text` (a fragment to put inside `<code>`), or undefined for plain text. */
export function highlightToFragment(text: string, lang: string): DocumentFragment | undefined {
  const grammar = grammarFor(lang);
  if (!grammar || text.length > MAX_HIGHLIGHT_CHARS) return undefined;
  const fragment = document.createDocumentFragment();
  appendTokens(fragment, Prism.tokenize(text, Prism.languages[grammar]!));
  return fragment;
}

/** Highlighted blocks by language and text: a message re-rendered while streaming reuses them. */
const cache = new Map<string, DocumentFragment>();

function cached(key: string): DocumentFragment | undefined {
  const hit = cache.get(key);
  if (hit) {
    cache.delete(key);
    cache.set(key, hit); // most recently used last
  }
  return hit;
}

function remember(key: string, fragment: DocumentFragment): void {
  cache.set(key, fragment);
  if (cache.size > MAX_CACHED) cache.delete(cache.keys().next().value as string);
}

const waiting = new WeakMap<Element, { text: string; lang: string; timer: number | null }>();
let observer: IntersectionObserver | undefined;

function apply(code: HTMLElement, text: string, lang: string): void {
  if (!code.isConnected || code.textContent !== text) return;
  const key = `${lang}\u0000${text}`;
  let fragment = cached(key);
  if (!fragment) {
    fragment = highlightToFragment(text, lang);
    if (!fragment) return;
    remember(key, fragment);
  }
  code.replaceChildren(fragment.cloneNode(true));
  code.classList.add('highlighted');
}

function onVisible(entries: IntersectionObserverEntry[]): void {
  for (const entry of entries) {
    const code = entry.target as HTMLElement;
    // A block a newer render replaced: nothing to highlight, and the observer lets it go.
    if (!code.isConnected) observer?.unobserve(code);
    if (!entry.isIntersecting || !code.isConnected) continue;
    observer?.unobserve(code);
    const job = waiting.get(code);
    if (!job) continue;
    job.timer = window.setTimeout(() => apply(code, job.text, job.lang), SETTLE_MS);
  }
}

/**
 * Asks for `code` (a `<code>` holding exactly `text`) to be highlighted: at once when the same
 * block was highlighted before, else once it is near the screen and still in the page after a
 * short wait (a streaming message replaces its blocks every frame; only the last one stays).
 */
export function highlightLater(code: HTMLElement, text: string, lang: string): void {
  if (!grammarFor(lang)) return;
  const hit = cached(`${lang}\u0000${text}`);
  if (hit) {
    code.replaceChildren(hit.cloneNode(true));
    code.classList.add('highlighted');
    return;
  }
  waiting.set(code, { text, lang, timer: null });
  if (typeof IntersectionObserver === 'undefined') {
    window.setTimeout(() => apply(code, text, lang), SETTLE_MS);
    return;
  }
  observer ??= new IntersectionObserver(onVisible, { rootMargin: '300px 0px' });
  observer.observe(code);
}
