// One chat: its typed history and the agent loop (stream → run tool calls → send results → until
// the model stops calling tools), cancellable at any point, publishing ChatEvents for the UI.
import { isToolResultPairingValid } from '../messages/pairing';
import { LlmError, type ErrorAction, type LlmClient, type StopKind, type Usage } from '../llm/llmClient';
import { parseToolArguments } from '../llm/toolArguments';
import type { Tool, ToolContext, ToolResult } from '../tools/types';
import type { ApprovalAnswer, ApprovalPrompter, ApprovalScheduler, PartialApproval } from './approvals';
import { createHash } from 'node:crypto';
import type { ChatEvent, ToolCallStatus, TurnOutcome } from './events';
import type { AssistantMessage, ChatMessage, ToolArgs, ToolCall, ToolDefinition } from '../messages';
import type { ToolRegistry } from './toolRegistry';
import { CUT_OFF_NOTICE, isCutInsideToolCall, recoverCutOff } from './lengthRecovery';

/** Model round trips in one turn before the loop stops and hands back to the user. */
export const MAX_TOOL_ROUNDS_PER_TURN = 100;

export interface ConversationOptions {
  llm: LlmClient;
  model: string;
  systemPrompt: string;
  tools: ToolRegistry;
  /** Ports for the tools (fs, process runner, …); the loop sets `signal` per turn. */
  toolContext: ToolContext;
  approvals: ApprovalScheduler;
  prompter: ApprovalPrompter;
  /**
   * Told after each turn that ended with an answer (and after appended messages that end with one):
   * what the last request sent, plus the reply. Forks replay exactly this (the session keeps it).
   */
  onSettled?: (request: SettledRequest) => void;
  temperature?: number;
  /** Sent as ChatRequest.thinking; unset leaves the provider's default. */
  thinking?: boolean;
  maxToolRounds?: number;
  /** A history to continue (e.g. restored from disk); must be well paired. */
  history?: readonly ChatMessage[];
}

export interface TurnOptions {
  signal?: AbortSignal;
}

export type AppendResult = { ok: true } | { ok: false; reason: string };

/** The last request of a settled turn as it was sent (after the system message), with the reply. */
export interface SettledRequest {
  systemPrompt: string;
  tools: ToolDefinition[];
  temperature?: number;
  /** The history the request sent, then the reply it got. */
  history: readonly ChatMessage[];
  model: string;
}

export class Conversation {
  private readonly history: ChatMessage[];
  private readonly listeners = new Set<(event: ChatEvent) => void>();
  private model: string;
  private systemPrompt: string;
  private turnAbort: AbortController | undefined;

  constructor(private readonly options: ConversationOptions) {
    this.model = options.model;
    this.systemPrompt = options.systemPrompt;
    this.history = structuredClone([...(options.history ?? [])]);
  }

  /** A copy of the history (no system message); changing it changes nothing here. */
  get messages(): ChatMessage[] {
    return structuredClone(this.history);
  }

  get busy(): boolean {
    return this.turnAbort !== undefined;
  }

  setModel(model: string): void {
    this.model = model;
  }

  setSystemPrompt(systemPrompt: string): void {
    this.systemPrompt = systemPrompt;
  }

