// The chat history of one workspace: every chat in its own file, a small index for the list, the
// oldest chats pruned past a size bound. Opening never throws: what cannot be read is kept aside.
import type { ChatMessage } from '../messages';
import {
  CHAT_ID,
  CHAT_STORE_VERSION,
  parseIndex,
  parseStoredChat,
  summaryOf,
  titleFrom,
  type ChatSummary,
  type StoredChat,
} from './chatRecord';
import type { ChatStorage } from './chatStorage';

const INDEX = 'index.json';
export const DEFAULT_MAX_STORE_BYTES = 50 * 1024 * 1024;

export interface ChatStoreOptions {
  /** The bound on all chat files together; the oldest chats go first (never the open one). */
  maxBytes?: number;
  now?: () => number;
  log?: (line: string) => void;
}

export interface OpenedChatStore {
  store: ChatStore;
  /** Sentences for the user about files kept aside (corrupt or from a newer version). */
  notices: string[];
}

const fileOf = (id: string) => `${id}.json`;

/** Plain text of a chat for search: the user's words and the answers, lower-cased. */
function searchTextOf(messages: readonly ChatMessage[]): string {
  const parts: string[] = [];
  for (const m of messages) {
    if (m.role === 'user' || (m.role === 'assistant' && m.content)) parts.push(m.content ?? '');
  }
  return parts.join('\n').toLowerCase();
}

export class ChatStore {
  private readonly chats = new Map<string, ChatSummary>();
  private readonly searchText = new Map<string, { updatedAt: number; text: string }>();
  private queue: Promise<unknown> = Promise.resolve();
  private readonly notices: string[] = [];

  private constructor(
    private readonly storage: ChatStorage,
    private readonly options: ChatStoreOptions,
  ) {}

  /**
   * Reads the index (or rebuilds it from the chat files when it is missing or broken). An index or
   * chat written by a newer version, or one that cannot be read, is moved into a kept-aside folder
   * and named in a notice; the store then works on what is left. Never throws.
   */
  static async open(storage: ChatStorage, options: ChatStoreOptions = {}): Promise<OpenedChatStore> {
    const store = new ChatStore(storage, options);
    try {
      await store.load();
    } catch (error) {
      store.log(`chat history could not be read: ${String(error)}`);
      store.notices.push(`Speculate could not read its chat history (${error instanceof Error ? error.message : String(error)}); chats of this session are kept in memory only.`);
    }
    return { store, notices: [...store.notices] };
  }

  private get now(): number {
    return (this.options.now ?? Date.now)();
  }

  private log(line: string): void {
    this.options.log?.(line);
  }

  private asideFolder(why: string): string {
    return `kept-aside-${new Date(this.now).toISOString().replace(/[:.]/g, '-')}-${why}`;
  }

  private async load(): Promise<void> {
    const text = await this.storage.read(INDEX);
    if (text !== undefined) {
      const index = parseIndex(text);
      if (index.ok) {
        for (const chat of index.value.chats) this.chats.set(chat.id, chat);
        return;
      }
      const files = index.tooNew ? [INDEX, ...(await this.storage.list()).filter((n) => CHAT_ID.test(n.replace(/\.json$/, '')))] : [INDEX];
      const where = await this.storage.keepAside(files, this.asideFolder(index.tooNew ? 'newer-version' : 'unreadable'));
      this.notices.push(
        index.tooNew
          ? `The chat history here was written by a newer version of Speculate (${index.reason}). It was kept aside, untouched, in ${where}; this version starts a new history.`
          : `The chat history index was damaged (${index.reason}) and was kept aside in ${where}; the history was rebuilt from the chat files.`,
      );
      if (index.tooNew) return;
    }
    await this.rebuild();
  }

  /** The index from the chat files themselves (after a lost or damaged index). */
  private async rebuild(): Promise<void> {
    const unreadable: string[] = [];
    let newer = 0;
    for (const name of await this.storage.list()) {
      if (name === INDEX || !CHAT_ID.test(name.replace(/\.json$/, ''))) continue;
      const text = await this.storage.read(name);
      if (text === undefined) continue;
      const parsed = parseStoredChat(text);
      if (parsed.ok) this.chats.set(parsed.value.id, summaryOf(parsed.value, Buffer.byteLength(text)));
      else {
        unreadable.push(name);
        if (parsed.tooNew) newer++;
      }
    }
    if (unreadable.length > 0) {
      const where = await this.storage.keepAside(unreadable, this.asideFolder(newer > 0 ? 'newer-version' : 'unreadable'));
      this.notices.push(`${unreadable.length} stored chat(s) could not be read${newer > 0 ? ' (a newer Speculate wrote them)' : ''} and were kept aside in ${where}.`);
    }
    if (this.chats.size > 0 || (await this.storage.read(INDEX)) === undefined) await this.writeIndex();
  }

