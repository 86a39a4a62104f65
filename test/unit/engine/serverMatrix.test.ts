// Server → what works: one whole session (two main turns, the suggestion, its speculation, Tab) per
// emulated server, with the real engine and client. Each row is asserted as the closing
// table states it; `SPECULATE_PRINT_MATRIX=1` prints the table.
import * as assert from 'node:assert/strict';
import type { Usage } from '../../../src/core/llm/llmClient';
import { EMULATORS, emulatedServer, type ServerEmulator } from '../../fixtures/replay/emulators';
import type { ReplayRequest, ReplayRule } from '../../fixtures/replay/replayServer';
import { isSuggestionRequest, type ScriptStep } from '../../fixtures/replay/script';
import { jsonReply } from '../../fixtures/replay/wire';
import { waitUntil } from './engineKit';
import { closeWorld, chatErrors, KEY, makeWorld, runEnd, SUGGESTION, warmUp, WARMUP, type World } from './replayWorld';

interface Row {
  chat: boolean;
  suggestions: boolean;
  speculation: boolean;
  usage: boolean;
  cached: boolean;
  /** null: the model has no thinking to switch off. */
  thinkingOff: boolean | null;
}

/** What the closing table says for each server. */
const EXPECTED: Record<string, Row> = {
  OpenAI: { chat: true, suggestions: true, speculation: true, usage: true, cached: true, thinkingOff: true },
  'Azure OpenAI': { chat: true, suggestions: true, speculation: true, usage: true, cached: true, thinkingOff: null },
  DashScope: { chat: true, suggestions: true, speculation: true, usage: true, cached: true, thinkingOff: true },
  Ollama: { chat: true, suggestions: true, speculation: true, usage: true, cached: false, thinkingOff: true },
  'LM Studio': { chat: true, suggestions: true, speculation: true, usage: true, cached: false, thinkingOff: false },
  vLLM: { chat: true, suggestions: true, speculation: true, usage: true, cached: true, thinkingOff: true },
  'llama.cpp': { chat: true, suggestions: true, speculation: true, usage: true, cached: true, thinkingOff: true },
  OpenRouter: { chat: true, suggestions: true, speculation: true, usage: true, cached: true, thinkingOff: true },
  Groq: { chat: true, suggestions: true, speculation: true, usage: true, cached: false, thinkingOff: true },
  DeepSeek: { chat: true, suggestions: true, speculation: true, usage: true, cached: true, thinkingOff: true },
  Mistral: { chat: true, suggestions: true, speculation: true, usage: true, cached: false, thinkingOff: null },
  Gemini: { chat: true, suggestions: true, speculation: true, usage: true, cached: false, thinkingOff: true },
  Together: { chat: true, suggestions: true, speculation: true, usage: true, cached: false, thinkingOff: true },
  LiteLLM: { chat: true, suggestions: true, speculation: true, usage: true, cached: false, thinkingOff: null },
};

const TURNS: Record<string, ScriptStep[]> = {
  ...WARMUP,
  [SUGGESTION]: [{ toolCalls: [{ name: 'read_file', arguments: { file_path: 'src/greet.ts' } }] }, { text: 'farewell goes after greet.' }],
};

const rows: [string, Row][] = [];

function keyCheck(emulator: ServerEmulator): ReplayRule[] {
  if (emulator.keyHeader !== 'api-key') return [];
  return [(request: ReplayRequest) => (request.headers['api-key'] === KEY && !request.headers.authorization ? undefined : jsonReply(401, { error: { code: '401', message: 'Access denied due to invalid subscription key or wrong API endpoint.' } }))];
}

describe('server → what works (one session per emulated server)', function () {
  this.timeout(30_000);
  let w: World | undefined;

  afterEach(async () => {
    const world = w;
    w = undefined;
    await closeWorld(world);
  });

  after(() => {
    if (!process.env.SPECULATE_PRINT_MATRIX) return;
    const mark = (v: boolean | null) => (v === null ? 'n/a' : v ? 'yes' : 'no');
    const lines = ['| server | chat | suggestions | speculation | usage | cached tokens | thinking off |', '|---|---|---|---|---|---|---|'];
    for (const [server, r] of rows) lines.push(`| ${server} | ${mark(r.chat)} | ${mark(r.suggestions)} | ${mark(r.speculation)} | ${mark(r.usage)} | ${mark(r.cached)} | ${mark(r.thinkingOff)} |`);
    console.log(lines.join('\n'));
  });

  for (const emulator of EMULATORS) {
    it(`${emulator.server} (${emulator.baseUrl})`, async () => {
      w = await makeWorld({ baseUrl: emulator.baseUrl, model: emulator.model, rules: [...keyCheck(emulator), ...emulatedServer(emulator, TURNS, { 'show me src/greet.ts': SUGGESTION })] });
      const world = w;
      const mainUsage: Usage[] = [];
      world.session.subscribe((event) => {
        if (event.type === 'chat' && event.event.type === 'turn_done') mainUsage.push(event.event.usage);
      });
      await warmUp(world);
      const chat = chatErrors(world).length === 0 && mainUsage.length === 2;
      const suggestions = world.session.visibleSuggestion === SUGGESTION;
      let speculation = false;
      let cached = false;
      if (suggestions) {
        const done = await runEnd(world, SUGGESTION);
        cached = done.usage.cachedTokens > 0;
        await world.session.acceptSuggestion('tab');
        speculation = done.status === 'completed' && world.events.some((e) => e.type === 'speculation_accepted');
      }
      await waitUntil(() => !world.session.busy, 'the session to settle');
      // Thinking is off where forks cost: the last suggestion and speculation requests (after any
      // switch the server refused or ignored was passed over) do not think.
      const forks = world.server.chatRequests.filter(isForkRequest);
      const thinkingOff = emulator.thinks === null ? null : forks.length > 0 && forks.slice(-2).every((r) => !emulator.thinks!(r));
      const row: Row = { chat, suggestions, speculation, usage: mainUsage.every((u) => u.promptTokens > 0), cached, thinkingOff };
      rows.push([emulator.server, row]);
      assert.deepEqual(row, EXPECTED[emulator.server], `${emulator.server}: ${JSON.stringify(world.logs.slice(-5))}`);
    });
  }
});

/** Fork requests: the suggestion and the speculated turns (the main chat never asks for thinking off). */
function isForkRequest(request: ReplayRequest): boolean {
  return isSuggestionRequest(request) || JSON.stringify(request.body?.messages ?? []).includes(SUGGESTION);
}

