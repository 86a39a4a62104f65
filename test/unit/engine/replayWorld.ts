// The world the engine replays run in: a temp workspace beside an "outside" folder, the real
// workspace services and overlay, a ChatSession over the real client talking to a replayed server.
import * as assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, realpath, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { SUGGESTION_DELAY_MS } from '../../../src/core/followup/followupState';
import { OVERLAY_PARENT } from '../../../src/core/followup/overlay/recovery';
import type { SpeculationSnapshot } from '../../../src/core/followup/speculation';
import { FileLearnedProfileStore, LEARNED_PROFILES_FILE, LearnedProfiles } from '../../../src/core/llm/learnedProfiles';
import { OpenAiCompatibleClient } from '../../../src/core/llm/openAiCompatibleClient';
import { ChatSession, type SessionConfig, type SessionEvent } from '../../../src/core/session';
import { openWorkspaceServices } from '../../../src/core/workspaceServices';
import { ReplayServer, routedFetch, type ReplayRule } from '../../fixtures/replay/replayServer';
import { isSuggestionRequest, type ScriptStep } from '../../fixtures/replay/script';
import { allStrings, FakeClock, listBelow, OUTSIDE_SECRET, treeSnapshot, waitUntil } from './engineKit';

export const KEY = 'sk-replay-engine-key-5e2b9c';
export const FILES = { 'src/greet.ts': 'export function greet(name: string) {\n  return `Hello, ${name}`;\n}\n', 'README.md': '# greet\n' };
export const SUGGESTION = 'add a farewell function to greet.ts';
/** Two answered turns: the earliest point at which a suggestion is predicted. */
export const WARMUP: Record<string, ScriptStep[]> = {
  hello: [{ text: 'Hi! What shall we work on?' }],
  'show me src/greet.ts': [{ toolCalls: [{ name: 'read_file', arguments: { file_path: 'src/greet.ts' } }] }, { text: 'It exports greet(name).' }],
};
export const BASE = { id: 'chatcmpl-engine', object: 'chat.completion.chunk', created: 1752000000, model: 'm' };

export interface World {
  session: ChatSession;
  server: ReplayServer;
  clock: FakeClock;
  events: SessionEvent[];
  logs: string[];
  root: string;
  stateDir: string;
  parent: string;
  tmpRoot: string;
  before: Record<string, string>;
  outsideBefore: Record<string, string>;
}

export async function makeWorld(options: { baseUrl: string; model?: string; rules: ReplayRule[]; config?: Partial<SessionConfig>; idleTimeoutMs?: number }): Promise<World> {
  const parent = await realpath(await mkdtemp(path.join(os.tmpdir(), 'speculate-replay-engine-')));
  const root = path.join(parent, 'ws');
  const outside = path.join(parent, 'outside');
  const tmpRoot = path.join(parent, 'tmp');
  const stateDir = path.join(parent, 'state');
  for (const dir of [root, outside, tmpRoot]) await mkdir(dir);
  await writeFile(path.join(outside, 'secret.txt'), OUTSIDE_SECRET);
  for (const [relative, content] of Object.entries(FILES)) {
    await mkdir(path.dirname(path.join(root, relative)), { recursive: true });
    await writeFile(path.join(root, relative), content);
  }
  const services = await openWorkspaceServices(root, { tmpRoot, stateDir });
  const server = new ReplayServer(options.rules);
  await server.start();
  const logs: string[] = [];
  const llm = new OpenAiCompatibleClient({
    baseURL: options.baseUrl,
    apiKey: KEY,
    fetch: routedFetch(server),
    learned: new LearnedProfiles(new FileLearnedProfileStore(stateDir), (line) => logs.push(line)),
    retry: { baseDelayMs: 1, maxDelayMs: 1 },
    sleep: async () => undefined,
    ...(options.idleTimeoutMs ? { idleTimeoutMs: options.idleTimeoutMs } : {}),
    log: (line) => logs.push(line),
  });
  const clock = new FakeClock();
  const events: SessionEvent[] = [];
  const session = new ChatSession({
    llm,
    config: { model: options.model ?? 'm', fastModel: '', approvalMode: 'auto-edit', suggestionsEnabled: true, speculationEnabled: true, maxTurns: 20, maxMessages: 100, ...options.config },
    systemPrompt: services.systemPrompt,
    tools: services.tools,
    toolContext: services.toolContext,
    prompter: { request: async () => 'allow' },
    classifyShell: services.classifyShell,
    createOverlay: services.createOverlay,
    clock,
    log: (line) => logs.push(line),
  });
  session.subscribe((event) => events.push(event));
  return { session, server, clock, events, logs, root, stateDir, parent, tmpRoot, before: await treeSnapshot(root), outsideBefore: await treeSnapshot(outside) };
}

