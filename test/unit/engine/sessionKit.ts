// The ChatSession world the engine tests share: a scripted model with two warm-up turns, the real
// workspace services, a hand-moved clock, and helpers that wait for a suggestion and its run.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { CheckpointStore } from '../../../src/core/checkpoints';
import type { CheckpointFs } from '../../../src/core/checkpoints/checkpointFs';
import type { ApprovalAnswer, ApprovalRequest, PartialApproval } from '../../../src/core/chat/approvals';
import { SUGGESTION_DELAY_MS } from '../../../src/core/followup/followupState';
import type { SpeculationSnapshot } from '../../../src/core/followup/speculation';
import type { PrefixCaching } from '../../../src/core/llm/requestBody';
import { ChatSession, type ChatSessionOptions, type SessionConfig, type SessionEvent } from '../../../src/core/session';
import type { ScriptedReply } from '../../fixtures/scriptedServer';
import { FakeClock, makeWorld, MODEL, taskScript, waitUntil, type EngineWorld, type WorldLayout } from './engineKit';

export const GREET = 'export function greet(name: string) {\n  return `Helo, ${name}`;\n}\n';
export const FILES = { 'src/greet.ts': GREET, 'README.md': '# greet\n' };

/** Two answered main turns: the earliest point at which a suggestion is predicted. */
export const WARMUP: Record<string, ScriptedReply[]> = {
  hello: [{ text: 'Hi! What shall we work on?' }],
  'show me src/greet.ts': [{ toolCalls: [{ name: 'read_file', arguments: { file_path: 'src/greet.ts' } }] }, { text: 'It exports greet(name).' }],
};

export interface SessionWorld {
  world: EngineWorld;
  session: ChatSession;
  clock: FakeClock;
  events: SessionEvent[];
  approvals: ApprovalRequest[];
}

export type Accepted = Extract<SessionEvent, { type: 'speculation_accepted' }>;

export async function makeSession(
  turns: Record<string, ScriptedReply[]>,
  suggestions: Record<string, string>,
  options: {
    config?: Partial<SessionConfig>;
    answer?: ApprovalAnswer | PartialApproval;
    suggestionReply?: Partial<ScriptedReply>;
    files?: Record<string, string>;
    prefixCaching?: PrefixCaching;
    /** More session options (stats, …); a function when they need the world (its services). */
    session?: Partial<ChatSessionOptions> | ((world: EngineWorld) => Partial<ChatSessionOptions>);
    /** Record checkpoints in a store under the world's temp folder. */
    checkpoints?: boolean;
    /** The checkpoint store's file system (a slow or faulty one); node's by default. */
    checkpointFs?: CheckpointFs;
    /** Where the workspace and the overlays live (a small disk). */
    layout?: WorldLayout;
  } = {},
): Promise<SessionWorld> {
  const world = await makeWorld(options.files ?? FILES, taskScript({ ...WARMUP, ...turns }, suggestions, options.suggestionReply), options.prefixCaching ? { prefixCaching: options.prefixCaching } : {}, options.layout);
  const clock = new FakeClock();
  const events: SessionEvent[] = [];
  const approvals: ApprovalRequest[] = [];
  const { services } = world;
  const checkpoints = options.checkpoints ? await CheckpointStore.open({ stateDir: path.join(world.parent, 'state'), workspaceRoot: world.root, ...(options.checkpointFs ? { fs: options.checkpointFs } : {}) }) : undefined;
  const session = new ChatSession({
    llm: world.llm,
    config: {
      model: MODEL,
      fastModel: '',
      approvalMode: 'auto-edit',
      suggestionsEnabled: true,
      speculationEnabled: true,
      maxTurns: 20,
      maxMessages: 100,
      ...options.config,
    },
    systemPrompt: services.systemPrompt,
    tools: services.tools,
    toolContext: services.toolContext,
    prompter: {
      request: async (request) => {
        approvals.push(request);
        return options.answer ?? 'allow';
      },
    },
    classifyShell: services.classifyShell,
    createOverlay: services.createOverlay,
    clock,
    ...(checkpoints ? { checkpoints } : {}),
    ...(typeof options.session === 'function' ? options.session(world) : options.session),
  });
  session.subscribe((event) => events.push(event));
  return { world, session, clock, events, approvals };
}

/** Runs the two warm-up turns and shows the predicted suggestion (the fake clock skips the delay). */
export async function warmUpAndShow(s: SessionWorld, expected: string, speculates = true): Promise<void> {
  assert.equal((await s.session.submit('hello'))?.status, 'done');
  assert.equal((await s.session.submit('show me src/greet.ts'))?.status, 'done');
  await waitUntil(() => s.clock.pendingTimers > 0, 'the suggestion to be predicted');
  assert.equal(s.session.visibleSuggestion, null, 'not shown before the delay');
  s.clock.advance(SUGGESTION_DELAY_MS);
  assert.equal(s.session.visibleSuggestion, expected);
  if (speculates) assert.equal(s.session.currentSpeculation?.suggestion, expected, 'speculation starts when the suggestion shows');
}

/** Waits for the final status event of the run on `suggestion` (sent once its pipelined suggestion is known). */
export async function runEnd(s: SessionWorld, suggestion: string): Promise<SpeculationSnapshot> {
  let found: SpeculationSnapshot | undefined;
  await waitUntil(() => {
    for (const event of s.events) {
      if (event.type === 'speculation' && event.snapshot?.suggestion === suggestion && event.snapshot.status !== 'running') found = event.snapshot;
    }
    return found !== undefined;
  }, `the speculation of "${suggestion}" to end`);
  return found!;
}

export function accepted(s: SessionWorld): Accepted[] {
  return s.events.filter((e): e is Accepted => e.type === 'speculation_accepted');
}

/** Ends a test's session: everything stopped, the world removed, and no overlay left behind. */
export async function disposeSessionWorld(s: SessionWorld): Promise<void> {
  await s.session.dispose();
  await s.world.abortAll();
  const left = await s.world.overlayLeftovers();
  await s.world.dispose();
  assert.deepEqual(left, [], 'nothing left under <tmpRoot>/speculate/');
}
