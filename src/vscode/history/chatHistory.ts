// The open chat and its history for this workspace, on the VS Code side: where the store lives (the
// extension's own storage, never settings), which chat is open, and saving it as it changes.
import * as vscode from 'vscode';
import { newChatId, titleFrom, type ChatSummary, type StoredChat } from '../../core/chatStore/chatRecord';
import { NodeChatStorage, type ChatStorage } from '../../core/chatStore/chatStorage';
import { ChatStore } from '../../core/chatStore/chatStore';
import { userTextOf } from '../../core/context/attachments';
import type { ChatMessage } from '../../core/messages';
import type { UsageSnapshot } from '../../core/usage/usageLedger';
import type { HistoryEntry } from '../../shared/protocol';
import { VsCodeChatStorage } from './vscodeChatStorage';

const OPEN_CHAT_KEY = 'speculate.openChat';
const SAVE_DELAY_MS = 250;

/** What the open chat is made of right now (the session's messages, the presenter's view). */
export interface OpenChatContent {
  messages: ChatMessage[];
  usage: UsageSnapshot;
  view: unknown;
  model: string;
}

export interface ChatHistoryDeps {
  context: Pick<vscode.ExtensionContext, 'storageUri' | 'globalStorageUri' | 'workspaceState'>;
  workspaceName: () => string;
  maxBytes: () => number;
  /** The open chat's content, read when it is saved. */
  content: () => OpenChatContent | undefined;
  /** The open chat got its title from its first prompt. */
  titleChanged?: (title: string) => void;
  log: (line: string) => void;
}

function storageFor(context: ChatHistoryDeps['context']): ChatStorage {
  // Per workspace; a window without a workspace has no storageUri, and its chats go with the user.
  const base = vscode.Uri.joinPath(context.storageUri ?? context.globalStorageUri, 'chats');
  return base.scheme === 'file' ? new NodeChatStorage(base.fsPath) : new VsCodeChatStorage(base);
}

export class ChatHistory implements vscode.Disposable {
  private storePromise: Promise<ChatStore> | undefined;
  private notices: string[] = [];
  private current: { id: string; createdAt: number; title: string; titleEdited: boolean };
  private saveTimer: ReturnType<typeof setTimeout> | undefined;
  private saving: Promise<void> = Promise.resolve();

  constructor(private readonly deps: ChatHistoryDeps) {
    this.current = this.freshChat();
  }

  private freshChat(): { id: string; createdAt: number; title: string; titleEdited: boolean } {
    return { id: newChatId(Date.now()), createdAt: Date.now(), title: '', titleEdited: false };
  }

  /** Opens the store on first use; what it could not read comes back once as notices. */
  private store(): Promise<ChatStore> {
    this.storePromise ??= ChatStore.open(storageFor(this.deps.context), {
      maxBytes: this.deps.maxBytes(),
      log: (line) => this.deps.log(line),
    }).then(({ store, notices }) => {
      this.notices.push(...notices);
      for (const notice of notices) this.deps.log(`chat history: ${notice}`);
      return store;
    });
    return this.storePromise;
  }

  /** Notices about kept-aside files not yet shown to the user (each is handed out once). */
  takeNotices(): string[] {
    const notices = this.notices;
    this.notices = [];
    return notices;
  }

  get openChatId(): string {
    return this.current.id;
  }

  get title(): string {
    return this.current.title;
  }

  /** The chat that was open when the window closed (or reloaded), if it is still stored. */
  async restoreOpenChat(): Promise<StoredChat | undefined> {
    const store = await this.store();
    const id = this.deps.context.workspaceState.get<string>(OPEN_CHAT_KEY);
    if (!id || !store.has(id)) return undefined;
    const chat = await store.get(id);
    if (!chat.ok) {
      this.notices.push(chat.reason);
      return undefined;
    }
    this.adopt(chat.value);
    return chat.value;
  }

