// The pure parts of the client: tool-argument parsing, chunk assembly for the odd servers, the
// thinking switch per endpoint, and Retry-After capping.
import * as assert from 'node:assert/strict';
import { StreamAssembler } from '../../../src/core/llm/streamAssembler';
import { parseToolArguments } from '../../../src/core/llm/toolArguments';
import { parseEndpoint } from '../../../src/core/llm/endpointUrl';
import { providerProfile } from '../../../src/core/llm/providerProfile';
import { OpenAiCompatibleClient } from '../../../src/core/llm/openAiCompatibleClient';
import type { LlmEvent } from '../../../src/core/llm/llmClient';
import { ScriptedServer } from '../../fixtures/scriptedServer';

describe('LLM stream parts', () => {
  describe('parseToolArguments', () => {
    it('parses a JSON object', () => {
      assert.deepEqual(parseToolArguments('{"file_path":"a.ts","limit":5}'), { ok: true, args: { file_path: 'a.ts', limit: 5 } });
    });

    it('takes an empty string as no arguments', () => {
      assert.deepEqual(parseToolArguments('  '), { ok: true, args: {} });
    });

    it('explains malformed JSON and asks the model to call again', () => {
      const parsed = parseToolArguments('{"file_path": "a.ts"');
      assert.equal(parsed.ok, false);
      assert.match(parsed.ok ? '' : parsed.error, /not valid JSON.*\{"file_path": "a\.ts".*Call the tool again/s);
    });

    it('refuses JSON that is not an object', () => {
      for (const raw of ['[1,2]', '"text"', 'null', '42']) assert.equal(parseToolArguments(raw).ok, false, raw);
    });
  });

  describe('StreamAssembler', () => {
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({ choices: [{ index: 0, delta, finish_reason: finish }] });

    it('gives ids to calls that come without one and keeps the first name', () => {
      const assembler = new StreamAssembler((index) => `gen_${index}`);
      const events: LlmEvent[] = [
        ...assembler.push(chunk({ tool_calls: [{ index: 0, function: { name: 'read_file', arguments: '{"file_' } }] })),
        ...assembler.push(chunk({ tool_calls: [{ index: 0, function: { name: 'read_file', arguments: 'path":"a"}' } }] })),
        ...assembler.push(chunk({}, 'tool_calls')),
      ];
      assert.deepEqual(events, [{ type: 'tool_call_start', index: 0, id: 'gen_0', name: 'read_file' }]);
      assert.deepEqual(assembler.result().message.tool_calls, [{ id: 'gen_0', type: 'function', function: { name: 'read_file', arguments: '{"file_path":"a"}' } }]);
      assert.equal(assembler.finished, true);
    });

    it('accepts whole calls without index and with object arguments (Ollama style)', () => {
      const assembler = new StreamAssembler((index) => `gen_${index}`);
      assembler.push(chunk({ tool_calls: [{ id: 'a', function: { name: 'glob', arguments: { pattern: '*.ts' } } }, { id: 'b', function: { name: 'read_file', arguments: '{}' } }] }, 'tool_calls'));
      const calls = assembler.result().message.tool_calls ?? [];
      assert.deepEqual(
        calls.map((c) => [c.id, c.function.name, c.function.arguments]),
        [
          ['a', 'glob', '{"pattern":"*.ts"}'],
          ['b', 'read_file', '{}'],
        ],
      );
    });

    it('reads cached tokens from prompt_tokens_details, or DeepSeek prompt_cache_hit_tokens', () => {
      const a = new StreamAssembler(String);
      a.push({ choices: [], usage: { prompt_tokens: 100, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 64 } } });
      assert.deepEqual(a.result().usage, { promptTokens: 100, completionTokens: 5, cachedTokens: 64 });
      const b = new StreamAssembler(String);
      b.push({ choices: [], usage: { prompt_tokens: 100, completion_tokens: 5, prompt_cache_hit_tokens: 32 } });
      assert.equal(b.result().usage.cachedTokens, 32);
    });

    it('rejects a chunk whose choices are not a list', () => {
      assert.throws(() => new StreamAssembler(String).push({ choices: 'nope' }), /not an array/);
    });
  });

  describe('thinking switch per endpoint', () => {
    const first = (url: string, model = 'm') => providerProfile(parseEndpoint(url), model).thinkingSwitches[0] ?? null;
    it('DashScope gets enable_thinking (not for thinking-only models), OpenAI reasoning_effort, unknown servers chat_template_kwargs first', () => {
      assert.equal(first('https://dashscope.aliyuncs.com/compatible-mode/v1', 'qwen-plus'), 'enable_thinking');
      assert.equal(first('https://dashscope-intl.aliyuncs.com/compatible-mode/v1', 'qwen3-coder-plus'), 'enable_thinking');
      assert.equal(first('https://dashscope.aliyuncs.com/compatible-mode/v1', 'qwq-plus'), null);
      assert.equal(first('https://dashscope.aliyuncs.com/compatible-mode/v1', 'qwen3-235b-a22b-thinking-2507'), null);
      assert.equal(first('https://api.openai.com/v1'), 'reasoning_effort');
      assert.equal(first('http://localhost:11434/v1'), 'reasoning_effort');
      assert.equal(first('https://openrouter.ai/api/v1'), 'reasoning');
      assert.equal(first('https://api.deepseek.com/v1'), 'thinking');
      assert.equal(first('https://api.mistral.ai/v1'), null);
      assert.equal(first('http://localhost:8000/v1'), 'chat_template_kwargs');
    });
  });

  describe('Retry-After', () => {
    let server: ScriptedServer;
    beforeEach(async () => {
      server = new ScriptedServer();
      await server.start();
    });
    afterEach(async () => {
      await server.close();
    });

    it('is honoured but capped', async () => {
      server.setScript([{ status: 429, headers: { 'retry-after': '3600' } }, { status: 503, headers: { 'retry-after': '0.002' } }, { text: 'ok' }]);
      const waits: number[] = [];
      const client = new OpenAiCompatibleClient({
        baseURL: server.baseUrl,
        retry: { maxAttempts: 3, maxRetryAfterMs: 5 },
        sleep: async (ms) => {
          waits.push(ms);
        },
      });
      for await (const event of client.stream({ model: 'm', messages: [{ role: 'user', content: 'x' }] })) void event;
      assert.deepEqual(waits, [5, 2]);
    });
  });
});
