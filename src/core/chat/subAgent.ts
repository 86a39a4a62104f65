// Sub-agents for the agent tool: a nested Conversation on the fast model (or the main one) with the
// read-only tools and the parent's approval mode, bounded in rounds and tokens, stopped when it
// repeats a call. Its steps go out as progress lines; its final answer is the tool's result.
// During speculation every call it makes must pass the speculation gate, or the whole call is a boundary.
import { LlmError, type LlmClient } from '../llm/llmClient';
import type { ToolArgs } from '../messages';
import type { SubAgentRunner, Tool, ToolContext, ToolResult } from '../tools/types';
import { ApprovalScheduler, type ApprovalMode } from './approvals';
import { Conversation } from './conversation';
import { toolRegistryFrom, type ToolRegistry } from './toolRegistry';

/** Model round trips a sub-agent may take. */
export const MAX_SUB_AGENT_ROUNDS = 15;
/** Tokens (prompt + completion, all rounds) a sub-agent may spend before it is stopped. */
export const MAX_SUB_AGENT_TOKENS = 300_000;
/** The same call (tool and arguments) this many times stops it: its answer cannot change. */
export const MAX_REPEATED_CALLS = 3;

export interface SubAgentOptions {
  llm: LlmClient;
  /** The model it runs on, read at each start (the fast model, or the main one by setting). */
  model: () => string;
  /** The parent's approval mode, read at each start. */
  approvalMode: () => ApprovalMode;
  /** The parent's tools; only the read tools are offered. */
  tools: ToolRegistry;
  workspaceRoot: string;
  maxRounds?: number;
  maxTokens?: number;
}

export function createSubAgentRunner(options: SubAgentOptions): SubAgentRunner {
  return { run: (task, context) => runSubAgent(options, task, context) };
}

/** The read tools of a registry, in its order (the agent tool itself is not one: no nesting). */
export function readOnlyTools(tools: ToolRegistry): Tool[] {
  return tools
    .definitions()
    .map((definition) => tools.get(definition.function.name))
    .filter((tool): tool is Tool => tool !== undefined && tool.kind === 'read');
}

export function subAgentPrompt(workspaceRoot: string, toolNames: readonly string[]): string {
  return [
    'You are a sub-agent of Speculate, a coding assistant. The main agent gave you one task; you cannot see its conversation and cannot talk to the user.',
    '',
    `Workspace root: ${workspaceRoot}`,
    `You can only read, with these tools: ${toolNames.join(', ')}. You cannot change files or run commands.`,
    'Work efficiently: search first, then read what matters. Never repeat a call you already made; its result will not change.',
    'When you are done, answer with a concise report of what you found (workspace-relative paths, line numbers where useful): that answer is all the main agent receives.',
  ].join('\n');
}

interface RunState {
  spent: number;
  overBudget: boolean;
  /** Why the guard stopped it (a repeated call). */
  looped?: string;
  /** A nested call the speculation gate would stop. */
  boundary?: string;
}