  private adopt(chat: StoredChat): void {
    this.current = { id: chat.id, createdAt: chat.createdAt, title: chat.title, titleEdited: chat.titleEdited };
    void this.deps.context.workspaceState.update(OPEN_CHAT_KEY, chat.id);
  }

  /** Saves the open chat soon (changes come in bursts: a turn, its usage, its notice). */
  scheduleSave(): void {
    if (this.saveTimer) clearTimeout(this.saveTimer);
    this.saveTimer = setTimeout(() => {
      this.saveTimer = undefined;
      void this.saveNow();
    }, SAVE_DELAY_MS);
  }

  /** Saves at once what is pending (before switching chats, on shutdown). */
  async flush(): Promise<void> {
    if (this.saveTimer) {
      clearTimeout(this.saveTimer);
      this.saveTimer = undefined;
      await this.saveNow();
    }
    await this.saving;
  }

  private saveNow(): Promise<void> {
    const content = this.deps.content();
    // An empty chat is not history: New Chat twice leaves nothing behind.
    if (!content || content.messages.length === 0) return this.saving;
    const firstPrompt = content.messages.find((m) => m.role === 'user');
    if (!this.current.titleEdited && firstPrompt?.role === 'user') {
      const title = titleFrom(userTextOf(firstPrompt.content));
      if (title !== this.current.title) this.deps.titleChanged?.(title);
      this.current.title = title;
    }
    const chat: StoredChat = {
      version: 1,
      id: this.current.id,
      title: this.current.title || 'Untitled chat',
      titleEdited: this.current.titleEdited,
      createdAt: this.current.createdAt,
      updatedAt: Date.now(),
      workspace: this.deps.workspaceName(),
      model: content.model,
      messages: content.messages,
      usage: content.usage,
      checkpoints: [],
      view: content.view,
    };
    void this.deps.context.workspaceState.update(OPEN_CHAT_KEY, chat.id);
    this.saving = this.saving
      .then(async () => (await this.store()).save(chat))
      .catch((error: unknown) => this.deps.log(`saving the chat failed: ${String(error)}`));
    return this.saving;
  }

  /** New Chat: the open one stays in the history (saved first, unless it was just deleted), a new one starts. */
  async startNew(saveOpen = true): Promise<void> {
    if (saveOpen) await this.flush();
    else this.cancelSave();
    await this.saving;
    this.current = this.freshChat();
    await this.deps.context.workspaceState.update(OPEN_CHAT_KEY, this.current.id);
  }

  async list(query: string): Promise<HistoryEntry[]> {
    await this.flush();
    const chats = await (await this.store()).list(query);
    return chats.map((chat: ChatSummary) => ({
      id: chat.id,
      title: chat.title,
      updatedAt: Math.round(chat.updatedAt),
      workspace: chat.workspace,
      model: chat.model,
      current: chat.id === this.current.id,
    }));
  }

  /** A stored chat, which then is the open one. */
  async open(id: string): Promise<{ ok: true; chat: StoredChat } | { ok: false; reason: string }> {
    await this.flush();
    const chat = await (await this.store()).get(id);
    if (!chat.ok) return chat;
    this.adopt(chat.value);
    return { ok: true, chat: chat.value };
  }

  async rename(id: string, title: string): Promise<{ ok: true } | { ok: false; reason: string }> {
    await this.flush();
    const result = await (await this.store()).rename(id, title);
    if (result.ok && id === this.current.id) this.current = { ...this.current, title: titleFrom(title), titleEdited: true };
    return result;
  }

  /** Deletes a chat; returns true when it was the open one (the caller then starts a new chat). */
  async delete(id: string): Promise<boolean> {
    const wasOpen = id === this.current.id;
    // The open chat's pending save must not bring it back.
    if (wasOpen) this.cancelSave();
    else await this.flush();
    await this.saving;
    await (await this.store()).delete(id);
    return wasOpen;
  }

  private cancelSave(): void {
    if (this.saveTimer) clearTimeout(this.saveTimer);
    this.saveTimer = undefined;
  }

  dispose(): void {
    this.cancelSave();
  }
}