/** Runs the two warm-up turns and lets the suggestion's delay pass. */
export async function warmUp(w: World): Promise<void> {
  assert.equal((await w.session.submit('hello'))?.status, 'done');
  assert.equal((await w.session.submit('show me src/greet.ts'))?.status, 'done');
  await waitUntil(() => w.clock.pendingTimers > 0 || w.events.some((e) => e.type === 'fork_unavailable') || w.server.chatRequests.some(isSuggestionRequest) && !w.session.busy, 'the suggestion to be predicted');
  await waitUntil(() => w.clock.pendingTimers > 0 || w.events.some((e) => e.type === 'fork_unavailable'), 'the suggestion (or its failure)');
  w.clock.advance(SUGGESTION_DELAY_MS);
}

export async function runEnd(w: World, suggestion: string): Promise<SpeculationSnapshot> {
  let found: SpeculationSnapshot | undefined;
  await waitUntil(() => {
    for (const event of w.events) if (event.type === 'speculation' && event.snapshot?.suggestion === suggestion && event.snapshot.status !== 'running') found = event.snapshot;
    return found !== undefined;
  }, `the speculation of "${suggestion}" to end`);
  return found!;
}

/** What every replay must leave: no key shown, the workspace and its neighbour unwritten, no overlay, only the profile file. */
export async function assertClean(w: World): Promise<void> {
  await w.session.dispose();
  const leaks = [...allStrings(w.events), ...w.logs].filter((text) => text.includes(KEY));
  assert.deepEqual(leaks, [], 'the key is never shown or logged');
  assert.deepEqual(await treeSnapshot(w.root), w.before, 'nothing was written in the workspace');
  assert.deepEqual(await treeSnapshot(path.join(w.parent, 'outside')), w.outsideBefore, 'nothing was written beside it');
  // A dismissed suggestion's overlay is deleted in the background: wait for it (a hang guard).
  await waitUntil(async () => (await listBelow(path.join(w.tmpRoot, OVERLAY_PARENT))).length === 0, 'the overlays to be deleted').catch(() => undefined);
  assert.deepEqual(await listBelow(path.join(w.tmpRoot, OVERLAY_PARENT)), [], 'no overlay is left');
  const state = await readdir(w.stateDir).catch(() => [] as string[]);
  // locks/: the workspace lock's folder (its lock file is removed once released).
  assert.ok(state.every((name) => name === LEARNED_PROFILES_FILE || name === 'locks'), `only the learned profiles are kept: ${state.join(', ')}`);
  assert.deepEqual(await readdir(path.join(w.stateDir, 'locks')).catch(() => []), [], 'no lock is left held');
}

export function chatErrors(w: World): Extract<Extract<SessionEvent, { type: 'chat' }>['event'], { type: 'turn_error' }>[] {
  return w.events.flatMap((e) => (e.type === 'chat' && e.event.type === 'turn_error' ? [e.event] : []));
}

/** After each test: the clean-up checks of `assertClean`, then the server and temp folders go. */
export async function closeWorld(w: World | undefined): Promise<void> {
  if (!w) return;
  try {
    await assertClean(w);
  } finally {
    await w.server.close();
    await rm(w.parent, { recursive: true, force: true });
  }
}
