// `chat`: one turn of the main chat through the headless contract (HEADLESS-CLI.md) — the same
// ChatSession the chat view drives, with its system prompt, tools, provider handling, retries and
// error texts; a call that would ask the user is answered by --approve.
import { stat } from 'node:fs/promises';
import type { ChatEvent, ToolCallStatus, TurnOutcome } from '../core/chat/events';
import { defaultStateDir } from '../core/checkpoints';
import { MAX_SPECULATION_MESSAGES, MAX_SPECULATION_TURNS } from '../core/followup/speculation';
import { FileLearnedProfileStore, LearnedProfiles } from '../core/llm/learnedProfiles';
import { OpenAiCompatibleClient } from '../core/llm/openAiCompatibleClient';
import type { ChatMessage, ToolArgs } from '../core/messages';
import { ChatSession } from '../core/session';
import { openWorkspaceServices } from '../core/workspaceServices';
import { housekeeping, openCheckpointStore } from './checkpointStore';
import type { McpManager } from '../core/mcp';
import { openCliMcpServers } from './mcpConfig';
import { choice, ENDPOINT_RUN_OPTIONS, endpointRunArgs, parseOptions, type EndpointRunArgs } from './options';
import { readHistory } from './speculate';
import { UsageError } from './usage';

const ANSWERS = ['deny', 'allow'] as const;

export interface ChatArgs extends EndpointRunArgs {
  prompt: string;
  approve: (typeof ANSWERS)[number];
}

export function parseChatArgs(argv: readonly string[]): ChatArgs {
  const options = parseOptions(argv, {
    valued: [...ENDPOINT_RUN_OPTIONS, '--prompt', '--approve'],
    required: ['--workspace', '--base-url', '--model', '--prompt'],
  });
  const prompt = options.values.get('--prompt')!;
  if (prompt.trim() === '') throw new UsageError('--prompt must not be empty');
  return { ...endpointRunArgs(options), prompt, approve: choice(options, '--approve', ANSWERS, 'deny') };
}

type CallOutcome = 'ran' | 'denied' | 'refused' | 'failed';

/** A call that ran and failed, could not run (unknown tool, bad arguments) or was cut off by a stop is "failed". */
const OUTCOMES: Record<ToolCallStatus, CallOutcome> = { ok: 'ran', error: 'failed', denied: 'denied', refused: 'refused', cancelled: 'failed' };

interface CallRecord {
  name: string;
  args: ToolArgs;
  outcome: CallOutcome;
}

/** The turn's tool calls in the order they were announced, with how each ended. */
function recordToolCalls(session: ChatSession): { calls: CallRecord[]; stop(): void } {
  const calls: CallRecord[] = [];
  const byId = new Map<string, CallRecord>();
  const stop = session.subscribe((event) => {
    if (event.type !== 'chat') return;
    const chat: ChatEvent = event.event;
    if (chat.type === 'tool_call_started') {
      const record: CallRecord = { name: chat.name, args: chat.args ?? {}, outcome: 'failed' };
      byId.set(chat.callId, record);
      calls.push(record);
    } else if (chat.type === 'tool_call_finished') {
      const record = byId.get(chat.callId) ?? { name: chat.name, args: {}, outcome: 'failed' as CallOutcome };
      if (!byId.has(chat.callId)) calls.push(record);
      record.outcome = OUTCOMES[chat.status];
    }
  });
  return { calls, stop };
}

function statusOf(outcome: TurnOutcome | undefined): 'completed' | 'failed' | 'cancelled' {
  if (!outcome || outcome.status === 'aborted') return 'cancelled';
  return outcome.status === 'done' ? 'completed' : 'failed';
}

/** A key the server quoted back must not reach stdout, whatever field it ended up in. */
function withoutKey(json: string, apiKey: string): string {
  if (apiKey.length < 4) return json;
  return json.split(JSON.stringify(apiKey).slice(1, -1)).join('[your API key]');
}