  subscribe(listener: (event: ChatEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Adds the user's message and runs the agent loop until the model answers without tool calls. */
  send(text: string, options: TurnOptions = {}): Promise<TurnOutcome> {
    this.assertIdle();
    this.history.push({ role: 'user', content: text });
    return this.runTurn(options);
  }

  /**
   * True when the history waits for the model: it ends with the user's message (a turn that failed
   * or was cancelled before the answer) or with tool results (a turn stopped between rounds, or
   * speculated work injected up to a boundary).
   */
  canResume(): boolean {
    const last = this.history[this.history.length - 1];
    return last !== undefined && (last.role === 'user' || last.role === 'tool');
  }

  /**
   * Runs the loop again from the history as it is. After a turn_error the user's message (and any
   * tool results already obtained) are still in place, so this retries without repeating tool
   * calls that ran; after injected speculated messages it lets the agent continue live.
   */
  resume(options: TurnOptions = {}): Promise<TurnOutcome> {
    this.assertIdle();
    if (!this.canResume()) throw new Error('Nothing to resume: the last message is already an answer.');
    return this.runTurn(options);
  }

  /** The UI's "Retry" after an error: the same as resume(). */
  retryLastTurn(options: TurnOptions = {}): Promise<TurnOutcome> {
    return this.resume(options);
  }

  /** Cancels the running turn (the HTTP request closes, pending tool calls are marked cancelled). */
  abort(): void {
    this.turnAbort?.abort();
  }

  /**
   * Adds messages produced elsewhere (an accepted speculation). They must keep every tool call
   * paired with its result. When they end with a final answer the conversation settles as after a
   * turn (onSettled), so the next fork starts from the accepted conversation.
   */
  appendMessages(messages: readonly ChatMessage[]): AppendResult {
    if (this.busy) return { ok: false, reason: 'A turn is running; wait for it or abort it first.' };
    if (messages.some((m) => m.role === 'system')) return { ok: false, reason: 'A system message cannot join the history.' };
    const combined = [...this.history, ...messages];
    if (!isToolResultPairingValid(combined)) {
      return { ok: false, reason: 'The messages leave a tool call without its result (or a result without its call).' };
    }
    this.history.push(...structuredClone([...messages]));
    const last = this.history[this.history.length - 1];
    if (last?.role === 'assistant' && !last.tool_calls?.length) this.settle(this.options.tools.definitions());
    return { ok: true };
  }

  /**
   * Keeps the first `length` messages (Edit & resend, Regenerate). Only a cut before a user message
   * or after the last one is allowed: anything else would split a tool call from its result.
   */
  truncate(length: number): AppendResult {
    if (this.busy) return { ok: false, reason: 'A turn is running; wait for it or stop it first.' };
    if (!Number.isInteger(length) || length < 0 || length > this.history.length) return { ok: false, reason: `There is no message ${length} in this chat.` };
    const kept = this.history.slice(0, length);
    if (!isToolResultPairingValid(kept)) return { ok: false, reason: 'The chat cannot be cut there without separating a tool call from its result.' };
    this.history.length = length;
    return { ok: true };
  }

  /** Another chat's history in place of this one (a chat opened from the history); must be well paired. */
  replaceHistory(messages: readonly ChatMessage[]): AppendResult {
    if (this.busy) return { ok: false, reason: 'A turn is running; wait for it or stop it first.' };
    if (messages.some((m) => m.role === 'system')) return { ok: false, reason: 'A system message cannot join the history.' };
    if (!isToolResultPairingValid(messages)) return { ok: false, reason: 'The stored chat leaves a tool call without its result.' };
    this.history.splice(0, this.history.length, ...structuredClone([...messages]));
    return { ok: true };
  }

  /** New chat: empty history, no "allow always" grants. */
  reset(): void {
    this.abort();
    this.history.length = 0;
    this.options.approvals.resetGrants();
  }

  private assertIdle(): void {
    if (this.busy) throw new Error('A turn is already running; abort it before starting another.');
  }

  private emit(event: ChatEvent): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch {
        // A broken listener (a closed webview) must not break the turn.
      }
    }
  }

