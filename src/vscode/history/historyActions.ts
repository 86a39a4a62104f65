// The history view's actions on the host: list and search, open (the running chat stops first and
// stays in the history), rename and delete, and New Chat, which keeps the old chat in the history.
import * as vscode from 'vscode';
import type { StoredChat } from '../../core/chatStore/chatRecord';
import type { ChatSession } from '../../core/session';
import type { ChatMessage } from '../../core/messages';
import type { UsageSnapshot } from '../../core/usage/usageLedger';
import type { HostToWebview, WebviewToHost } from '../../shared/protocol';
import { messageTypeGuard, unhandledMessage } from '../common/unhandledMessage';
import type { ChatHistory } from './chatHistory';

/** The chat's side of the history actions: the presenter implements it. */
export interface HistoryTranscript {
  post(message: HostToWebview): void;
  notice(text: string): void;
  error(message: string, retryable: boolean): void;
  /** Empties the transcript (New Chat). */
  clear(): void;
  loadChat(chat: { messages: readonly ChatMessage[]; view?: unknown; usage?: UsageSnapshot; title: string }): void;
  setTitle(title: string): void;
}

export interface HistoryActionsDeps {
  history: ChatHistory;
  presenter: HistoryTranscript;
  /** The session, created (and the open chat restored) on first use. */
  session: () => Promise<ChatSession | undefined>;
  /** Chips and other per-chat state of the host that a chat switch drops. */
  onChatSwitched: () => void;
  log: (line: string) => void;
}

const IDLE_WAIT_MS = 5_000;

/** The webview's messages this room answers. */
const HISTORY_MESSAGE_TYPES = ['historyQuery', 'historyOpen', 'historyRename', 'historyDelete'] as const;
export type HistoryMessage = Extract<WebviewToHost, { type: (typeof HISTORY_MESSAGE_TYPES)[number] }>;
export const isHistoryMessage = messageTypeGuard<HistoryMessage>(HISTORY_MESSAGE_TYPES);

export class HistoryActions {
  private lastQuery = '';

  constructor(private readonly deps: HistoryActionsDeps) {}

  handle(message: HistoryMessage): Promise<void> {
    switch (message.type) {
      case 'historyQuery':
        return this.list(message.query);
      case 'historyOpen':
        return this.open(message.id);
      case 'historyRename':
        return this.rename(message.id, message.title);
      case 'historyDelete':
        return this.delete(message.id);
      default:
        return unhandledMessage(message, 'history room');
    }
  }

  async list(query: string): Promise<void> {
    this.lastQuery = query;
    const entries = await this.deps.history.list(query);
    this.deps.presenter.post({ type: 'history', query, entries });
  }

  private refresh(): Promise<void> {
    return this.list(this.lastQuery);
  }

  /** Stops a running turn and waits for it to settle, so its last events land in the old chat. */
  private async settle(session: ChatSession): Promise<void> {
    if (!session.busy) return;
    session.stop();
    const deadline = Date.now() + IDLE_WAIT_MS;
    while (session.busy && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  }

  async open(id: string): Promise<void> {
    const session = await this.deps.session();
    if (!session) return;
    if (id === this.deps.history.openChatId) return;
    await this.settle(session);
    const opened = await this.deps.history.open(id);
    if (!opened.ok) {
      this.deps.presenter.notice(opened.reason);
      await this.refresh();
      return;
    }
    await this.show(session, opened.chat);
  }

  /** Puts a stored chat on screen and in the session (also after a reload). */
  /** After a reload: the chat that was open comes back as it was (nothing of a speculation does). */
  async restoreOpenChat(session: ChatSession): Promise<void> {
    try {
      const chat = await this.deps.history.restoreOpenChat();
      if (chat) await this.show(session, chat);
    } catch (error) {
      this.deps.log(`restoring the open chat failed: ${String(error)}`);
    }
    for (const notice of this.deps.history.takeNotices()) {
      this.deps.presenter.notice(notice);
      void vscode.window.showWarningMessage(`Speculate: ${notice}`);
    }
  }

  async show(session: ChatSession, chat: StoredChat): Promise<void> {
    const result = await session.openChat(chat);
    this.deps.onChatSwitched();
    if (!result.ok) {
      this.deps.log(`opening chat ${chat.id} failed: ${result.reason}`);
      this.deps.presenter.clear();
      this.deps.presenter.error(`This chat could not be opened: ${result.reason}`, false);
      return;
    }
    this.deps.presenter.loadChat(chat);
    const last = chat.messages[chat.messages.length - 1];
    if (last && (last.role === 'user' || last.role === 'tool')) {
      this.deps.presenter.error('This answer did not finish before the window closed. Retry runs it again from here.', true);
    }
  }

  async rename(id: string, title: string): Promise<void> {
    const result = await this.deps.history.rename(id, title);
    if (!result.ok) this.deps.presenter.notice(result.reason);
    else if (id === this.deps.history.openChatId) this.deps.presenter.setTitle(this.deps.history.title);
    await this.refresh();
  }

  async delete(id: string): Promise<void> {
    const session = await this.deps.session();
    if (session && id === this.deps.history.openChatId) await this.settle(session);
    if (await this.deps.history.delete(id)) await this.newChat(session, false);
    await this.refresh();
  }

  /** New Chat: the old chat is saved and stays in the history, so nothing needs confirming. */
  async newChat(session: ChatSession | undefined, keepOld = true): Promise<void> {
    if (session) await this.settle(session);
    await this.deps.history.startNew(keepOld);
    await session?.newChat();
    this.deps.onChatSwitched();
    this.deps.presenter.clear();
  }
}
