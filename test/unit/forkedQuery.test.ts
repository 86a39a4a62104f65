// CacheSafeParams and forks: the store (snapshot, version, clear), the 40-message curation, and a
// fork whose prefix is byte-identical to the main chat's so the server's prefix cache covers it.
import * as assert from 'node:assert/strict';
import { ApprovalScheduler } from '../../src/core/chat/approvals';
import { Conversation } from '../../src/core/chat/conversation';
import type { ChatMessage, ToolDefinition } from '../../src/core/messages';
import { toolRegistryFrom } from '../../src/core/chat/toolRegistry';
import {
  CacheSafeParamsStore,
  MAX_HISTORY_FOR_CACHE,
  curateHistory,
  runForkedQuery,
  type SaveCacheSafeParamsInput,
} from '../../src/core/followup/forkedQuery';
import { OpenAiCompatibleClient } from '../../src/core/llm/openAiCompatibleClient';
import type { PrefixCaching } from '../../src/core/llm/requestBody';
import { ScriptedServer } from '../fixtures/scriptedServer';
import { fakeTool, unusedFs } from './chat/fakeTools';

const TOOL: ToolDefinition = { type: 'function', function: { name: 'read_file', description: 'Read', parameters: { type: 'object' } } };

function input(overrides: Partial<SaveCacheSafeParamsInput> = {}): SaveCacheSafeParamsInput {
  return {
    systemPrompt: 'System.',
    tools: [TOOL],
    history: [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
    ],
    model: 'm',
    ...overrides,
  };
}

/** user, assistant(tool call), tool, assistant — one tool-using turn, `n` times. */
function turns(n: number): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (let i = 0; i < n; i++) {
    out.push(
      { role: 'user', content: `ask ${i}` },
      { role: 'assistant', content: null, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'read_file', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: `c${i}`, content: `result ${i}` },
      { role: 'assistant', content: `answer ${i}` },
    );
  }
  return out;
}