  private async runTurn(options: TurnOptions): Promise<TurnOutcome> {
    const turnAbort = new AbortController();
    this.turnAbort = turnAbort;
    const signal = options.signal ? AbortSignal.any([options.signal, turnAbort.signal]) : turnAbort.signal;
    const usage: Usage = { promptTokens: 0, completionTokens: 0, cachedTokens: 0 };
    this.emit({ type: 'turn_started' });
    // Run-time tools (MCP servers, started lazily) are ready before the turn's one snapshot is taken.
    await this.options.tools.prepare?.(signal).catch(() => undefined);
    // One snapshot per turn: every round sends the same list, and the same list is saved for forks.
    const tools = this.options.tools.definitions();
    let lastFinish: string | null = null;
    // One recovery per turn from an answer cut inside a tool call; its retry may ask for a higher limit.
    let cutOffRetried = false;
    let maxTokens: number | undefined;
    try {
      const maxRounds = this.options.maxToolRounds ?? MAX_TOOL_ROUNDS_PER_TURN;
      for (let round = 0; ; round++) {
        if (signal.aborted) return this.aborted(usage);
        if (round >= maxRounds) {
          return this.failed(
            'tool_round_limit',
            `The model kept calling tools for ${maxRounds} rounds without finishing, so the turn was stopped. Send "continue" to let it go on, or rephrase the task.`,
            usage,
          );
        }
        let reply: Reply;
        try {
          reply = await this.requestAnswer(tools, signal, usage, maxTokens);
        } catch (error) {
          if (signal.aborted || (error instanceof LlmError && error.kind === 'aborted')) return this.aborted(usage);
          if (error instanceof LlmError) return this.failed(error.kind, error.message, usage, { actions: [...error.actions] });
          const why = error instanceof Error ? error.message : String(error);
          return this.failed('bad_response', `The model call failed unexpectedly: ${why}. Retry the turn.`, usage);
        }
        lastFinish = reply.finishReason;
        const answer = reply.message;
        const calls = answer.tool_calls ?? [];
        if (reply.stop === 'error') {
          // The server gave up mid-answer; the partial answer is not kept, so Retry asks again.
          return this.failed('server', `The endpoint stopped the answer with an error (finish_reason "${reply.finishReason}"). Retry the turn.`, usage, { finishReason: lastFinish });
        }
        if (!cutOffRetried && isCutInsideToolCall(reply.stop, answer)) {
          cutOffRetried = true;
          maxTokens = this.recoverFromCutOff(answer, reply);
          continue;
        }
        maxTokens = undefined;
        this.history.push(answer);
        this.emit({ type: 'assistant_message', message: structuredClone(answer) });
        if (reply.hint) this.emit({ type: 'notice', text: reply.hint });
        if (reply.stop !== 'complete') return this.stoppedEarly(reply.stop, calls, usage, lastFinish);
        if (calls.length === 0) {
          this.settle(tools);
          this.emit({ type: 'turn_done', message: structuredClone(answer), usage: { ...usage } });
          return { status: 'done', message: structuredClone(answer), usage, finishReason: lastFinish };
        }
        for (const call of calls) {
          // Every call gets a result, even when cancelled, so the history stays well paired.
          const result = signal.aborted ? this.cancelled(call) : await this.runToolCall(call, signal, usage);
          this.history.push({ role: 'tool', tool_call_id: call.id, content: result.content });
        }
      }
    } finally {
      this.turnAbort = undefined;
    }
  }

  /**
   * The answer stopped at the output limit inside a tool call: it joins the history with the cut
   * arguments replaced and a "cut off" result per call (never as it came: vLLM refuses a history
   * holding broken arguments), and the next round asks again. Returns the raised output limit.
   */
  private recoverFromCutOff(answer: AssistantMessage, reply: Reply): number | undefined {
    const recovery = recoverCutOff(answer, reply.completionTokens, reply.finishReason);
    this.history.push(recovery.message);
    this.emit({ type: 'assistant_message', message: structuredClone(recovery.message) });
    for (const result of recovery.results) {
      const call = recovery.message.tool_calls!.find((c) => c.id === result.tool_call_id)!;
      const summary = summarize(this.options.tools.get(call.function.name), null, call.function.arguments);
      this.emit({ type: 'tool_call_finished', callId: call.id, name: call.function.name, summary, status: 'error', result: result.content, filesChanged: [] });
      this.history.push(result);
    }
    this.emit({ type: 'notice', text: CUT_OFF_NOTICE });
    return recovery.maxTokens;
  }

  private async requestAnswer(tools: ToolDefinition[], signal: AbortSignal, usage: Usage, maxTokens?: number): Promise<Reply> {
    if (maxTokens === undefined) return this.requestOnce(tools, signal, usage, undefined);
    try {
      return await this.requestOnce(tools, signal, usage, maxTokens);
    } catch (error) {
      // A server that refuses the raised limit (above the model's maximum, or an unknown field) gets the request without it.
      if (error instanceof LlmError && error.kind === 'bad_request' && !signal.aborted) return this.requestOnce(tools, signal, usage, undefined);
      throw error;
    }
  }

