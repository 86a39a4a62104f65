// What a conversation tells its UI while a turn runs: streamed text, tool calls with their
// approval and result, and how the turn ended. Plain data, safe to post to a webview.
import type { ErrorAction, LlmErrorKind, Usage } from '../llm/llmClient';
import type { AssistantMessage, ToolArgs } from '../messages';

export type ToolCallStatus =
  | 'ok' // ran and succeeded
  | 'error' // ran and failed, threw, was unknown or had malformed arguments
  | 'denied' // the user declined it
  | 'refused' // the approval mode does not allow it (plan mode)
  | 'cancelled'; // the turn was aborted before or while it ran

export type TurnErrorKind = LlmErrorKind | 'tool_round_limit';

export type ChatEvent =
  | { type: 'turn_started' }
  | { type: 'text'; delta: string }
  | { type: 'reasoning'; delta: string }
  /** An assistant message joined the history (text and/or tool calls). */
  | { type: 'assistant_message'; message: AssistantMessage }
  | { type: 'tool_call_started'; callId: string; name: string; args: ToolArgs | null; summary: string }
  | { type: 'approval_requested'; callId: string; name: string; summary: string }
  /** A step of a long call while it runs (a sub-agent's tool calls), for its tool card. */
  | { type: 'tool_call_progress'; callId: string; name: string; line: string }
  | {
      type: 'tool_call_finished';
      callId: string;
      name: string;
      summary: string;
      status: ToolCallStatus;
      /** The text the model received as the tool result. */
      result: string;
      filesChanged: string[];
    }
  /** Something the user should know about the answer that is not an error (a tool call written as text). */
  | { type: 'notice'; text: string }
  /** The model answered without further tool calls. */
  | { type: 'turn_done'; message: AssistantMessage; usage: Usage }
  /**
   * The turn stopped on an error; the history is intact. `retryable`: `Conversation.retryLastTurn()`
   * can run it again (the history waits for the model). `actions`: what would fix it.
   */
  | { type: 'turn_error'; kind: TurnErrorKind; message: string; retryable: boolean; actions: ErrorAction[] }
  | { type: 'turn_aborted' };

export type TurnOutcome =
  | { status: 'done'; message: AssistantMessage; usage: Usage; finishReason: string | null }
  | { status: 'error'; kind: TurnErrorKind; message: string; usage: Usage; retryable: boolean; actions: ErrorAction[]; finishReason: string | null }
  | { status: 'aborted'; usage: Usage };
