// What a chat session tells its UI (VS Code or the CLI): the chat's own events and the follow-up's.
// Plain data, safe to post to a webview; the UI never reaches into the engine's objects.
import type { ApprovalMode } from '../chat/approvals';
import type { ChatEvent } from '../chat/events';
import type { CheckpointSummary } from '../checkpoints';
import type { Attachment } from '../context/attachments';
import type { ContextSource } from '../context/turnContext';
import type { FollowupConfig, FollowupEvent } from '../followup/followupPorts';
import type { TokenCounts, UsageSnapshot, UsageSource } from '../usage/usageLedger';

export type { ChatPoint } from '../followup/followupPorts';

export interface SessionConfig extends FollowupConfig {
  approvalMode: ApprovalMode;
  /** What the agent tool's sub-agents run on: the fast model (default) or the main one. */
  subAgentModel?: 'fast' | 'main';
}

export type SessionEvent =
  | FollowupEvent
  | { type: 'chat'; event: ChatEvent }
  /** The user's words (attachments apart) and where the message sits in the history. */
  | { type: 'user_message'; text: string; historyIndex: number; attachments: Attachment[] }
  /** What the turn about to run has in its system prompt beyond the fixed part (instructions, memory, skills). */
  | { type: 'context_used'; sources: ContextSource[] }
  /** Edit & resend or Regenerate cut the history to its first `length` messages. */
  | { type: 'history_truncated'; length: number }
  /** Tokens one turn, suggestion or speculation spent; `chat` is the chat's running total. */
  | { type: 'usage'; source: UsageSource; model: string; counts: TokenCounts; chat: UsageSnapshot }
  /** A checkpoint was undone or redone (state and files as they are now). */
  | { type: 'checkpoint_changed'; checkpoint: CheckpointSummary };
