// The chat history in the real extension host, through the webview protocol: New Chat keeps the old
// chat, the list shows both, search finds by text, open brings a chat back, rename and delete stick;
// and a damaged or newer store is kept aside with a notice instead of breaking anything.
import * as assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { HistoryEntry, HostToWebview } from '../../src/shared/protocol';
import { ChatHistory } from '../../src/vscode/history/chatHistory';
import { demoReply } from '../fixtures/scripted/demoScript';
import { ScriptedServer } from '../fixtures/scriptedServer';
import { speculateApi } from './api';
import { clearUserSettings, setUserSettings, until } from './helpers';

class MemoryMemento implements vscode.Memento {
  private readonly values = new Map<string, unknown>();
  keys(): readonly string[] {
    return [...this.values.keys()];
  }
  get<T>(key: string, fallback?: T): T | undefined {
    return (this.values.has(key) ? this.values.get(key) : fallback) as T | undefined;
  }
  async update(key: string, value: unknown): Promise<void> {
    this.values.set(key, value);
  }
}

describe('chat history in the extension host', function () {
  this.timeout(60_000);
  let model: ScriptedServer;
  const posted: HostToWebview[] = [];
  /** Every title the header was given, never cleared. */
  const headerTitles: string[] = [];
  let subscription: vscode.Disposable;

  before(async () => {
    model = new ScriptedServer({ script: (request) => demoReply(request.body ?? {}) });
    await model.start();
    await setUserSettings({ baseUrl: model.baseUrl, model: 'scripted-demo', 'suggestions.enabled': false });
    const api = await speculateApi();
    subscription = api.controller.onDidPostToWebview((message) => {
      posted.push(message);
      if (message.type === 'chatTitle') headerTitles.push(message.title);
    });
  });
  after(async () => {
    subscription?.dispose();
    await clearUserSettings(['baseUrl', 'model', 'suggestions.enabled']);
    await model?.close();
  });

  async function send(text: string): Promise<void> {
    const api = await speculateApi();
    posted.length = 0;
    await api.controller.handleWebviewMessage({ type: 'submit', text });
    await until(posted, (m) => (m.type === 'turnState' && !m.busy ? m : undefined), `the answer to "${text}"`);
  }

  async function history(query = ''): Promise<HistoryEntry[]> {
    const api = await speculateApi();
    posted.length = 0;
    await api.controller.handleWebviewMessage({ type: 'historyQuery', query });
    return until(posted, (m) => (m.type === 'history' && m.query === query ? m.entries : undefined), 'the history list');
  }

  it('New Chat keeps the old chat; the list shows both, newest first, and search finds by text', async () => {
    const api = await speculateApi();
    await api.controller.newChat();
    await send('list the files');
    await api.controller.newChat();
    await send('explain README.md');
    const entries = await history();
    const titles = entries.map((e) => e.title);
    assert.deepEqual(titles.slice(0, 2), ['explain README.md', 'list the files']);
    assert.equal(entries[0].current, true);
    assert.equal(entries[1].current, false);
    assert.equal(entries[0].workspace, vscode.workspace.workspaceFolders?.[0]?.name);
    assert.equal(entries[0].model, 'scripted-demo');
    assert.deepEqual(headerTitles.slice(-2), ['list the files', 'explain README.md'], 'each new chat is named by its first prompt in the header');
    // "workspace holds" is in the answers to "list the files" (this chat's and the chat suite's), not in the README one.
    const found = (await history('workspace holds')).map((e) => e.title);
    assert.ok(found.includes('list the files') && !found.includes('explain README.md'), found.join(' | '));
    assert.deepEqual(await history('no chat says this'), []);
  });

  it('opens a past chat exactly as it was, and the chat goes on from there', async () => {
    const api = await speculateApi();
    const target = (await history()).find((e) => e.title === 'list the files')!;
    posted.length = 0;
    await api.controller.handleWebviewMessage({ type: 'historyOpen', id: target.id });
    const init = await until(posted, (m) => (m.type === 'init' ? m : undefined), 'the opened chat');
    const kinds = init.state.transcript.map((t) => t.kind);
    assert.deepEqual(kinds.slice(0, 2), ['user', 'assistant']);
    assert.ok(kinds.includes('toolGroup'), 'the tool group of the stored turn is shown');
    assert.ok(kinds.includes('usage'), 'and what the answer cost');
    assert.equal(init.state.title, 'list the files');
    const messages = api.controller.currentSession!.messages;
    assert.equal(messages[0].role === 'user' && messages[0].content, 'list the files');
    assert.ok(messages.some((m) => m.role === 'tool'), 'tool results are part of the restored history');
    await send('explain README.md');
    assert.equal(api.controller.currentSession!.messages.filter((m) => m.role === 'user').length, 2);
    assert.equal((await history()).find((e) => e.id === target.id)?.current, true);
  });

  it('renames a chat (the title sticks) and deletes one', async () => {
    const api = await speculateApi();
    const entries = await history();
    const open = entries.find((e) => e.current)!;
    const other = entries.find((e) => !e.current)!;
    await api.controller.handleWebviewMessage({ type: 'historyRename', id: open.id, title: 'Workspace tour' });
    await until(posted, (m) => (m.type === 'chatTitle' && m.title === 'Workspace tour' ? m : undefined), 'the new title');
    await send('list the files');
    assert.equal((await history()).find((e) => e.id === open.id)?.title, 'Workspace tour', 'a later turn does not retitle it');

    await api.controller.handleWebviewMessage({ type: 'historyDelete', id: other.id });
    assert.equal((await history()).some((e) => e.id === other.id), false);
    posted.length = 0;
    await api.controller.handleWebviewMessage({ type: 'historyDelete', id: open.id });
    await until(posted, (m) => (m.type === 'clear' ? m : undefined), 'the deleted open chat to make way for a new one');
    assert.equal((await history()).some((e) => e.id === open.id), false);
    assert.deepEqual(api.controller.currentSession!.messages, []);
  });

  describe('a store that cannot be read', () => {
    let folder: string;
    beforeEach(async () => {
      folder = await mkdtemp(join(tmpdir(), 'speculate-history-it-'));
    });
    afterEach(async () => rm(folder, { recursive: true, force: true }));

    function historyIn(dir: string): ChatHistory {
      const uri = vscode.Uri.file(dir);
      return new ChatHistory({
        context: { storageUri: uri, globalStorageUri: uri, workspaceState: new MemoryMemento() },
        workspaceName: () => 'demo',
        maxBytes: () => 1024 * 1024,
        content: () => ({ messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }], usage: { entries: [] }, view: undefined, model: 'm' }),
        log: () => undefined,
      });
    }

    it('a damaged index is kept aside with a notice, and saving works again', async () => {
      await mkdir(join(folder, 'chats'));
      await writeFile(join(folder, 'chats', 'index.json'), '\u0000\u0001 not json');
      const chats = historyIn(folder);
      assert.equal(await chats.restoreOpenChat(), undefined);
      const notices = chats.takeNotices();
      assert.equal(notices.length, 1);
      assert.match(notices[0], /damaged .* kept aside in /);
      chats.scheduleSave();
      await chats.flush();
      assert.deepEqual((await chats.list('')).map((e) => e.title), ['hi']);
      const aside = (await readdir(join(folder, 'chats'))).find((n) => n.startsWith('kept-aside-'))!;
      assert.equal(await readFile(join(folder, 'chats', aside, 'index.json'), 'utf8'), '\u0000\u0001 not json');
      chats.dispose();
    });

    it('a newer version\'s store is left untouched beside a new history', async () => {
      await mkdir(join(folder, 'chats'));
      await writeFile(join(folder, 'chats', 'index.json'), JSON.stringify({ version: 99, chats: [] }));
      const chats = historyIn(folder);
      assert.equal(await chats.restoreOpenChat(), undefined);
      assert.match(chats.takeNotices()[0], /newer version of Speculate/);
      chats.scheduleSave();
      await chats.flush();
      assert.equal((await chats.list('')).length, 1);
      chats.dispose();
    });
  });
});
