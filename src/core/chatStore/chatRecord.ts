// What one stored chat is, and the checks a record read back from disk must pass before it is used:
// a file is untrusted (another version, a crash, a hand edit), so anything unexpected is refused.
import { isToolResultPairingValid } from '../messages/pairing';
import type { ChatMessage, ToolCall } from '../messages';
import type { UsageSnapshot } from '../usage/usageLedger';

/** The version this code writes; a store or chat with a higher one is kept aside, never overwritten. */
export const CHAT_STORE_VERSION = 1;

const MAX_TITLE_CHARS = 80;

export interface StoredChat {
  version: number;
  id: string;
  /** The first prompt, or the user's own name for the chat once they renamed it. */
  title: string;
  /** Renamed by the user: later turns never retitle it. */
  titleEdited: boolean;
  createdAt: number;
  updatedAt: number;
  /** The workspace folder's name when the chat was last saved. */
  workspace: string;
  /** The main model of the chat's last turn. */
  model: string;
  /** The history exactly as the model saw it: tool calls, results and attached context included. */
  messages: ChatMessage[];
  usage: UsageSnapshot;
  /** Checkpoint ids (what each accept changed) the chat's turns refer to. */
  checkpoints: string[];
  /** The front's own picture of the transcript (notices, approvals, chips); opaque to the engine. */
  view?: unknown;
}

/** A chat as the history list shows it, without its messages. */
export interface ChatSummary {
  id: string;
  title: string;
  createdAt: number;
  updatedAt: number;
  workspace: string;
  model: string;
  /** Size of the stored file, for the size bound. */
  bytes: number;
}

export type ReadResult<T> = { ok: true; value: T } | { ok: false; reason: string; tooNew?: boolean };

/** Only what a generated id contains: an id from the webview can never name another file. */
export const CHAT_ID = /^chat-[a-z0-9]{1,16}-[a-z0-9]{1,16}$/;

export function newChatId(now: number, random: () => number = Math.random): string {
  return `chat-${now.toString(36)}-${Math.floor(random() * 36 ** 8).toString(36)}`;
}

/** A title from a prompt: one line, at most 80 characters. */
export function titleFrom(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  if (line.length <= MAX_TITLE_CHARS) return line || 'Untitled chat';
  return `${line.slice(0, MAX_TITLE_CHARS - 1).trimEnd()}…`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const isTime = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;

function isToolCall(value: unknown): value is ToolCall {
  if (!isRecord(value) || typeof value.id !== 'string' || value.type !== 'function' || !isRecord(value.function)) return false;
  return typeof value.function.name === 'string' && typeof value.function.arguments === 'string';
}

function isMessage(value: unknown): value is ChatMessage {
  if (!isRecord(value)) return false;
  switch (value.role) {
    case 'user':
      return typeof value.content === 'string';
    case 'assistant':
      return (value.content === null || typeof value.content === 'string') && (value.tool_calls === undefined || (Array.isArray(value.tool_calls) && value.tool_calls.every(isToolCall)));
    case 'tool':
      return typeof value.tool_call_id === 'string' && typeof value.content === 'string';
    default:
      return false; // a system message is never stored: the current system prompt is used
  }
}

/** A chat file's content, checked field by field; the reason says what was wrong. */
export function parseStoredChat(text: string): ReadResult<StoredChat> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return { ok: false, reason: `not valid JSON (${error instanceof Error ? error.message : String(error)})` };
  }
  if (!isRecord(raw)) return { ok: false, reason: 'not a chat record' };
  if (typeof raw.version !== 'number') return { ok: false, reason: 'no version' };
  if (raw.version > CHAT_STORE_VERSION) return { ok: false, reason: `written by a newer Speculate (format ${raw.version})`, tooNew: true };
  if (typeof raw.id !== 'string' || !CHAT_ID.test(raw.id)) return { ok: false, reason: 'no valid id' };
  if (typeof raw.title !== 'string' || !isTime(raw.createdAt) || !isTime(raw.updatedAt)) return { ok: false, reason: 'no title or dates' };
  if (!Array.isArray(raw.messages) || !raw.messages.every(isMessage)) return { ok: false, reason: 'a message is malformed' };
  if (!isToolResultPairingValid(raw.messages)) return { ok: false, reason: 'a tool call has no result' };
  return {
    ok: true,
    value: {
      version: raw.version,
      id: raw.id,
      title: titleFrom(raw.title),
      titleEdited: raw.titleEdited === true,
      createdAt: raw.createdAt,
      updatedAt: raw.updatedAt,
      workspace: typeof raw.workspace === 'string' ? raw.workspace : '',
      model: typeof raw.model === 'string' ? raw.model : '',
      messages: raw.messages,
      usage: isRecord(raw.usage) && Array.isArray(raw.usage.entries) ? (raw.usage as unknown as UsageSnapshot) : { entries: [] },
      checkpoints: Array.isArray(raw.checkpoints) ? raw.checkpoints.filter((c): c is string => typeof c === 'string') : [],
      ...(raw.view !== undefined ? { view: raw.view } : {}),
    },
  };
}

export interface StoredIndex {
  version: number;
  chats: ChatSummary[];
}

function isSummary(value: unknown): value is ChatSummary {
  return (
    isRecord(value) &&
    typeof value.id === 'string' &&
    CHAT_ID.test(value.id) &&
    typeof value.title === 'string' &&
    isTime(value.createdAt) &&
    isTime(value.updatedAt) &&
    typeof value.workspace === 'string' &&
    typeof value.model === 'string' &&
    isTime(value.bytes)
  );
}

export function parseIndex(text: string): ReadResult<StoredIndex> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return { ok: false, reason: `not valid JSON (${error instanceof Error ? error.message : String(error)})` };
  }
  if (!isRecord(raw) || typeof raw.version !== 'number' || !Array.isArray(raw.chats)) return { ok: false, reason: 'not a chat index' };
  if (raw.version > CHAT_STORE_VERSION) return { ok: false, reason: `written by a newer Speculate (format ${raw.version})`, tooNew: true };
  // One bad entry costs that entry, not the whole history; its file is found again on the next rebuild.
  return { ok: true, value: { version: raw.version, chats: raw.chats.filter(isSummary) } };
}

export function summaryOf(chat: StoredChat, bytes: number): ChatSummary {
  return { id: chat.id, title: chat.title, createdAt: chat.createdAt, updatedAt: chat.updatedAt, workspace: chat.workspace, model: chat.model, bytes };
}
