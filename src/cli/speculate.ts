// `speculate`: one speculation of a suggestion against an OpenAI-compatible endpoint, exactly as
// the extension runs it after showing the suggestion; with --accept it then applies the overlay.
import { readFile, stat } from 'node:fs/promises';
import { OverlayApplyError } from '../core/followup/overlayFs';
import type { ChatMessage } from '../core/messages';
import { CacheSafeParamsStore, runForkedQuery } from '../core/followup/forkedQuery';
import { startSpeculation, type Speculation } from '../core/followup/speculation';
import { forkRunnerFromQuery, generateSuggestion } from '../core/followup/suggestionGenerator';
import { isToolResultPairingValid } from '../core/messages/pairing';
import { defaultStateDir } from '../core/checkpoints';
import { FileLearnedProfileStore, LearnedProfiles } from '../core/llm/learnedProfiles';
import { OpenAiCompatibleClient } from '../core/llm/openAiCompatibleClient';
import { openWorkspaceServices } from '../core/workspaceServices';
import { filesInPlay } from '../core/context/instructions';
import { createSubAgentRunner } from '../core/chat/subAgent';
import { housekeeping, openCheckpointStore } from './checkpointStore';
import type { McpManager } from '../core/mcp';
import { openCliMcpServers } from './mcpConfig';
import { ENDPOINT_RUN_OPTIONS, endpointRunArgs, parseOptions, positiveInteger, type EndpointRunArgs } from './options';
import { cliShellSandbox } from './sandbox';
import { UsageError } from './usage';

export interface SpeculateArgs extends EndpointRunArgs {
  suggestion: string;
  maxTurns?: number;
  accept: boolean;
}

export function parseSpeculateArgs(argv: string[]): SpeculateArgs {
  const options = parseOptions(argv, {
    valued: [...ENDPOINT_RUN_OPTIONS, '--suggestion', '--max-turns'],
    flags: ['--accept'],
    required: ['--workspace', '--base-url', '--model', '--suggestion'],
  });
  const args: SpeculateArgs = { ...endpointRunArgs(options), suggestion: options.values.get('--suggestion')!, accept: options.flags.has('--accept') };
  const maxTurns = positiveInteger(options, '--max-turns');
  if (maxTurns !== undefined) args.maxTurns = maxTurns;
  return args;
}

function isMessage(value: unknown): value is ChatMessage {
  if (typeof value !== 'object' || value === null) return false;
  const m = value as Record<string, unknown>;
  switch (m.role) {
    case 'user':
    case 'system':
      return typeof m.content === 'string';
    case 'tool':
      return typeof m.tool_call_id === 'string' && typeof m.content === 'string';
    case 'assistant':
      return (
        (m.content === null || typeof m.content === 'string' || m.content === undefined) &&
        (m.tool_calls === undefined ||
          (Array.isArray(m.tool_calls) &&
            m.tool_calls.every((c: unknown) => {
              const call = c as { id?: unknown; function?: { name?: unknown; arguments?: unknown } };
              return typeof call?.id === 'string' && typeof call.function?.name === 'string' && typeof call.function?.arguments === 'string';
            })))
      );
    default:
      return false;
  }
}

