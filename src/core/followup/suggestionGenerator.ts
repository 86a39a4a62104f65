// Predicts the user's next input with one forked model call, then filters it (suggestionFilter).
// The fork is injected: the session passes one that reuses the main chat's cached prefix.
import type { AssistantMessage, ChatMessage } from '../messages';
import { LlmError, type Usage } from '../llm/llmClient';
import { filterSuggestion, type FilterReason } from './suggestionFilter';

export { FILTER_REASONS, FILTER_RULES, filterSuggestion, isFilterReason } from './suggestionFilter';
export type { FilterReason, FilterRule } from './suggestionFilter';

/**
 * Sent as the last user message of the fork, after the unchanged history, so the provider's
 * prefix cache still covers everything before it. Reused as is by the pipelined suggestion.
 */
export const SUGGESTION_PROMPT = `[Next-input prediction — not a task]
For this one reply, stop working on the task. Guess the exact words the USER will type into this chat next.

Predict what they will actually type, not what you believe they ought to do. Good guesses make the user think "that is what I was about to write".

How to guess:
- If your last message told the user how to go on ("type X to …", "say 'go' to …", "reply yes to …"), predict exactly that.
- If the user asked for several steps and some are done, predict the next one in their own words.
- If you offered options, predict the one this user would most likely pick.
- If you asked whether to carry on, predict a short go-ahead such as "yes" or "go ahead".
- If the work is finished and the next move is obvious, name it concretely: "run the tests" beats "continue".
- After an error, a misunderstanding or an open question, the next move is not obvious: predict nothing.

The prediction:
- 2 to 12 words in this user's language and style (one word only for replies like "yes" or "commit", or a slash command).
- One sentence, one instruction. No praise or thanks, no questions, nothing the user has not brought up, and never your own voice ("Let me…", "I'll…", "You should…").
- No quotes, labels, markdown or explanation, and no tool calls.

Reply with the predicted text and nothing else. When the next move is not obvious, reply with an empty message.`;

/**
 * Suggestions start once the model has answered at least this many user turns. One is enough:
 * what a good prediction needs is the user's own request (their task, language and style) and the
 * model's answer to it (what was done, what it proposes next), and the first exchange has both.
 * Waiting for a second answer made the headline feature look broken on first contact and bought
 * nothing the prompt does not already guard: it tells the model to stay silent when the next step
 * is not obvious, and the filters drop guesses that are generic, evaluative or in the model's voice.
 * Before any answer there is nothing to predict from.
 */
export const MIN_ANSWERED_TURNS = 1;

/** Runs one fork of the main conversation with `extraMessages` appended; tool calls are not executed. */
export type ForkRunner = (
  extraMessages: ChatMessage[],
  signal: AbortSignal,
) => Promise<{ text: string; toolCallsIgnored: number; usage: Usage }>;

/**
 * A ForkRunner over a forked query that returns the assistant message (runForkedQuery's shape):
 * the text is the reply, and tool calls in it are counted, never executed.
 */
export function forkRunnerFromQuery(
  query: (extraMessages: ChatMessage[], signal: AbortSignal) => Promise<{ message: AssistantMessage; usage: Usage }>,
): ForkRunner {
  return async (extraMessages, signal) => {
    const { message, usage } = await query(extraMessages, signal);
    return { text: message.content ?? '', toolCallsIgnored: message.tool_calls?.length ?? 0, usage };
  };
}

/** Why no call was made at all. */
export type SuppressReason = 'disabled' | 'approval_pending' | 'last_turn_failed' | 'plan_mode' | 'user_typing' | 'too_early';

export interface SuggestionConditions {
  /** The user's switch for suggestions. */
  enabled: boolean;
  /** A tool call waits for the user's approval: the user's next input is that decision. */
  approvalPending: boolean;
  /** How the last main turn ended; after a failure or cancel the user must assess first. */
  lastTurn: 'completed' | 'failed' | 'cancelled';
  /** Plan mode: the user reviews a plan instead of giving the next instruction. */
  planMode: boolean;
  /** The chat input holds a draft: the user is writing their own next prompt. */
  userTyping: boolean;
}

export type SuggestionResult =
  | { kind: 'suggestion'; suggestion: string; usage: Usage; toolCallsIgnored: number }
  | { kind: 'suppressed'; suppressed: SuppressReason }
  | { kind: 'filtered'; filtered: FilterReason; text: string; usage: Usage; toolCallsIgnored: number }
  /** The model chose to say nothing: the next step was not obvious. */
  | { kind: 'silent'; usage: Usage; toolCallsIgnored: number }
  /**
   * The call did not finish; nothing is shown. `transient`: waiting may help (network, a busy
   * server); otherwise something must change, and `reason` says what in a few words.
   */
  | { kind: 'failed'; failed: 'aborted' | 'error'; message: string; reason?: string; transient?: boolean };

