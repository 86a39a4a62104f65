// The chat webview in Chromium, context and reading: `@` completion with keys and mouse, chips
// that go with the message, files dropped on the chat, paths in answers as links, and code
// highlighted readably under every theme kind.
import * as assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { settle, useChatPages, type ChatPage } from './harness';

const INPUT = 'textarea[aria-label="Message Speculate"]';

/** VS Code's defaults for the colours the code blocks use, per theme kind (the body class). */
const THEMES: Record<string, Record<string, string>> = {
  'vscode-dark': {
    '--vscode-editor-foreground': '#cccccc', '--vscode-textCodeBlock-background': '#2b2b2b', '--vscode-debugTokenExpression-name': '#c586c0',
    '--vscode-debugTokenExpression-string': '#ce9178', '--vscode-debugTokenExpression-number': '#b5cea8', '--vscode-debugTokenExpression-boolean': '#4e94ce',
    '--vscode-symbolIcon-functionForeground': '#b180d7', '--vscode-symbolIcon-classForeground': '#ee9d28', '--vscode-symbolIcon-variableForeground': '#75beff',
    '--vscode-descriptionForeground': '#9d9d9d',
  },
  'vscode-light': {
    '--vscode-editor-foreground': '#3b3b3b', '--vscode-textCodeBlock-background': '#f8f8f8', '--vscode-debugTokenExpression-name': '#9b46b0',
    '--vscode-debugTokenExpression-string': '#a31515', '--vscode-debugTokenExpression-number': '#098658', '--vscode-debugTokenExpression-boolean': '#0000ff',
    '--vscode-symbolIcon-functionForeground': '#652d90', '--vscode-symbolIcon-classForeground': '#d67e00', '--vscode-symbolIcon-variableForeground': '#007acc',
    '--vscode-descriptionForeground': '#717171',
  },
  'vscode-high-contrast': {
    '--vscode-editor-foreground': '#ffffff', '--vscode-textCodeBlock-background': '#000000', '--vscode-debugTokenExpression-name': '#ffffff',
    '--vscode-debugTokenExpression-string': '#f48771', '--vscode-debugTokenExpression-number': '#89d185', '--vscode-debugTokenExpression-boolean': '#75bdfe',
    '--vscode-symbolIcon-functionForeground': '#b180d7', '--vscode-symbolIcon-classForeground': '#ee9d28', '--vscode-symbolIcon-variableForeground': '#75beff',
    '--vscode-descriptionForeground': '#ffffff',
  },
  'vscode-high-contrast-light': {
    '--vscode-editor-foreground': '#292929', '--vscode-textCodeBlock-background': '#ffffff', '--vscode-debugTokenExpression-name': '#9b46b0',
    '--vscode-debugTokenExpression-string': '#a31515', '--vscode-debugTokenExpression-number': '#098658', '--vscode-debugTokenExpression-boolean': '#0000ff',
    '--vscode-symbolIcon-functionForeground': '#652d90', '--vscode-symbolIcon-classForeground': '#d67e00', '--vscode-symbolIcon-variableForeground': '#007acc',
    '--vscode-descriptionForeground': '#292929',
  },
};

const TS_BLOCK = '```ts\n// greet someone\nexport function greet(name: string): string {\n  const count = 42;\n  return `Hello, ${name}` + String(true);\n}\nclass Greeter {}\n```';

/** Switches the page to a theme kind the way VS Code does: a body class and the theme's colours. */
async function useTheme(page: Page, kind: string, colours: Record<string, string>): Promise<void> {
  await page.evaluate(
    ({ kind, colours }) => {
      document.body.className = kind;
      document.body.dataset.vscodeThemeKind = kind;
      for (const [name, value] of Object.entries(colours)) document.documentElement.style.setProperty(name, value);
    },
    { kind, colours },
  );
}

/** The `mentionQuery` the webview posts for exactly `query` (the words after the @). */
async function mentionQuery(page: Page, query: string): Promise<{ requestId: number; query: string }> {
  const handle = await page.waitForFunction(
    (q) => (window as unknown as { __posted: { type: string; query?: string }[] }).__posted.filter((m) => m.type === 'mentionQuery' && m.query === q).at(-1),
    query,
  );
  return (await handle.jsonValue()) as unknown as { requestId: number; query: string };
}