describe('CacheSafeParams', () => {
  describe('store', () => {
    it('saves what it is given and hands it back', () => {
      const store = new CacheSafeParamsStore();
      const saved = store.save(input({ temperature: 0.2 }));
      assert.deepEqual(store.get(), saved);
      assert.deepEqual(saved.generationConfig, { systemPrompt: 'System.', tools: [TOOL], temperature: 0.2 });
      assert.equal(saved.model, 'm');
      assert.equal(saved.version, 1);
    });

    it('is a deep snapshot: later changes to the caller history do not reach it, and it cannot be changed', () => {
      const store = new CacheSafeParamsStore();
      const history: ChatMessage[] = [{ role: 'user', content: 'hi' }];
      const tools = [structuredClone(TOOL)];
      store.save(input({ history, tools }));
      history.push({ role: 'assistant', content: 'later' });
      (history[0] as { content: string }).content = 'changed';
      tools[0].function.name = 'renamed';
      const params = store.get();
      assert.ok(params);
      assert.deepEqual(params.history, [{ role: 'user', content: 'hi' }]);
      assert.equal(params.generationConfig.tools[0].function.name, 'read_file');
      assert.throws(() => params.history.push({ role: 'user', content: 'x' }), TypeError);
      assert.throws(() => {
        (params.history[0] as { content: string }).content = 'x';
      }, TypeError);
    });

    it('bumps the version only when the system prompt or the tools change', () => {
      const store = new CacheSafeParamsStore();
      assert.equal(store.save(input()).version, 1);
      assert.equal(store.save(input({ history: turns(2), model: 'other', temperature: 1 })).version, 1);
      assert.equal(store.save(input({ systemPrompt: 'New system.' })).version, 2);
      assert.equal(store.save(input({ systemPrompt: 'New system.', tools: [TOOL, { ...TOOL, function: { ...TOOL.function, name: 'glob' } }] })).version, 3);
      assert.equal(store.save(input({ systemPrompt: 'New system.', tools: [TOOL, { ...TOOL, function: { ...TOOL.function, name: 'glob' } }] })).version, 3);
    });

    it('clear removes the params; the version keeps counting afterwards', () => {
      const store = new CacheSafeParamsStore();
      store.save(input());
      store.clear();
      assert.equal(store.get(), undefined);
      assert.equal(store.save(input()).version, 1, 'same config, same version');
      assert.equal(store.save(input({ systemPrompt: 'B' })).version, 2);
    });
  });

  describe('curateHistory', () => {
    it('keeps a short history whole', () => {
      const history = turns(3);
      assert.deepEqual(curateHistory(history), history);
    });

    it('cuts a long history to at most the limit, starting at a user message', () => {
      const history = turns(15); // 60 messages
      const curated = curateHistory(history);
      assert.ok(curated.length <= MAX_HISTORY_FOR_CACHE);
      assert.equal(curated[0].role, 'user');
      assert.deepEqual(curated, history.slice(history.length - curated.length));
    });

    it('never starts inside a tool call/result pair, whatever the cut', () => {
      for (let max = 1; max <= 12; max++) {
        const curated = curateHistory(turns(4), max);
        assert.equal(curated[0].role, 'user', `max ${max}`);
      }
    });

    it('reaches back to the user message when one turn alone is longer than the limit', () => {
      const oneLongTurn: ChatMessage[] = [{ role: 'user', content: 'big task' }];
      for (let i = 0; i < 30; i++) {
        oneLongTurn.push(
          { role: 'assistant', content: null, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'read_file', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: `c${i}`, content: 'r' },
        );
      }
      const curated = curateHistory(oneLongTurn);
      assert.deepEqual(curated[0], { role: 'user', content: 'big task' });
    });
  });

  describe('runForkedQuery against the main chat', () => {
    let server: ScriptedServer;
    beforeEach(async () => {
      server = new ScriptedServer();
      await server.start();
    });
    afterEach(async () => {
      await server.close();
    });

    async function mainTurn(prefixCaching: PrefixCaching) {
      const llm = new OpenAiCompatibleClient({ baseURL: server.baseUrl, prefixCaching, retry: { maxAttempts: 1 } });
      const store = new CacheSafeParamsStore();
      const conversation = new Conversation({
        llm,
        model: 'scripted-model',
        systemPrompt: 'You are the main chat.',
        tools: toolRegistryFrom([fakeTool('read_file', 'read'), fakeTool('edit', 'write')]),
        toolContext: { fs: unusedFs },
        approvals: new ApprovalScheduler({ mode: 'yolo', isReadOnly: async () => false }),
        prompter: { request: async () => 'allow' },
        onSettled: (request) => store.save(request),
        temperature: 0.3,
      });
      server.setScript([
        { text: 'Reading.', toolCalls: [{ name: 'read_file', arguments: { file_path: 'a.ts' } }] },
        { text: 'a.ts is short.' },
        { text: 'run the tests' },
      ]);
      assert.equal((await conversation.send('What is in a.ts?')).status, 'done');
      const params = store.get();
      assert.ok(params);
      return { llm, params, conversation };
    }

    it('sends system prompt, tools and history byte-identical to the main request, thinking off', async () => {
      const { llm, params } = await mainTurn('none');
      const result = await runForkedQuery({ params, llm, extraMessages: [{ role: 'user', content: 'Predict the next input.' }] });
      assert.equal(result.message.content, 'run the tests');

      const main = server.chatRequests[1].body;
      const fork = server.chatRequests[2].body;
      assert.ok(main?.messages && fork?.messages);
      const shared = main.messages.length;
      assert.equal(JSON.stringify(fork.messages.slice(0, shared)), JSON.stringify(main.messages), 'the prefix is byte-identical');
      assert.equal(JSON.stringify(fork.tools), JSON.stringify(main.tools), 'the same tools, byte for byte');
      assert.deepEqual(fork.messages.slice(shared), [
        { role: 'assistant', content: 'a.ts is short.' },
        { role: 'user', content: 'Predict the next input.' },
      ]);
      assert.equal(fork.temperature, 0.3);
      assert.equal(fork.model, 'scripted-model');
      assert.deepEqual(fork.chat_template_kwargs, { enable_thinking: false });
      assert.equal(main.chat_template_kwargs, undefined, 'the main chat keeps the provider default');
    });

    it('the server cache covers the whole shared prefix of the fork', async () => {
      const { llm, params } = await mainTurn('none');
      const result = await runForkedQuery({ params, llm, extraMessages: [{ role: 'user', content: 'Predict.' }] });
      const mainPrompt = server.chatRequests[1].prompt;
      assert.ok(server.chatRequests[2].prompt.startsWith(mainPrompt));
      assert.equal(result.usage.cachedTokens, Math.floor(mainPrompt.length / 4));
    });

    it('with DashScope marks the fork still hits the whole prefix (marks change the wire form, not the prompt)', async () => {
      const { llm, params } = await mainTurn('dashscope');
      const result = await runForkedQuery({ params, llm, extraMessages: [{ role: 'user', content: 'Predict.' }] });
      const fork = server.chatRequests[2];
      assert.equal(fork.headers['x-dashscope-cachecontrol'], 'enable');
      assert.deepEqual(fork.body?.messages?.at(-1), { role: 'user', content: [{ type: 'text', text: 'Predict.', cache_control: { type: 'ephemeral' } }] });
      assert.equal(result.usage.cachedTokens, Math.floor(server.chatRequests[1].prompt.length / 4));
    });

    it('a second fork from the same params shares the prefix as well (suggestion, then speculation)', async () => {
      const { llm, params } = await mainTurn('none');
      await runForkedQuery({ params, llm, extraMessages: [{ role: 'user', content: 'Predict.' }] });
      server.enqueue({ text: 'speculated' });
      const second = await runForkedQuery({ params, llm, extraMessages: [{ role: 'user', content: 'run the tests' }], model: 'scripted-fast' });
      assert.equal(server.chatRequests[3].body?.model, 'scripted-fast');
      const shared = `${server.chatRequests[1].prompt}`;
      assert.ok(second.usage.cachedTokens >= Math.floor(shared.length / 4));
    });

    it('the next main turn extends the same prefix the forks used', async () => {
      const { llm, params, conversation } = await mainTurn('none');
      await runForkedQuery({ params, llm, extraMessages: [{ role: 'user', content: 'Predict.' }] });
      server.enqueue({ text: 'ok' });
      await conversation.send('run the tests');
      const forkMessages = server.chatRequests[2].body?.messages ?? [];
      const nextMain = server.chatRequests[3].body?.messages ?? [];
      const shared = forkMessages.length - 1;
      assert.equal(JSON.stringify(nextMain.slice(0, shared)), JSON.stringify(forkMessages.slice(0, shared)));
    });

    it('streams events to onEvent and reports an abort as aborted', async () => {
      const { llm, params } = await mainTurn('none');
      server.setScript([{ text: 'one two three four five six', tokensPerSecond: 40 }]);
      const abort = new AbortController();
      const seen: string[] = [];
      await assert.rejects(
        runForkedQuery({
          params,
          llm,
          extraMessages: [{ role: 'user', content: 'go' }],
          signal: abort.signal,
          onEvent: (event) => {
            seen.push(event.type);
            if (event.type === 'text') abort.abort();
          },
        }),
        (error: unknown) => error instanceof Error && 'kind' in error && error.kind === 'aborted',
      );
      assert.deepEqual(seen, ['text']);
      assert.equal(await server.waitForClientClose(server.chatRequests[2]), true);
    });
  });
});