/** Reads --history: a JSON array of OpenAI chat messages (system messages are ignored: ours lead). */
export async function readHistory(file: string): Promise<ChatMessage[]> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new UsageError(`cannot read --history ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!Array.isArray(parsed)) throw new UsageError('--history must hold a JSON array of chat messages');
  const bad = parsed.findIndex((m) => !isMessage(m));
  if (bad >= 0) throw new UsageError(`--history message ${bad} is not an OpenAI chat message (user / assistant / tool)`);
  const history = (parsed as ChatMessage[])
    .filter((m) => m.role !== 'system')
    .map((m): ChatMessage => (m.role === 'assistant' ? assistantFromHistory(m) : m));
  if (!isToolResultPairingValid(history)) throw new UsageError('--history has tool calls without results (or results without calls)');
  return history;
}

/** An assistant message of --history with only the fields we know (reasoning and provider extras kept: some servers need them back). */
function assistantFromHistory(m: Extract<ChatMessage, { role: 'assistant' }>): ChatMessage {
  const message: Extract<ChatMessage, { role: 'assistant' }> = { role: 'assistant', content: m.content ?? null };
  if (m.tool_calls) {
    message.tool_calls = m.tool_calls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.function.name, arguments: c.function.arguments },
      ...(isPlainObject(c.extra_content) ? { extra_content: c.extra_content } : {}),
    }));
  }
  if (typeof m.reasoning_content === 'string' && m.tool_calls?.length) message.reasoning_content = m.reasoning_content;
  return message;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export async function runSpeculate(argv: string[], output: NodeJS.WritableStream): Promise<number> {
  const args = parseSpeculateArgs(argv);
  const info = await stat(args.workspace).catch(() => undefined);
  if (!info?.isDirectory()) throw new UsageError(`--workspace ${args.workspace} is not a directory`);
  const history = args.historyFile ? await readHistory(args.historyFile) : [];
  // An accept interrupted by a crash (of the extension or an earlier run) is finished or rolled back first.
  await housekeeping(args.workspace);
  // No checkpoint, no accept: a state folder that cannot be used stops the accept, not the run.
  let checkpointsError: string | undefined;
  const checkpoints = args.accept
    ? await openCheckpointStore(args.workspace, args.stateDir).catch((error: unknown) => {
        checkpointsError = `accept not done: checkpoints cannot be saved (${error instanceof Error ? error.message : String(error)})`;
        return undefined;
      })
    : undefined;
  const log = (line: string) => process.stderr.write(`speculate: ${line}\n`);
  const mcp = args.mcpConfig ? await openCliMcpServers(args.mcpConfig, args.workspace, log) : undefined;
  try {
    return await speculateRun(args, history, checkpoints, checkpointsError, mcp, log, output);
  } finally {
    // Every server this run started is stopped before the CLI exits.
    await mcp?.dispose();
  }
}

async function speculateRun(
  args: SpeculateArgs,
  history: ChatMessage[],
  checkpoints: Awaited<ReturnType<typeof openCheckpointStore>> | undefined,
  checkpointsError: string | undefined,
  mcp: McpManager | undefined,
  log: (line: string) => void,
  output: NodeJS.WritableStream,
): Promise<number> {
  const shellSandbox = cliShellSandbox();
  const services = await openWorkspaceServices(args.workspace, { ...(args.stateDir ? { stateDir: args.stateDir } : {}), ...(shellSandbox ? { toolContext: { shellSandbox } } : {}), ...(mcp ? { extraTools: mcp } : {}) });
  for (const warning of services.warnings) log(warning);
  // The servers' tools are part of the saved request prefix, so they are listed before it is saved.
  await services.tools.prepare?.();
  // What the endpoint refuses (a field, a thinking switch) is remembered in the state folder, so
  // the next run sends the right request at once.
  const learned = new LearnedProfiles(new FileLearnedProfileStore(args.stateDir ?? defaultStateDir()), log);
  const llm = new OpenAiCompatibleClient({ baseURL: args.baseUrl, apiKey: args.apiKey, learned, log });
  // The prompt the chat would have sent last: with the project's instructions, skills and memory.
  const { systemPrompt } = await services.turnContext(filesInPlay(history));
  const params = new CacheSafeParamsStore().save({ systemPrompt, tools: services.tools.definitions(), history, model: args.model });

  let speculation: Speculation | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    speculation = startSpeculation(args.suggestion, {
      llm,
      params,
      tools: services.tools,
      approvalMode: args.approvalMode,
      createOverlay: services.createOverlay,
      classifyShell: services.classifyShell,
      toolContext: {
        ...services.toolContext,
        subAgent: createSubAgentRunner({ llm, model: () => args.model, approvalMode: () => args.approvalMode, tools: services.tools, workspaceRoot: services.fs.root }),
      },
      ...(args.maxTurns ? { maxTurns: args.maxTurns } : {}),
      generatePipelinedSuggestion: async (conversation, signal) => {
        const result = await generateSuggestion({
          history: conversation,
          fork: forkRunnerFromQuery((extra, s) => runForkedQuery({ params, llm, extraMessages: [...conversation.slice(history.length), ...extra], signal: s })),
          signal,
          conditions: { enabled: true, approvalPending: false, lastTurn: 'completed', planMode: false, userTyping: false },
        });
        return result.kind === 'suggestion' ? result.suggestion : null;
      },
      log: (line) => process.stderr.write(`speculate: ${line}\n`),
    });
    const run = speculation;
    if (args.timeoutMs) timer = setTimeout(() => void run.abort(), args.timeoutMs);
    const final = await run.done;
    if (timer) clearTimeout(timer);
    const filesWritten = final.filesWritten.map((f) => f.path);
    let applied: { files: string[]; conflicts: string[] } | null = null;
    let checkpoint: string | null = null;
    let error = final.error ?? checkpointsError ?? null;
    if (checkpoints && (final.status === 'completed' || final.status === 'boundary')) {
      // The checkpoint holds every replaced file's state before the accept, saved before the first is replaced.
      const recording = checkpoints.begin({ kind: 'accept', suggestion: args.suggestion, runId: run.id });
      let appliedPaths: readonly string[] = [];
      try {
        const result = await run.apply({ checkpoint: recording });
        appliedPaths = result.applied;
        applied = { files: result.applied, conflicts: result.conflicts.map((c) => c.path) };
      } catch (applyError) {
        if (applyError instanceof OverlayApplyError) appliedPaths = applyError.applied;
        error = `accept failed: ${applyError instanceof Error ? applyError.message : String(applyError)}`;
      }
      checkpoint = (await recording.finish(appliedPaths))?.id ?? null;
    }
    const result = {
      status: final.status,
      boundary: final.boundary,
      toolCalls: final.toolCalls.map((c) => ({ name: c.name, args: c.args ?? {}, decision: c.decision, executed: c.executed })),
      filesWritten,
      messages: run.messagesForInjection(),
      pipelinedSuggestion: final.pipelinedSuggestion,
      applied,
      checkpoint,
      error,
      timeSavedMs: Math.round(run.timeSavedMs()),
    };
    output.write(JSON.stringify(result, null, 2) + '\n');
    return 0;
  } finally {
    if (timer) clearTimeout(timer);
    // Without --accept nothing in the workspace changes, and no overlay is left behind either way.
    await speculation?.disposeOverlay();
  }
}
