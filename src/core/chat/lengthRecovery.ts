// Recovery from an answer cut off at the output limit inside a tool call: finish_reason "length"
// while a call's arguments were still streaming, so they are not JSON. Replayed as it is, such a
// call makes vLLM refuse every later request of the chat; ending the turn on it wastes the work.
// Instead the loop (main chat and speculation alike) answers each call with a "cut off" result the
// model can act on, and asks once more with a higher output limit where the server takes one.
import type { StopKind } from '../llm/llmClient';
import { parseToolArguments } from '../llm/toolArguments';
import type { AssistantMessage, ToolMessage } from '../messages';

/** The raised limit of the retry never goes past this (many models cap their output near it). */
export const MAX_RAISED_OUTPUT_TOKENS = 32_768;
/** …nor below this, for servers that cut very early. */
export const MIN_RAISED_OUTPUT_TOKENS = 8_192;

/** True for an answer stopped at the output limit while writing a tool call (one whose arguments are not JSON). */
export function isCutInsideToolCall(stop: StopKind, message: AssistantMessage): boolean {
  return stop === 'length' && (message.tool_calls ?? []).some((call) => !parseToolArguments(call.function.arguments).ok);
}

export interface CutOffRecovery {
  /** The answer as it joins the history: the cut arguments replaced by `{}`, its text kept. */
  message: AssistantMessage;
  /** One result per call, saying it did not run and why. */
  results: ToolMessage[];
  /** The output limit to ask for on the retry; undefined when the cut answer's size is unknown. */
  maxTokens: number | undefined;
}

/**
 * What the history gets instead of the cut answer, and the limit for the retry: twice what the cut
 * answer used (the server's effective limit), within MIN/MAX_RAISED_OUTPUT_TOKENS.
 */
export function recoverCutOff(message: AssistantMessage, completionTokens: number, finishReason: string | null): CutOffRecovery {
  const calls = message.tool_calls ?? [];
  const results: ToolMessage[] = [];
  const fixed = calls.map((call) => {
    const cut = !parseToolArguments(call.function.arguments).ok;
    const content = cut
      ? `Not run: your answer reached the output limit (finish_reason "${finishReason}") while the arguments of this call were being written, ` +
        `so they arrived incomplete (${call.function.arguments.length} characters, not valid JSON). Send the call again, complete. ` +
        'If its arguments are long (a whole file), split the work into several smaller calls, e.g. write_file a first part, then edit to add the rest.'
      : `Not run: the answer this call came in was cut off at the output limit (finish_reason "${finishReason}"). Send it again if it is still needed.`;
    results.push({ role: 'tool', tool_call_id: call.id, content });
    return cut ? { ...call, function: { ...call.function, arguments: '{}' } } : call;
  });
  const maxTokens = completionTokens > 0 ? Math.min(MAX_RAISED_OUTPUT_TOKENS, Math.max(MIN_RAISED_OUTPUT_TOKENS, completionTokens * 2)) : undefined;
  return { message: { ...message, tool_calls: fixed }, results, maxTokens };
}

export const CUT_OFF_NOTICE = 'The answer was cut off at the output limit in the middle of a tool call; the model was told and asked to send it again.';