export interface GenerateSuggestionInput {
  /** The main conversation, used to count answered turns (the fork carries its own copy). */
  history: readonly ChatMessage[];
  fork: ForkRunner;
  signal: AbortSignal;
  conditions: SuggestionConditions;
}

/**
 * How many user turns the model has answered: turns whose last message is an assistant message
 * without tool calls. A turn cut off mid-tool-call is no answer.
 */
export function countAnsweredTurns(history: readonly ChatMessage[]): number {
  let answered = 0;
  for (let i = 0; i < history.length; i++) {
    const message = history[i];
    const next = history[i + 1];
    if (message?.role !== 'assistant' || (message.tool_calls?.length ?? 0) > 0) continue;
    if (next === undefined || next.role === 'user') answered++;
  }
  return answered;
}

/** The first condition that rules out a suggestion, in a fixed order, or null. */
export function suppressionReason(conditions: SuggestionConditions, answeredTurns: number): SuppressReason | null {
  if (!conditions.enabled) return 'disabled';
  if (conditions.approvalPending) return 'approval_pending';
  if (conditions.lastTurn !== 'completed') return 'last_turn_failed';
  if (conditions.planMode) return 'plan_mode';
  if (conditions.userTyping) return 'user_typing';
  if (answeredTurns < MIN_ANSWERED_TURNS) return 'too_early';
  return null;
}

const QUOTE_PAIRS: readonly (readonly [string, string])[] = [
  ['"', '"'],
  ["'", "'"],
  ['\u201c', '\u201d'],
  ['\u2018', '\u2019'],
  ['\u00ab', '\u00bb'],
  ['\u300c', '\u300d'],
];

function stripQuotes(text: string): string {
  let current = text.trim();
  for (let changed = true; changed; ) {
    changed = false;
    for (const [open, close] of QUOTE_PAIRS) {
      if (current.length >= open.length + close.length && current.startsWith(open) && current.endsWith(close)) {
        current = current.slice(open.length, current.length - close.length).trim();
        changed = true;
      }
    }
  }
  return current;
}

/**
 * The suggestion in a model's reply. Accepts plain text or JSON {"suggestion": "…"} (also inside a
 * ```json fence), drops a leading <think> block some models emit anyway, strips quotes and
 * whitespace. Returns '' when the model chose silence.
 */
export function parseSuggestionReply(reply: string): string {
  let text = reply.replace(/^\s*<think>[\s\S]*?<\/think>/i, '').trim();
  const fenced = /^```[\w-]*\s*\n?([\s\S]*?)\n?```$/.exec(text);
  if (fenced) text = (fenced[1] ?? '').trim();
  if (text.startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed === 'object' && parsed !== null && 'suggestion' in parsed) {
        const value = (parsed as { suggestion: unknown }).suggestion;
        return typeof value === 'string' ? stripQuotes(value) : '';
      }
    } catch {
      // Cut off or sloppy JSON: take the string value if one is there; otherwise the text is
      // judged as it stands (the filter rejects a reply wrapped in braces).
      const field = /^\{\s*"suggestion"\s*:\s*"((?:[^"\\]|\\.)*)"/.exec(text);
      if (field) return stripQuotes(unescapeJsonString(field[1] ?? ''));
    }
  }
  return stripQuotes(text);
}

function unescapeJsonString(body: string): string {
  try {
    return JSON.parse(`"${body}"`) as string;
  } catch {
    return body;
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * One prediction of the user's next input. Never throws: every way of not having a suggestion is
 * a result with a reason, so the caller can count it and carry on.
 */
export async function generateSuggestion(input: GenerateSuggestionInput): Promise<SuggestionResult> {
  const { fork, signal } = input;
  const suppressed = suppressionReason(input.conditions, countAnsweredTurns(input.history));
  if (suppressed !== null) return { kind: 'suppressed', suppressed };
  if (signal.aborted) return { kind: 'failed', failed: 'aborted', message: 'Cancelled before the request was sent.' };

  let reply: Awaited<ReturnType<ForkRunner>>;
  try {
    reply = await fork([{ role: 'user', content: SUGGESTION_PROMPT }], signal);
  } catch (error) {
    if (signal.aborted) return { kind: 'failed', failed: 'aborted', message: errorMessage(error) };
    const known = error instanceof LlmError ? { reason: error.reason, transient: error.transient } : {};
    return { kind: 'failed', failed: 'error', message: errorMessage(error), ...known };
  }
  // A reply that lands after the user moved on belongs to a conversation that no longer exists.
  if (signal.aborted) return { kind: 'failed', failed: 'aborted', message: 'Cancelled while the request was running.' };

  const { usage, toolCallsIgnored } = reply;
  const text = parseSuggestionReply(reply.text);
  if (text === '') return { kind: 'silent', usage, toolCallsIgnored };
  const filtered = filterSuggestion(text);
  if (filtered !== null) return { kind: 'filtered', filtered, text, usage, toolCallsIgnored };
  return { kind: 'suggestion', suggestion: text, usage, toolCallsIgnored };
}
