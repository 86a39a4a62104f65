// Every replay of a real server (test/fixtures/replay) through the real client: the main chat's
// request and a fork's request (thinking off), with what the user must get from each. Each replay
// also checks that the key is never shown, that only the learned-profile file is written, and
// that what was refused is not sent again.
import * as assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { FileLearnedProfileStore, LEARNED_PROFILES_FILE, LearnedProfiles } from '../../../src/core/llm/learnedProfiles';
import { LlmError, type ChatRequest, type LlmEvent } from '../../../src/core/llm/llmClient';
import { OpenAiCompatibleClient } from '../../../src/core/llm/openAiCompatibleClient';
import { REPLAY_CASES } from '../../fixtures/replay/cases';
import { REPLAY_TOOLS, replayHistory } from '../../fixtures/replay/history';
import type { Expectation, ReplayCase } from '../../fixtures/replay/replayCase';
import { ReplayServer, routedFetch } from '../../fixtures/replay/replayServer';

const REPLAY_KEY = 'sk-replay-test-key-7d41c0ffee';

interface CallResult {
  events: LlmEvent[];
  error?: LlmError;
  requests: number;
}

async function call(client: OpenAiCompatibleClient, server: ReplayServer, request: ChatRequest): Promise<CallResult> {
  const before = server.chatRequests.length;
  const events: LlmEvent[] = [];
  try {
    for await (const event of client.stream(request)) events.push(event);
  } catch (error) {
    if (!(error instanceof LlmError)) throw error;
    return { events, error, requests: server.chatRequests.length - before };
  }
  return { events, requests: server.chatRequests.length - before };
}

function check(result: CallResult, expected: Expectation, label: string): void {
  const done = result.events.find((e): e is Extract<LlmEvent, { type: 'done' }> => e.type === 'done');
  if (expected.outcome === 'error') {
    assert.ok(result.error, `${label}: expected an error, got ${done ? JSON.stringify(done.message) : 'nothing'}`);
    if (expected.errorKind) assert.equal(result.error.kind, expected.errorKind, `${label}: ${result.error.message}`);
    if (expected.error) assert.match(result.error.message, expected.error, label);
  } else {
    assert.equal(result.error, undefined, `${label}: ${result.error?.message}`);
    assert.ok(done, `${label}: the stream ended with a final message`);
    const text = result.events.flatMap((e) => (e.type === 'text' ? [e.delta] : [])).join('');
    assert.equal(done.message.content ?? '', text, `${label}: the final message holds what streamed`);
    if (typeof expected.text === 'string') assert.equal(text, expected.text, label);
    else if (expected.text) assert.match(text, expected.text, label);
    assert.equal(done.stop, expected.stop ?? 'complete', `${label}: stop kind`);
    if (expected.toolCalls) assert.deepEqual(done.message.tool_calls?.map((c) => c.function.name) ?? [], expected.toolCalls, label);
    for (const call of done.message.tool_calls ?? []) assert.doesNotThrow(() => JSON.parse(call.function.arguments), `${label}: each call's arguments are one JSON object`);
    if (expected.usage?.prompt !== undefined) assert.equal(done.usage.promptTokens, expected.usage.prompt, `${label}: prompt tokens`);
    if (expected.usage?.cached !== undefined) assert.equal(done.usage.cachedTokens, expected.usage.cached, `${label}: cached tokens`);
    if (expected.hint) assert.match(done.hint ?? '', expected.hint, label);
    else assert.equal(done.hint, undefined, `${label}: no hint`);
    if (expected.reasoning !== undefined) assert.equal(result.events.some((e) => e.type === 'reasoning'), expected.reasoning, `${label}: reasoning streamed`);
  }
  if (expected.requests !== undefined) assert.equal(result.requests, expected.requests, `${label}: HTTP requests`);
}

function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (value instanceof Error) return [value.message, ...strings({ ...value })];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (typeof value === 'object' && value !== null) return Object.entries(value).flatMap(([k, v]) => [k, ...strings(v)]);
  return [];
}