/** WCAG contrast of each token colour against the code block's background, in the page. */
async function tokenContrasts(page: Page): Promise<Record<string, { colour: string; contrast: number }>> {
  return page.evaluate(() => {
    const parse = (css: string): number[] => {
      const probe = document.createElement('canvas').getContext('2d')!;
      probe.fillStyle = css;
      probe.fillRect(0, 0, 1, 1);
      return Array.from(probe.getImageData(0, 0, 1, 1).data.slice(0, 3));
    };
    const luminance = ([r, g, b]: number[]) => {
      const f = (c: number) => {
        const v = c / 255;
        return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
      };
      return 0.2126 * f(r!) + 0.7152 * f(g!) + 0.0722 * f(b!);
    };
    const contrast = (a: number[], b: number[]) => {
      const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
      return (hi! + 0.05) / (lo! + 0.05);
    };
    const block = document.querySelector('.code-block')!;
    const background = parse(getComputedStyle(block).backgroundColor);
    const result: Record<string, { colour: string; contrast: number }> = {};
    for (const kind of ['keyword', 'string', 'number', 'boolean', 'function', 'class-name', 'comment', 'template-string']) {
      const token = block.querySelector(`.tok-${kind}`);
      if (!token) continue;
      const colour = getComputedStyle(token).color;
      result[kind] = { colour, contrast: contrast(parse(colour), background) };
    }
    const plain = getComputedStyle(block.querySelector('code')!).color;
    result.plain = { colour: plain, contrast: contrast(parse(plain), background) };
    return result;
  });
}