async function runSubAgent(options: SubAgentOptions, task: { description: string; prompt: string }, context: ToolContext): Promise<ToolResult> {
  const maxRounds = options.maxRounds ?? MAX_SUB_AGENT_ROUNDS;
  const maxTokens = options.maxTokens ?? MAX_SUB_AGENT_TOKENS;
  const state: RunState = { spent: 0, overBudget: false };
  const stop = new AbortController();
  const signal = context.signal ? AbortSignal.any([context.signal, stop.signal]) : stop.signal;
  const tools = readOnlyTools(options.tools);
  const guarded = tools.map((tool) => guardedTool(tool, state, stop, context.speculationGate));
  const conversation = new Conversation({
    llm: budgeted(options.llm, maxTokens, state),
    model: options.model(),
    systemPrompt: subAgentPrompt(options.workspaceRoot, tools.map((tool) => tool.name)),
    tools: toolRegistryFrom(guarded),
    toolContext: childContext(context),
    approvals: new ApprovalScheduler({ mode: options.approvalMode(), isReadOnly: async () => false }),
    // Its tools are read tools, which never ask; anything that would is declined, never put to the user.
    prompter: { request: async () => 'deny' },
    maxToolRounds: maxRounds,
  });
  const unsubscribe = conversation.subscribe((event) => {
    if (event.type === 'tool_call_started') context.progress?.(`${event.name} ${event.summary}`.trim());
  });
  const label = `The sub-agent "${task.description}"`;
  try {
    const outcome = await conversation.send(task.prompt, { signal });
    const usage = { ...outcome.usage };
    const partial = lastText(conversation);
    const sofar = partial ? ` What it had written so far:\n${partial}` : '';
    if (state.boundary) return { ok: false, output: `${label} stopped: ${state.boundary}.`, boundary: state.boundary, usage };
    if (state.looped) return { ok: false, output: `${label} was stopped: ${state.looped}, so it was not getting further. Do the rest yourself, or give it a narrower task.${sofar}`, usage };
    if (outcome.status === 'done') {
      const answer = outcome.message.content?.trim() ?? '';
      return { ok: true, output: answer === '' ? `${label} finished without a report.` : answer, usage };
    }
    if (outcome.status === 'aborted') return { ok: false, output: `${label} was cancelled before it finished.`, usage };
    const why = state.overBudget
      ? `it used up its budget of ${maxTokens.toLocaleString('en-US')} tokens`
      : outcome.kind === 'tool_round_limit'
        ? `it used all of its ${maxRounds} rounds`
        : outcome.message;
    return { ok: false, output: `${label} did not finish: ${why}. Do the rest yourself, or give it a narrower task.${sofar}`, usage };
  } finally {
    unsubscribe();
  }
}

/** The parent call's ports without what is the parent's alone (its progress, its gate, its plan, nesting). */
function childContext(context: ToolContext): ToolContext {
  const { progress: _progress, speculationGate: _gate, subAgent: _subAgent, planMode: _plan, approvedAsReadOnly: _readOnly, ...rest } = context;
  return rest;
}

/** A tool that first counts the call (the loop guard) and, during speculation, puts it to the gate. */
function guardedTool(tool: Tool, state: RunState, stop: AbortController, gate: ToolContext['speculationGate']): Tool {
  const seen = new Map<string, number>();
  return {
    ...tool,
    summarize: (args) => tool.summarize(args),
    execute: async (args: ToolArgs, context: ToolContext): Promise<ToolResult> => {
      const key = stableJson(args);
      const count = (seen.get(key) ?? 0) + 1;
      seen.set(key, count);
      if (count >= MAX_REPEATED_CALLS) {
        state.looped = `it made the same call (${tool.name} ${tool.summarize(args)}) ${count} times`;
        stop.abort();
        return { ok: false, output: 'Stopped: this exact call was already made twice.' };
      }
      if (gate) {
        const verdict = await gate(tool.name, args);
        if (!verdict.pass) {
          state.boundary = `its call ${tool.name} ${tool.summarize(args)} cannot run ahead of you (${verdict.detail})`;
          stop.abort();
          return { ok: false, output: 'Stopped at the speculation boundary.' };
        }
      }
      return tool.execute(args, context);
    },
  };
}

/** A client that refuses further requests once the budget is spent. */
function budgeted(llm: LlmClient, maxTokens: number, state: RunState): LlmClient {
  return {
    listModels: (signal) => llm.listModels(signal),
    async *stream(request) {
      if (state.spent >= maxTokens) {
        state.overBudget = true;
        throw new LlmError('bad_request', `The sub-agent used up its budget of ${maxTokens} tokens.`);
      }
      for await (const event of llm.stream(request)) {
        if (event.type === 'done') state.spent += event.usage.promptTokens + event.usage.completionTokens;
        yield event;
      }
    },
  };
}

function lastText(conversation: Conversation): string {
  const messages = conversation.messages;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message.role === 'assistant' && message.content && message.content.trim() !== '') return message.content.trim();
  }
  return '';
}

/** The same arguments in any key order are the same call. */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${stableJson((value as Record<string, unknown>)[key])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