describe('replays of real OpenAI-compatible servers', function () {
  this.timeout(10_000);
  let server: ReplayServer;
  let stateDir: string;

  before(async () => {
    server = new ReplayServer();
    await server.start();
  });
  after(async () => {
    await server.close();
  });
  beforeEach(async () => {
    stateDir = await mkdtemp(path.join(tmpdir(), 'speculate-replay-state-'));
  });
  afterEach(async () => {
    await rm(stateDir, { recursive: true, force: true });
  });

  it(`holds at least forty replays, each citing its sources (${REPLAY_CASES.length} now)`, () => {
    assert.ok(REPLAY_CASES.length >= 40, `${REPLAY_CASES.length} replays`);
    assert.equal(new Set(REPLAY_CASES.map((c) => c.id)).size, REPLAY_CASES.length, 'ids are unique');
    for (const c of REPLAY_CASES) {
      assert.ok(c.sources.length > 0 && c.sources.every((s) => /https?:\/\//.test(s)), `${c.id} cites a source`);
      assert.ok(c.chat || c.fork, `${c.id} expects something`);
    }
  });

  for (const replay of REPLAY_CASES) {
    it(`${replay.server}: ${replay.title} [${replay.id}]`, async () => {
      await runReplay(replay);
    });
  }

  async function runReplay(replay: ReplayCase): Promise<void> {
    server.serve(replay.rules);
    const key = replay.apiKey ?? REPLAY_KEY;
    const logs: string[] = [];
    const learned = new LearnedProfiles(new FileLearnedProfileStore(stateDir), (line) => logs.push(line));
    const makeClient = () =>
      new OpenAiCompatibleClient({
        baseURL: replay.baseUrl,
        apiKey: key,
        fetch: routedFetch(server),
        learned,
        retry: { baseDelayMs: 1, maxDelayMs: 1 },
        sleep: async () => undefined,
        firstTokenTimeoutMs: 2_000,
        idleTimeoutMs: 1_000,
        log: (line) => logs.push(line),
      });
    const client = makeClient();
    const base: ChatRequest = { model: replay.model, messages: replayHistory(replay.history), tools: REPLAY_TOOLS };
    const seen: unknown[] = [];
    const calls: ['chat' | 'fork', Expectation][] = [];
    if (replay.chat) calls.push(['chat', replay.chat]);
    if (replay.fork) calls.push(['fork', replay.fork]);
    for (const [kind, expected] of calls) {
      const before = server.requests.length;
      const result = await call(client, server, kind === 'fork' ? { ...base, thinking: false } : base);
      seen.push(result.events, result.error);
      check(result, expected, `${replay.id} ${kind}`);
      replay.wire?.(server.requests.slice(before).filter((r) => r.path.endsWith('/chat/completions')), kind);
    }
    if (replay.learnedNextTime) {
      // A new client over the same state: what the endpoint refused is known from the file.
      const [kind, expected] = calls[0]!;
      const fresh = new OpenAiCompatibleClient({
        baseURL: replay.baseUrl,
        apiKey: key,
        fetch: routedFetch(server),
        learned: new LearnedProfiles(new FileLearnedProfileStore(stateDir)),
        retry: { baseDelayMs: 1, maxDelayMs: 1 },
        sleep: async () => undefined,
      });
      const again = await call(fresh, server, kind === 'fork' ? { ...base, thinking: false } : base);
      seen.push(again.events, again.error);
      check(again, { ...expected, requests: 1 }, `${replay.id} ${kind} (learned)`);
    }
    // Only the learned-profile file may have been written, and never with the key in it.
    const written = await readdir(stateDir);
    assert.ok(written.every((name) => name === LEARNED_PROFILES_FILE), `only ${LEARNED_PROFILES_FILE} is written: ${written.join(', ')}`);
    const state = written.length > 0 ? await readFile(path.join(stateDir, LEARNED_PROFILES_FILE), 'utf8') : '';
    if (key.length > 0) {
      const leaks = [...strings(seen), ...logs, state].filter((text) => text.includes(key));
      assert.deepEqual(leaks, [], 'the key is never shown, logged or stored');
    }
  }
});