describe('chat webview: context and reading', function () {
  this.timeout(30_000);
  const pages = useChatPages();
  let chat: ChatPage;
  beforeEach(() => {
    chat = pages.chat();
  });

  it('@ opens the list, narrows it as you type, and Enter attaches the file instead of sending', async () => {
    await chat.init();
    const { page } = chat;
    const input = page.locator(INPUT);
    await input.click();
    await chat.clearPosted();
    await input.pressSequentially('explain @gre');
    const asked = await mentionQuery(page, 'gre');
    await chat.send({
      type: 'mentions',
      requestId: asked.requestId,
      items: [
        { kind: 'file', label: 'greet.ts', detail: 'src', path: 'src/greet.ts' },
        { kind: 'file', label: 'greet.test.ts', detail: 'test', path: 'test/greet.test.ts' },
      ],
    });
    const list = page.locator('.mention-list');
    assert.equal(await list.isVisible(), true);
    assert.deepEqual(await list.locator('.mention-label').allInnerTexts(), ['greet.ts', 'greet.test.ts', 'Browse files…']);
    await input.press('ArrowDown');
    assert.equal(await list.locator('.mention-item.active .mention-label').innerText(), 'greet.test.ts');
    await chat.clearPosted();
    await input.press('Enter');
    assert.deepEqual(await chat.waitForPosted('attach'), { type: 'attach', kind: 'file', path: 'test/greet.test.ts' });
    assert.equal((await chat.posted()).some((m) => m.type === 'submit'), false, 'Enter picked, it did not send');
    assert.equal(await input.inputValue(), 'explain ', 'the @query text is gone');
    assert.equal(await list.isVisible(), false);

    // The host answers with a chip; it goes with the next message and is shown on it.
    await chat.send({ type: 'attachmentAdded', attachment: { id: 'att-1', kind: 'file', label: 'greet.test.ts', path: 'test/greet.test.ts' } });
    assert.deepEqual(await page.locator('.input-chips .chip').allInnerTexts(), ['greet.test.ts']);
    await input.pressSequentially('please');
    await chat.clearPosted();
    await input.press('Enter');
    assert.deepEqual(await chat.waitForPosted('submit'), { type: 'submit', text: 'explain please', attachments: ['att-1'] });
    assert.equal(await page.locator('.input-chips').isVisible(), false, 'sent chips leave the input');
    await chat.send({ type: 'userMessage', id: 'u1', text: 'explain please', attachments: [{ id: 'att-9', kind: 'file', label: 'greet.test.ts', path: 'test/greet.test.ts' }] });
    const chip = page.locator('.turn.request .chip a');
    assert.equal(await chip.innerText(), 'greet.test.ts');
    await chat.clearPosted();
    await chip.click();
    assert.deepEqual(await chat.waitForPosted('openFile'), { type: 'openFile', path: 'test/greet.test.ts' });
  });

  it('offers @selection and @problems, Escape closes the list, the paperclip opens it, a chip can be removed', async () => {
    await chat.init();
    const { page } = chat;
    const input = page.locator(INPUT);
    await page.locator('button.attach').click();
    assert.equal(await input.inputValue(), '@');
    const query = await mentionQuery(page, '');
    await chat.send({
      type: 'mentions',
      requestId: query.requestId,
      items: [
        { kind: 'selection', label: '@selection', detail: 'lines 3–5 of src/greet.ts' },
        { kind: 'problems', label: '@problems', detail: '2 in src/greet.ts' },
      ],
    });
    assert.deepEqual(await page.locator('.mention-list .mention-detail').allInnerTexts(), ['lines 3–5 of src/greet.ts', '2 in src/greet.ts']);
    await input.press('Escape');
    assert.equal(await page.locator('.mention-list').isVisible(), false);
    assert.equal(await input.inputValue(), '@', 'Escape only closes the list');

    await input.press('Backspace');
    await input.pressSequentially('@pro');
    const { requestId } = await mentionQuery(page, 'pro');
    await chat.send({ type: 'mentions', requestId, items: [{ kind: 'problems', label: '@problems', detail: '2 in src/greet.ts' }] });
    await chat.clearPosted();
    await page.locator('.mention-list .mention-problems').click();
    assert.deepEqual(await chat.waitForPosted('attach'), { type: 'attach', kind: 'problems' });
    await chat.send({ type: 'attachmentAdded', attachment: { id: 'att-2', kind: 'problems', label: 'problems in greet.ts (2)', path: 'src/greet.ts' } });
    await chat.clearPosted();
    await page.locator('.input-chips .chip-remove').click();
    assert.deepEqual(await chat.waitForPosted('removeAttachment'), { type: 'removeAttachment', id: 'att-2' });
    assert.equal(await page.locator('.input-chips .chip').count(), 0);
  });

  it('a file dropped on the chat is attached (VS Code\'s explorer list and a plain URI list)', async () => {
    await chat.init();
    const { page } = chat;
    await chat.clearPosted();
    await page.evaluate(() => {
      const data = new DataTransfer();
      data.setData('application/vnd.code.uri-list', 'file:///work/ws/src/greet.ts\r\nfile:///work/ws/README.md');
      data.setData('text/uri-list', 'file:///work/ws/src/greet.ts');
      const target = document.querySelector('.input-box')!;
      target.dispatchEvent(new DragEvent('dragover', { dataTransfer: data, bubbles: true, cancelable: true }));
      target.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
    });
    await settle(page);
    const attached = (await chat.posted()).filter((m) => m.type === 'attach');
    assert.deepEqual(attached, [
      { type: 'attach', kind: 'file', path: 'file:///work/ws/src/greet.ts' },
      { type: 'attach', kind: 'file', path: 'file:///work/ws/README.md' },
    ]);
    // From VS Code's explorer the paths come along too (right in a remote window): they win.
    await chat.clearPosted();
    await page.evaluate(() => {
      const data = new DataTransfer();
      data.setData('codefiles', JSON.stringify(['/work/ws/src/greet.ts', '/work/ws/README.md']));
      data.setData('application/vnd.code.uri-list', 'vscode-remote://127.0.0.1:8080/work/ws/src/greet.ts\r\nvscode-remote://127.0.0.1:8080/work/ws/README.md');
      data.setData('text/uri-list', 'vscode-remote://127.0.0.1:8080/work/ws/src/greet.ts');
      document.querySelector('.transcript')!.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
    });
    await settle(page);
    assert.deepEqual((await chat.posted()).filter((m) => m.type === 'attach'), [
      { type: 'attach', kind: 'file', path: '/work/ws/src/greet.ts' },
      { type: 'attach', kind: 'file', path: '/work/ws/README.md' },
    ]);
  });

  it('turns file paths and path:line in answers into links that ask the host to open them', async () => {
    await chat.init({
      transcript: [
        {
          kind: 'assistant',
          id: 'a1',
          text:
            'The bug is in src/core/session.ts:142, called from `src/webview/main.ts`. See also README.md and app.ts#L7. ' +
            'Not links: e.g. version 1.2.3, https://example.com/app.js and `npm test`.\n\n```\nsrc/in/code.ts:1\n```',
        },
      ],
    });
    const { page } = chat;
    const links = page.locator('.assistant-text a.file');
    assert.deepEqual(await links.allInnerTexts(), ['src/core/session.ts:142', 'src/webview/main.ts', 'README.md', 'app.ts#L7']);
    assert.equal(await page.locator('.assistant-text a.file code').count(), 1, 'inline code stays code inside its link');
    assert.equal(await page.locator('pre a').count(), 0, 'code blocks are left alone');
    assert.equal(await page.locator('.assistant-text a.external').count(), 1);
    await chat.clearPosted();
    await links.first().click();
    assert.deepEqual(await chat.waitForPosted('openFile'), { type: 'openFile', path: 'src/core/session.ts', line: 142 });
    await chat.clearPosted();
    await links.nth(3).click();
    assert.deepEqual(await chat.waitForPosted('openFile'), { type: 'openFile', path: 'app.ts', line: 7 });
  });

  for (const [kind, colours] of Object.entries(THEMES)) {
    it(`highlights code readably under ${kind}: each kind of token its own colour, every one at 4.5:1 or better`, async () => {
      await useTheme(chat.page, kind, colours);
      await chat.init({ transcript: [{ kind: 'assistant', id: 'a1', text: TS_BLOCK }] });
      const { page } = chat;
      await page.locator('.code-block code.highlighted').waitFor();
      assert.equal(await page.locator('.code-block code').innerText(), TS_BLOCK.split('\n').slice(1, -1).join('\n'), 'the text is unchanged');
      const tokens = await tokenContrasts(page);
      for (const name of ['keyword', 'string', 'number', 'boolean', 'function', 'class-name', 'comment']) {
        assert.ok(tokens[name], `a ${name} token is marked`);
        assert.ok(tokens[name]!.contrast >= 4.5, `${name} ${tokens[name]!.colour} reads at ${tokens[name]!.contrast.toFixed(2)}:1`);
        assert.notEqual(tokens[name]!.colour, tokens.plain!.colour, `${name} is coloured`);
      }
      const distinct = new Set(['keyword', 'string', 'number', 'function', 'class-name', 'comment'].map((n) => tokens[n]!.colour));
      assert.ok(distinct.size >= (kind === 'vscode-high-contrast' ? 4 : 6), `distinct colours: ${[...distinct].join(', ')}`);
    });
  }

  it('highlights a long answer lazily: blocks far below are left plain until they scroll into view', async () => {
    const blocks = Array.from({ length: 40 }, (_, i) => `Step ${i}:\n\n\`\`\`js\nconst step${i} = ${i};\n\`\`\``).join('\n\n');
    await chat.init({ transcript: [{ kind: 'assistant', id: 'a1', text: blocks }] });
    const { page } = chat;
    await page.locator('.code-block code.highlighted').first().waitFor();
    await settle(page);
    const highlighted = await page.locator('.code-block code.highlighted').count();
    assert.ok(highlighted > 0 && highlighted < 40, `${highlighted} of 40 highlighted before scrolling`);
    await page.locator('.code-block').last().scrollIntoViewIfNeeded();
    await page.locator('.code-block').last().locator('code.highlighted').waitFor();
  });

  it('a language it does not know, or none, stays plain text', async () => {
    await chat.init({ transcript: [{ kind: 'assistant', id: 'a1', text: '```brainfuck\n+[-->-[>>+>-----<<]<--<---]>-.\n```\n\n```\nplain <b>text</b>\n```' }] });
    const { page } = chat;
    await settle(page);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await page.locator('.code-block .tok').count(), 0);
    assert.equal(await page.locator('.code-block b').count(), 0);
  });
});