  private async requestOnce(tools: ToolDefinition[], signal: AbortSignal, usage: Usage, maxTokens: number | undefined): Promise<Reply> {
    const request = {
      model: this.model,
      messages: [{ role: 'system' as const, content: this.systemPrompt }, ...this.history],
      ...(tools.length > 0 ? { tools } : {}),
      ...(this.options.temperature !== undefined ? { temperature: this.options.temperature } : {}),
      ...(this.options.thinking !== undefined ? { thinking: this.options.thinking } : {}),
      ...(maxTokens !== undefined ? { maxTokens } : {}),
      signal,
    };
    for await (const event of this.options.llm.stream(request)) {
      switch (event.type) {
        case 'text':
          this.emit({ type: 'text', delta: event.delta });
          break;
        case 'reasoning':
          this.emit({ type: 'reasoning', delta: event.delta });
          break;
        case 'tool_call_start':
          break; // the call is announced once its arguments are complete (tool_call_started)
        case 'done':
          usage.promptTokens += event.usage.promptTokens;
          usage.completionTokens += event.usage.completionTokens;
          usage.cachedTokens += event.usage.cachedTokens;
          return {
            message: event.message,
            stop: event.stop,
            finishReason: event.finishReason,
            completionTokens: event.usage.completionTokens,
            ...(event.hint ? { hint: event.hint } : {}),
          };
      }
    }
    if (signal.aborted) throw new LlmError('aborted', 'The request was cancelled.');
    throw new LlmError('bad_response', 'The model stream ended without a final message. Retry the turn.');
  }

  private async runToolCall(call: ToolCall, signal: AbortSignal, usage: Usage): Promise<{ content: string; status: ToolCallStatus }> {
    const name = call.function.name;
    const tool = this.options.tools.get(name);
    const parsed = parseToolArguments(call.function.arguments);
    const args = parsed.ok ? parsed.args : null;
    const summary = summarize(tool, args, call.function.arguments);
    this.emit({ type: 'tool_call_started', callId: call.id, name, args: args ? structuredClone(args) : null, summary });
    const finish = (status: ToolCallStatus, content: string, filesChanged: string[] = []) => {
      this.emit({ type: 'tool_call_finished', callId: call.id, name, summary, status, result: content, filesChanged });
      return { content, status };
    };

    if (!tool) {
      const names = this.options.tools.definitions().map((d) => d.function.name);
      return finish('error', `Unknown tool "${name}". The available tools are: ${names.join(', ') || 'none'}.`);
    }
    if (!parsed.ok) return finish('error', parsed.error);

    const decision = await this.options.approvals.decide(tool, parsed.args, this.options.toolContext);
    if (decision.action === 'refuse') return finish('refused', decision.reason);
    if (decision.action === 'ask') {
      this.emit({ type: 'approval_requested', callId: call.id, name, summary });
      let answer: ApprovalAnswer | PartialApproval;
      try {
        const change = decision.change ? { change: decision.change } : {};
        answer = await this.options.prompter.request({ callId: call.id, tool: name, kind: tool.kind, args: structuredClone(parsed.args), summary, signal, ...change });
      } catch (error) {
        if (signal.aborted) return finish('cancelled', CANCELLED_TEXT);
        const why = error instanceof Error ? error.message : String(error);
        return finish('denied', `The user's approval could not be obtained (${why}), so the call did not run.`);
      }
      if (signal.aborted) return finish('cancelled', CANCELLED_TEXT);
      if (answer === 'deny') {
        return finish('denied', tool.deniedText ?? 'The user declined this call, so it did not run. Do not repeat it unchanged: ask the user what they want, or take another approach.');
      }
      if (answer === 'allow_always') this.options.approvals.grantAlways(tool, parsed.args);
      if (typeof answer === 'object') return finish(...(await this.writePartial(answer.partial, signal)));
    }

    let result: ToolResult;
    try {
      // Set per call, never inherited: a call the user approved runs as they know it (git hooks and
      // all); one that runs only on the classifier's read-only verdict runs in its safe environment.
      const approvedAsReadOnly = decision.action === 'run' && decision.readOnly === true;
      // A long call (a sub-agent) reports its steps on this call's card.
      const progress = (line: string) => this.emit({ type: 'tool_call_progress', callId: call.id, name, line });
      result = await tool.execute(parsed.args, { ...this.options.toolContext, signal, approvedAsReadOnly, progress });
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      if (signal.aborted) return finish('cancelled', `Cancelled while running: ${why}`);
      return finish('error', `${name} failed: ${why}`);
    }
    if (result.usage) {
      // A sub-agent's requests are this turn's too.
      usage.promptTokens += result.usage.promptTokens;
      usage.completionTokens += result.usage.completionTokens;
      usage.cachedTokens += result.usage.cachedTokens;
    }
    return finish(result.ok ? 'ok' : 'error', result.output, result.filesChanged ?? []);
  }