export async function runChat(argv: readonly string[], output: NodeJS.WritableStream): Promise<number> {
  const args = parseChatArgs(argv);
  const info = await stat(args.workspace).catch(() => undefined);
  if (!info?.isDirectory()) throw new UsageError(`--workspace ${args.workspace} is not a directory`);
  const history = args.historyFile ? await readHistory(args.historyFile) : [];
  const log = (line: string) => process.stderr.write(`speculate: ${line}\n`);
  const mcp = args.mcpConfig ? await openCliMcpServers(args.mcpConfig, args.workspace, log) : undefined;
  try {
    return await chatTurn(args, history, mcp, log, output);
  } finally {
    // Every server this run started is stopped before the CLI exits.
    await mcp?.dispose();
  }
}

async function chatTurn(args: ChatArgs, history: ChatMessage[], mcp: McpManager | undefined, log: (line: string) => void, output: NodeJS.WritableStream): Promise<number> {
  await housekeeping(args.workspace);
  // --state-dir also holds the user's memory file (save_memory), as VS Code's global storage does.
  const services = await openWorkspaceServices(args.workspace, {
    ...(args.stateDir ? { memoryDir: args.stateDir } : {}),
    ...(mcp ? { extraTools: mcp } : {}),
  });
  // Files are changed only with a checkpoint that undoes them: an unusable state folder stops here.
  const checkpoints = await openCheckpointStore(args.workspace, args.stateDir).catch((error: unknown) => {
    throw new UsageError(`--state-dir cannot hold checkpoints: ${error instanceof Error ? error.message : String(error)}`);
  });
  const learned = new LearnedProfiles(new FileLearnedProfileStore(args.stateDir ?? defaultStateDir()), log);
  const llm = new OpenAiCompatibleClient({ baseURL: args.baseUrl, apiKey: args.apiKey, learned, log });
  const session = new ChatSession({
    llm,
    // One turn of the main chat: no suggestion after it, so nothing runs ahead either.
    config: { model: args.model, fastModel: '', approvalMode: args.approvalMode, suggestionsEnabled: false, speculationEnabled: false, maxTurns: MAX_SPECULATION_TURNS, maxMessages: MAX_SPECULATION_MESSAGES },
    systemPrompt: services.systemPrompt,
    tools: services.tools,
    toolContext: services.toolContext,
    prompter: { request: async () => args.approve },
    classifyShell: services.classifyShell,
    createOverlay: services.createOverlay,
    turnContext: services.turnContext,
    checkpoints,
    log,
  });
  let timer: NodeJS.Timeout | undefined;
  const recorder = recordToolCalls(session);
  let checkpoint: string | null = null;
  const stopCheckpoints = session.subscribe((event) => {
    if (event.type === 'turn_recorded' && event.checkpoint) checkpoint = event.checkpoint.id;
  });
  try {
    if (history.length > 0) {
      const opened = await session.openChat({ messages: history });
      if (!opened.ok) throw new UsageError(`--history cannot be continued: ${opened.reason}`);
    }
    const before = session.messages.length;
    if (args.timeoutMs) timer = setTimeout(() => session.stop(), args.timeoutMs);
    const outcome = await session.submit(args.prompt);
    const messages: ChatMessage[] = session.messages.slice(before);
    const usage = outcome?.usage;
    const result = {
      status: statusOf(outcome),
      text: outcome?.status === 'done' ? (outcome.message.content ?? null) : null,
      messages,
      toolCalls: recorder.calls,
      // Counts the server never reported are not zeros that it did.
      usage: usage && usage.promptTokens + usage.cachedTokens + usage.completionTokens > 0
        ? { promptTokens: usage.promptTokens, cachedTokens: usage.cachedTokens, completionTokens: usage.completionTokens }
        : null,
      finishReason: outcome && outcome.status !== 'aborted' ? outcome.finishReason : null,
      error: outcome?.status === 'error' ? outcome.message : null,
      checkpoint,
    };
    output.write(withoutKey(JSON.stringify(result, null, 2), args.apiKey) + '\n');
    return 0;
  } finally {
    if (timer) clearTimeout(timer);
    recorder.stop();
    stopCheckpoints();
    await session.dispose();
  }
}
