// The webview's Markdown parser on its own (plain Node): the tree it builds from model answers,
// including half-streamed input, identifiers that must not turn italic, and which links survive.
import * as assert from 'node:assert/strict';
import { classifyLink, parseInline, parseMarkdown, type Inline } from '../../src/webview/markdownParse';

/** Flattens inline nodes into a compact string to compare shapes: **b** → <strong>b</strong>. */
function show(nodes: Inline[]): string {
  return nodes
    .map((n) => {
      switch (n.t) {
        case 'text':
          return n.text;
        case 'code':
          return `<code>${n.text}</code>`;
        case 'br':
          return '<br>';
        case 'link':
          return `<a ${n.target.kind === 'external' ? n.target.url : `file:${n.target.path}${n.target.line ? `@${n.target.line}` : ''}`}>${show(n.children)}</a>`;
        default:
          return `<${n.t}>${show(n.children)}</${n.t}>`;
      }
    })
    .join('');
}

describe('webview markdown parser', () => {
  it('parses emphasis, code spans and escapes', () => {
    assert.equal(show(parseInline('a **bold** and *it* and ~~old~~ and `x * y`')), 'a <strong>bold</strong> and <em>it</em> and <del>old</del> and <code>x * y</code>');
    assert.equal(show(parseInline('***both***')), '<strong><em>both</em></strong>');
    assert.equal(show(parseInline('*a **b** c*')), '<em>a <strong>b</strong> c</em>');
    assert.equal(show(parseInline('``a ` b``')), '<code>a ` b</code>');
    assert.equal(show(parseInline('\\*not em\\*')), '*not em*');
    assert.equal(show(parseInline('line one\nline two')), 'line one<br>line two');
  });

  it('leaves identifiers, arithmetic and unclosed markers alone', () => {
    assert.equal(show(parseInline('call my_var_name and test_a_b_ now')), 'call my_var_name and test_a_b_ now');
    assert.equal(show(parseInline('2 * 3 * 4')), '2 * 3 * 4');
    assert.equal(show(parseInline('still **streaming')), 'still **streaming');
    assert.equal(show(parseInline('open `code')), 'open `code');
    assert.equal(show(parseInline('<img src=x onerror=alert(1)>')), '<img src=x onerror=alert(1)>');
  });

  it('keeps http(s) and workspace links, and drops every other scheme to its text', () => {
    assert.equal(show(parseInline('[docs](https://example.com/a_(b)) and <https://x.dev>')), '<a https://example.com/a_(b)>docs</a> and <a https://x.dev>https://x.dev</a>');
    assert.equal(show(parseInline('see https://example.com/page.')), 'see <a https://example.com/page>https://example.com/page</a>.');
    assert.equal(show(parseInline('[app](./src/app.ts#L12) [b](src/b.ts:40)')), '<a file:src/app.ts@12>app</a> <a file:src/b.ts@40>b</a>');
    assert.equal(show(parseInline('[x](javascript:alert(1)) [y](data:text/html,hi) [z](command:foo) [w](//evil.com) [v](vscode://x)')), 'x y z w v');
    assert.equal(show(parseInline('![diagram](https://example.com/d.png)')), '<a https://example.com/d.png>diagram</a>');
    assert.deepEqual(classifyLink('src/my%20file.ts'), { kind: 'file', path: 'src/my file.ts' });
    assert.equal(classifyLink('file:///etc/passwd'), undefined);
    assert.equal(classifyLink('#top'), undefined);
  });

  it('parses headings, fences (also unclosed while streaming), quotes, rules and tables', () => {
    const blocks = parseMarkdown('# Title\n\nText\n\n```ts\nconst a = 1;\n\nconst b = 2;\n```\n\n> quoted\n> more\n\n---\n\n| a | b |\n|:--|--:|\n| 1 | `x|y` |\n\n```py\nprint(1)');
    assert.deepEqual(
      blocks.map((b) => b.t),
      ['heading', 'paragraph', 'code', 'quote', 'hr', 'table', 'code'],
    );
    assert.deepEqual(blocks[2], { t: 'code', lang: 'ts', text: 'const a = 1;\n\nconst b = 2;', closed: true });
    assert.deepEqual(blocks[6], { t: 'code', lang: 'py', text: 'print(1)', closed: false });
    const table = blocks[5];
    assert.ok(table?.t === 'table');
    assert.deepEqual(table.align, ['left', 'right']);
    assert.equal(show(table.rows[0]![1]!), '<code>x|y</code>');
  });

  it('parses nested, ordered and task lists', () => {
    const [list] = parseMarkdown('1. first\n2. second\n   - inner a\n   - inner b\n3. third');
    assert.ok(list?.t === 'list' && list.ordered);
    assert.equal(list.items.length, 3);
    const nested = list.items[1]!.blocks[1];
    assert.ok(nested?.t === 'list' && !nested.ordered);
    assert.equal(nested.items.length, 2);

    const [start] = parseMarkdown('3. three\n4. four');
    assert.ok(start?.t === 'list' && start.start === 3);

    const [tasks] = parseMarkdown('- [x] done\n- [ ] to do\n- plain');
    assert.ok(tasks?.t === 'list');
    assert.deepEqual(tasks.items.map((i) => i.checked), [true, false, undefined]);

    const [loose, after] = parseMarkdown('- a\n\n- b\n\nafter');
    assert.ok(loose?.t === 'list' && loose.items.length === 2);
    assert.equal(after?.t, 'paragraph');
  });
});
