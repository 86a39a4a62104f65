// Renders model Markdown into DOM nodes built one by one (text through text nodes only), so nothing
// a model writes can become an element, an attribute or a script. Links are intercepted by main.ts.
import { button, h } from './dom';
import { icon } from './icons';
import { highlightLater } from './highlight';
import { linkifyPaths } from './links';
import { parseInline, parseMarkdown, type Block, type Inline, type ListItem } from './markdownParse';

export interface MarkdownHooks {
  /** The copy button of a code block was pressed. */
  copy(text: string): void;
}

/** The whole message as a fragment; callers replace the message body with it. */
export function renderMarkdown(source: string, hooks: MarkdownHooks): DocumentFragment {
  const fragment = document.createDocumentFragment();
  for (const block of parseMarkdown(source)) fragment.appendChild(renderBlock(block, hooks));
  linkifyPaths(fragment);
  return fragment;
}

/** One line of inline Markdown (used for short host-provided texts such as boundary details). */
export function renderInlineMarkdown(source: string): DocumentFragment {
  const fragment = document.createDocumentFragment();
  for (const node of parseInline(source)) fragment.appendChild(renderInline(node));
  return fragment;
}

function renderBlock(block: Block, hooks: MarkdownHooks): Node {
  switch (block.t) {
    case 'paragraph':
      return h('p', {}, ...block.inlines.map(renderInline));
    case 'heading': {
      const tag = (['h1', 'h2', 'h3', 'h4', 'h5', 'h6'] as const)[Math.min(block.level, 6) - 1] ?? 'h6';
      return h(tag, {}, ...block.inlines.map(renderInline));
    }
    case 'code':
      return renderCodeBlock(block.text, block.lang, hooks);
    case 'list': {
      const list = block.ordered ? h('ol', block.start !== 1 ? { start: String(block.start) } : {}) : h('ul');
      for (const item of block.items) list.appendChild(renderListItem(item, hooks));
      return list;
    }
    case 'quote':
      return h('blockquote', {}, ...block.blocks.map((b) => renderBlock(b, hooks)));
    case 'hr':
      return h('hr');
    case 'table': {
      const alignAttr = (col: number): Record<string, string | undefined> => {
        const align = block.align[col];
        return { class: align ? `align-${align}` : undefined };
      };
      const head = h('thead', {}, h('tr', {}, ...block.header.map((cell, col) => h('th', alignAttr(col), ...cell.map(renderInline)))));
      const body = h('tbody', {}, ...block.rows.map((row) => h('tr', {}, ...row.map((cell, col) => h('td', alignAttr(col), ...cell.map(renderInline))))));
      return h('div', { class: 'table-wrap' }, h('table', {}, head, body));
    }
  }
}

function renderListItem(item: ListItem, hooks: MarkdownHooks): HTMLLIElement {
  const li = h('li');
  if (item.checked !== undefined) {
    li.classList.add('task');
    li.appendChild(h('span', { class: `task-box${item.checked ? ' done' : ''}`, role: 'img', 'aria-label': item.checked ? 'done' : 'to do' }, item.checked ? '✓' : ''));
  }
  // A tight item (one paragraph) renders its text directly, without paragraph margins.
  const only = item.blocks.length === 1 ? item.blocks[0] : undefined;
  if (only && only.t === 'paragraph') for (const node of only.inlines) li.appendChild(renderInline(node));
  else for (const block of item.blocks) li.appendChild(renderBlock(block, hooks));
  return li;
}

function renderCodeBlock(text: string, lang: string, hooks: MarkdownHooks): HTMLElement {
  const label = lang.replace(/[^\w+#.-]/g, '').slice(0, 24);
  const copy = button(
    h('span', { class: 'button-label' }, icon('copy'), h('span', { class: 'copy-text' }, 'Copy')),
    () => {
      hooks.copy(text);
      copy.classList.add('copied');
      copy.querySelector('.copy-text')!.textContent = 'Copied';
      copy.setAttribute('aria-label', 'Copied');
      window.setTimeout(() => {
        copy.classList.remove('copied');
        const copyText = copy.querySelector('.copy-text');
        if (copyText) copyText.textContent = 'Copy';
        copy.setAttribute('aria-label', label ? `Copy ${label} code` : 'Copy code');
      }, 1500);
    },
    { class: 'code-copy', 'aria-label': label ? `Copy ${label} code` : 'Copy code', title: 'Copy' },
  );
  const code = h('code', label ? { class: `language-${label}` } : {}, text);
  highlightLater(code, text, label);
  return h(
    'div',
    { class: 'code-block' },
    h('div', { class: 'code-header' }, h('span', { class: 'code-lang' }, label), copy),
    h('pre', { tabindex: '0', 'aria-label': label ? `${label} code` : 'code' }, code),
  );
}

function renderInline(node: Inline): Node {
  switch (node.t) {
    case 'text':
      return document.createTextNode(node.text);
    case 'code':
      return h('code', {}, node.text);
    case 'strong':
      return h('strong', {}, ...node.children.map(renderInline));
    case 'em':
      return h('em', {}, ...node.children.map(renderInline));
    case 'del':
      return h('del', {}, ...node.children.map(renderInline));
    case 'br':
      return h('br');
    case 'link': {
      const target = node.target;
      // href is for display (hover, screen readers); the click handler in main.ts reads the data
      // attributes and asks the host, the webview itself never follows a link.
      const link =
        target.kind === 'external'
          ? h('a', { href: target.url, class: 'link external', 'data-url': target.url, title: target.url })
          : h('a', {
              href: '#',
              class: 'link file',
              'data-path': target.path,
              'data-line': target.line !== undefined ? String(target.line) : undefined,
              title: target.line !== undefined ? `Open ${target.path}, line ${target.line}` : `Open ${target.path}`,
            });
      for (const child of node.children) link.appendChild(renderInline(child));
      return link;
    }
  }
}
