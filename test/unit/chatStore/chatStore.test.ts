// The chat history on disk: round trips, search, rename, delete, the size bound, and every way a
// store can be unreadable (damaged index, a newer version's files, a broken chat file, a failing disk).
import * as assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHAT_STORE_VERSION, newChatId, type StoredChat } from '../../../src/core/chatStore/chatRecord';
import { NodeChatStorage, type ChatStorage } from '../../../src/core/chatStore/chatStorage';
import { ChatStore } from '../../../src/core/chatStore/chatStore';

let clock = 1_700_000_000_000;
const now = () => clock;

function chat(title: string, extra: Partial<StoredChat> = {}): StoredChat {
  clock += 1000;
  return {
    version: CHAT_STORE_VERSION,
    id: newChatId(clock),
    title,
    titleEdited: false,
    createdAt: clock,
    updatedAt: clock,
    workspace: 'demo',
    model: 'gpt-test',
    messages: [
      { role: 'user', content: title },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"file_path":"src/a.ts"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'export const a = 1;' },
      { role: 'assistant', content: `Answer about ${title}` },
    ],
    usage: { entries: [{ source: 'chat', model: 'gpt-test', input: 100, cached: 20, output: 5 }] },
    checkpoints: [],
    ...extra,
  };
}

describe('chat store', () => {
  let folder: string;
  let storage: NodeChatStorage;
  beforeEach(async () => {
    folder = await mkdtemp(join(tmpdir(), 'speculate-chatstore-'));
    storage = new NodeChatStorage(join(folder, 'chats'));
  });
  afterEach(async () => rm(folder, { recursive: true, force: true }));

  it('keeps chats across a reopen, newest first, with their messages, tool calls and usage', async () => {
    const first = await ChatStore.open(storage, { now });
    assert.deepEqual(first.notices, []);
    const a = chat('fix the greeting');
    const b = chat('add a farewell');
    await first.store.save(a);
    await first.store.save(b);
    const { store, notices } = await ChatStore.open(storage, { now });
    assert.deepEqual(notices, []);
    assert.deepEqual((await store.list()).map((c) => c.title), ['add a farewell', 'fix the greeting']);
    const back = await store.get(a.id);
    assert.ok(back.ok);
    assert.deepEqual(back.value.messages, a.messages);
    assert.deepEqual(back.value.usage, a.usage);
  });

  it('finds chats by any words of their title or text', async () => {
    const { store } = await ChatStore.open(storage, { now });
    const a = chat('fix the greeting');
    const b = chat('add a farewell');
    await store.save(a);
    await store.save(b);
    assert.deepEqual((await store.list('FAREWELL')).map((c) => c.id), [b.id]);
    assert.deepEqual((await store.list('answer greeting')).map((c) => c.id), [a.id], 'words from the answer and the title');
    assert.deepEqual((await store.list('export const a')).map((c) => c.id), [], 'tool results are not searched');
    assert.deepEqual(await store.list('nothing like this'), []);
  });

  it('renames (the title sticks) and deletes', async () => {
    const { store } = await ChatStore.open(storage, { now });
    const a = chat('fix the greeting');
    await store.save(a);
    assert.deepEqual(await store.rename(a.id, '  Greeting\nbug  '), { ok: true });
    const renamed = await store.get(a.id);
    assert.ok(renamed.ok);
    assert.equal(renamed.value.title, 'Greeting bug');
    assert.equal(renamed.value.titleEdited, true);
    await store.delete(a.id);
    assert.deepEqual(await store.list(), []);
    assert.deepEqual((await readdir(storage.folder)).sort(), ['index.json']);
    const reopened = await ChatStore.open(storage, { now });
    assert.deepEqual(await reopened.store.list(), []);
  });

  it('refuses ids that are not its own (an id can never name another file)', async () => {
    const { store } = await ChatStore.open(storage, { now });
    await store.save(chat('x'));
    for (const id of ['../index', 'index', 'chat-1-2/../../etc', '']) {
      assert.equal((await store.get(id)).ok, false, id);
      await store.delete(id);
    }
    assert.equal((await store.list()).length, 1);
    assert.ok((await readdir(storage.folder)).includes('index.json'));
  });

  it('prunes the oldest chats past the size bound, never the one just saved', async () => {
    const bytes = Buffer.byteLength(JSON.stringify(chat('probe')));
    const { store } = await ChatStore.open(storage, { now, maxBytes: bytes * 3.5 });
    const chats = ['one', 'two', 'three', 'four', 'five'].map((t) => chat(t));
    for (const c of chats) await store.save(c);
    assert.deepEqual((await store.list()).map((c) => c.title), ['five', 'four', 'three']);
    assert.equal((await readdir(storage.folder)).filter((n) => n.startsWith('chat-')).length, 3);
    const huge = chat('huge', { messages: [{ role: 'user', content: 'x'.repeat(bytes * 5) }, { role: 'assistant', content: 'ok' }] });
    await store.save(huge);
    assert.deepEqual((await store.list()).map((c) => c.title), ['huge'], 'the open chat stays even alone over the bound');
  });

  it('keeps a damaged index aside and rebuilds the list from the chat files', async () => {
    const { store } = await ChatStore.open(storage, { now });
    const a = chat('fix the greeting');
    await store.save(a);
    await writeFile(join(storage.folder, 'index.json'), '{"version":1,"chats":[{"id":');
    const reopened = await ChatStore.open(storage, { now });
    assert.equal(reopened.notices.length, 1);
    assert.match(reopened.notices[0], /index was damaged .* kept aside in .*kept-aside-.*unreadable/);
    assert.deepEqual((await reopened.store.list()).map((c) => c.id), [a.id]);
    const aside = (await readdir(storage.folder)).find((n) => n.startsWith('kept-aside-'))!;
    assert.equal(await readFile(join(storage.folder, aside, 'index.json'), 'utf8'), '{"version":1,"chats":[{"id":');
  });

  it('keeps a newer version\'s store aside untouched and starts a new history', async () => {
    await storage.write('index.json', JSON.stringify({ version: CHAT_STORE_VERSION + 1, chats: [], future: true }));
    const future = chat('from the future');
    await storage.write(`${future.id}.json`, JSON.stringify({ ...future, version: CHAT_STORE_VERSION + 1 }));
    const { store, notices } = await ChatStore.open(storage, { now });
    assert.equal(notices.length, 1);
    assert.match(notices[0], /newer version of Speculate .* kept aside, untouched, in .*newer-version/);
    assert.deepEqual(await store.list(), []);
    await store.save(chat('today'));
    const aside = (await readdir(storage.folder)).find((n) => n.startsWith('kept-aside-'))!;
    assert.deepEqual((await readdir(join(storage.folder, aside))).sort(), [`${future.id}.json`, 'index.json'].sort());
    assert.match(await readFile(join(storage.folder, aside, 'index.json'), 'utf8'), /"future":true/);
  });

  it('keeps a chat file that went bad aside when it is opened, and drops it from the list', async () => {
    const { store } = await ChatStore.open(storage, { now });
    const a = chat('fix the greeting');
    const b = chat('add a farewell');
    await store.save(a);
    await store.save(b);
    await writeFile(join(storage.folder, `${a.id}.json`), JSON.stringify({ ...a, messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'x', type: 'function', function: { name: 'edit', arguments: '{}' } }] }] }));
    const opened = await store.get(a.id);
    assert.equal(opened.ok, false);
    assert.match(!opened.ok ? opened.reason : '', /could not be read \(a tool call has no result\); it was kept aside/);
    assert.deepEqual((await store.list()).map((c) => c.id), [b.id]);
  });

  it('rebuilds without the index, keeping unreadable chat files aside', async () => {
    const { store } = await ChatStore.open(storage, { now });
    const a = chat('fix the greeting');
    await store.save(a);
    await rm(join(storage.folder, 'index.json'));
    await writeFile(join(storage.folder, 'chat-abc-def.json'), 'not json');
    const reopened = await ChatStore.open(storage, { now });
    assert.deepEqual((await reopened.store.list()).map((c) => c.id), [a.id]);
    assert.match(reopened.notices.join(' '), /1 stored chat\(s\) could not be read and were kept aside/);
  });

  it('never throws when the disk fails: it says so and works in memory', async () => {
    const failing: ChatStorage = {
      read: async () => {
        throw Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
      },
      write: async () => undefined,
      remove: async () => undefined,
      list: async () => [],
      keepAside: async () => '',
    };
    const { store, notices } = await ChatStore.open(failing, { now });
    assert.match(notices[0], /could not read its chat history \(EACCES: permission denied\)/);
    assert.deepEqual(await store.list(), []);
  });
});