  private async writeIndex(): Promise<void> {
    const chats = [...this.chats.values()].sort((a, b) => b.updatedAt - a.updatedAt);
    await this.storage.write(INDEX, JSON.stringify({ version: CHAT_STORE_VERSION, chats }));
  }

  /** Writes go one after another: two quick saves never interleave their index updates. */
  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Newest first; with a query, the chats whose title or text contains every word of it. */
  async list(query = ''): Promise<ChatSummary[]> {
    const all = [...this.chats.values()].sort((a, b) => b.updatedAt - a.updatedAt);
    const words = query.toLowerCase().split(/\s+/).filter(Boolean);
    if (words.length === 0) return all;
    const found: ChatSummary[] = [];
    for (const chat of all) {
      const text = `${chat.title.toLowerCase()}\n${await this.textOf(chat)}`;
      if (words.every((w) => text.includes(w))) found.push(chat);
    }
    return found;
  }

  private async textOf(chat: ChatSummary): Promise<string> {
    const cached = this.searchText.get(chat.id);
    if (cached && cached.updatedAt === chat.updatedAt) return cached.text;
    const stored = await this.get(chat.id);
    const text = stored.ok ? searchTextOf(stored.value.messages) : '';
    this.searchText.set(chat.id, { updatedAt: chat.updatedAt, text });
    return text;
  }

  /** One chat with its messages; a file that went bad since the index was written is kept aside. */
  async get(id: string): Promise<{ ok: true; value: StoredChat } | { ok: false; reason: string }> {
    if (!CHAT_ID.test(id) || !this.chats.has(id)) return { ok: false, reason: 'This chat is no longer in the history.' };
    const text = await this.storage.read(fileOf(id));
    if (text === undefined) {
      await this.serial(async () => {
        this.chats.delete(id);
        await this.writeIndex();
      });
      return { ok: false, reason: 'This chat\'s file is gone; it was removed from the history.' };
    }
    const parsed = parseStoredChat(text);
    if (parsed.ok) return parsed;
    const where = await this.serial(async () => {
      this.chats.delete(id);
      const aside = await this.storage.keepAside([fileOf(id)], this.asideFolder(parsed.tooNew ? 'newer-version' : 'unreadable'));
      await this.writeIndex();
      return aside;
    });
    return { ok: false, reason: `This chat could not be read (${parsed.reason}); it was kept aside in ${where}.` };
  }

  /** Saves a chat (new or changed) and prunes the oldest others past the size bound. */
  save(chat: StoredChat): Promise<void> {
    return this.serial(async () => {
      const text = JSON.stringify({ ...chat, version: CHAT_STORE_VERSION });
      await this.storage.write(fileOf(chat.id), text);
      this.chats.set(chat.id, summaryOf(chat, Buffer.byteLength(text)));
      await this.prune(chat.id);
      await this.writeIndex();
    });
  }

  private async prune(keep: string): Promise<void> {
    const max = this.options.maxBytes ?? DEFAULT_MAX_STORE_BYTES;
    let total = 0;
    for (const chat of this.chats.values()) total += chat.bytes;
    const oldestFirst = [...this.chats.values()].filter((c) => c.id !== keep).sort((a, b) => a.updatedAt - b.updatedAt);
    for (const chat of oldestFirst) {
      if (total <= max) break;
      await this.storage.remove(fileOf(chat.id));
      this.chats.delete(chat.id);
      this.searchText.delete(chat.id);
      total -= chat.bytes;
      this.log(`chat history over ${max} bytes: pruned "${chat.title}" (${chat.id})`);
    }
  }

  /** The user's own title; it sticks (later prompts do not retitle the chat). */
  async rename(id: string, title: string): Promise<{ ok: true } | { ok: false; reason: string }> {
    const stored = await this.get(id);
    if (!stored.ok) return stored;
    const clean = titleFrom(title);
    await this.save({ ...stored.value, title: clean, titleEdited: true, updatedAt: stored.value.updatedAt });
    return { ok: true };
  }

  async delete(id: string): Promise<void> {
    if (!CHAT_ID.test(id) || !this.chats.has(id)) return;
    await this.serial(async () => {
      await this.storage.remove(fileOf(id));
      this.chats.delete(id);
      this.searchText.delete(id);
      await this.writeIndex();
    });
  }

  has(id: string): boolean {
    return this.chats.has(id);
  }
}