  /**
   * An edit the user allowed only in part: their version is written instead of running the tool,
   * only over the file as they saw it, and the result says what was applied.
   */
  private async writePartial(partial: PartialApproval['partial'], signal: AbortSignal): Promise<[ToolCallStatus, string, string[]]> {
    const expect = partial.expected ? { exists: true as const, sha256: createHash('sha256').update(partial.expected).digest('hex') } : { exists: false as const };
    try {
      await this.options.toolContext.fs.writeFile(partial.path, partial.content, { signal, expect });
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      return ['error', `The user allowed part of this edit, but ${partial.path} could not be written (${why}); nothing was changed. Read the file and propose the edit again.`, []];
    }
    return ['ok', partial.note, [partial.path]];
  }

  private cancelled(call: ToolCall): { content: string; status: ToolCallStatus } {
    const name = call.function.name;
    const parsed = parseToolArguments(call.function.arguments);
    const summary = summarize(this.options.tools.get(name), parsed.ok ? parsed.args : null, call.function.arguments);
    this.emit({ type: 'tool_call_finished', callId: call.id, name, summary, status: 'cancelled', result: CANCELLED_TEXT, filesChanged: [] });
    return { content: CANCELLED_TEXT, status: 'cancelled' };
  }

  private aborted(usage: Usage): TurnOutcome {
    this.emit({ type: 'turn_aborted' });
    return { status: 'aborted', usage };
  }

  /**
   * The answer stopped before the model finished: at the output limit, or by the provider's content
   * filter. What was written stays (it is on screen), but the turn says so instead of passing it off
   * as complete; tool calls in it did not run (their arguments may be cut) and are answered so, which
   * keeps the history well paired and lets Retry have the model try again.
   */
  private stoppedEarly(stop: Exclude<StopKind, 'complete' | 'error'>, calls: ToolCall[], usage: Usage, finishReason: string | null): TurnOutcome {
    const why = stop === 'length' ? `the model reached its output limit (finish_reason "${finishReason}")` : `the provider's content filter stopped it (finish_reason "${finishReason}")`;
    for (const call of calls) {
      const content = `Not run: the answer was cut off before this call was complete — ${why}.`;
      const summary = summarize(this.options.tools.get(call.function.name), null, call.function.arguments);
      this.emit({ type: 'tool_call_finished', callId: call.id, name: call.function.name, summary, status: 'error', result: content, filesChanged: [] });
      this.history.push({ role: 'tool', tool_call_id: call.id, content });
    }
    const advice =
      calls.length > 0
        ? 'Its tool calls did not run. Retry to let the model try again' + (stop === 'length' ? ', or ask for smaller steps.' : ', or rephrase the request.')
        : stop === 'length'
          ? 'Send "continue" to have it go on, or raise the output limit (max tokens) of the model or server.'
          : 'Rephrase the request; sending it unchanged will likely be stopped again.';
    return this.failed(stop === 'length' ? 'output_limit' : 'content_filter', `The answer was cut off: ${why}. ${advice}`, usage, { finishReason });
  }

  private failed(
    kind: Extract<TurnOutcome, { status: 'error' }>['kind'],
    message: string,
    usage: Usage,
    extra: { actions?: ErrorAction[]; finishReason?: string | null } = {},
  ): TurnOutcome {
    // Retry resumes from the history as it is: only possible when it waits for the model.
    const retryable = this.canResume();
    const actions = extra.actions ?? [];
    this.emit({ type: 'turn_error', kind, message, retryable, actions });
    return { status: 'error', kind, message, usage, retryable, actions, finishReason: extra.finishReason ?? null };
  }

  private settle(tools: ToolDefinition[]): void {
    this.options.onSettled?.({
      systemPrompt: this.systemPrompt,
      tools,
      ...(this.options.temperature !== undefined ? { temperature: this.options.temperature } : {}),
      history: this.history,
      model: this.model,
    });
  }
}

interface Reply {
  message: AssistantMessage;
  stop: StopKind;
  finishReason: string | null;
  completionTokens: number;
  hint?: string;
}

const CANCELLED_TEXT = 'Cancelled: the user stopped the turn before this call ran.';
const MAX_RAW_SUMMARY = 80;

function summarize(tool: Tool | undefined, args: ToolArgs | null, raw: string): string {
  if (tool && args) {
    try {
      return tool.summarize(args);
    } catch {
      // fall through to the raw form: a summary must never fail a call
    }
  }
  return raw.length > MAX_RAW_SUMMARY ? `${raw.slice(0, MAX_RAW_SUMMARY)}…` : raw;
}
