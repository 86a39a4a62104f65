// The agent loop against the scripted server: tool rounds, abort, errors that keep the user's
// message for a retry, tool failures sent back to the model, approvals and saved CacheSafeParams.
import * as assert from 'node:assert/strict';
import { ApprovalScheduler, type ApprovalAnswer, type ApprovalMode, type ApprovalRequest } from '../../../src/core/chat/approvals';
import { Conversation, type ConversationOptions } from '../../../src/core/chat/conversation';
import type { ChatEvent } from '../../../src/core/chat/events';
import type { ChatMessage } from '../../../src/core/messages';
import { toolRegistryFrom } from '../../../src/core/chat/toolRegistry';
import { CacheSafeParamsStore } from '../../../src/core/followup/forkedQuery';
import { OpenAiCompatibleClient } from '../../../src/core/llm/openAiCompatibleClient';
import { ScriptedServer } from '../../fixtures/scriptedServer';
import { fakeTool, unusedFs, type FakeTool } from './fakeTools';

interface Harness {
  conversation: Conversation;
  events: ChatEvent[];
  asked: ApprovalRequest[];
  store: CacheSafeParamsStore;
  tools: Record<'read' | 'edit' | 'shell', FakeTool>;
}

describe('Conversation (agent loop)', () => {
  let server: ScriptedServer;

  beforeEach(async () => {
    server = new ScriptedServer();
    await server.start();
  });
  afterEach(async () => {
    await server.close();
  });

  function harness(options: { mode?: ApprovalMode; answer?: ApprovalAnswer; extra?: Partial<ConversationOptions>; clientRetries?: number } = {}): Harness {
    const tools = {
      read: fakeTool('read_file', 'read', (args) => ({ ok: true, output: `contents of ${String(args.file_path)}` })),
      edit: fakeTool('edit', 'write', (args) => ({ ok: true, output: `edited ${String(args.file_path)}`, filesChanged: [String(args.file_path)] })),
      shell: fakeTool('run_shell_command', 'shell'),
    };
    const asked: ApprovalRequest[] = [];
    const store = new CacheSafeParamsStore();
    const conversation = new Conversation({
      llm: new OpenAiCompatibleClient({ baseURL: server.baseUrl, retry: { maxAttempts: options.clientRetries ?? 1, baseDelayMs: 1 } }),
      model: 'scripted-model',
      systemPrompt: 'You are a test assistant.',
      tools: toolRegistryFrom([tools.read, tools.edit, tools.shell]),
      toolContext: { fs: unusedFs },
      approvals: new ApprovalScheduler({ mode: options.mode ?? 'yolo', isReadOnly: async (command) => command.startsWith('ls') }),
      prompter: {
        request: async (request) => {
          asked.push(request);
          return options.answer ?? 'allow';
        },
      },
      onSettled: (request) => store.save(request),
      ...options.extra,
    });
    const events: ChatEvent[] = [];
    conversation.subscribe((event) => events.push(event));
    return { conversation, events, asked, store, tools };
  }

  const toolMessages = (messages: ChatMessage[]) => messages.filter((m) => m.role === 'tool');

  it('runs tool calls, sends their results back, and finishes with the answer', async () => {
    server.setScript([
      { text: 'Reading.', toolCalls: [{ name: 'read_file', arguments: { file_path: 'a.ts' } }] },
      { text: 'a.ts exports one constant.' },
    ]);
    const { conversation, events, tools } = harness();
    const outcome = await conversation.send('What is in a.ts?');
    assert.equal(outcome.status, 'done');
    assert.deepEqual(tools.read.calls, [{ file_path: 'a.ts' }]);
    const second = server.chatRequests[1].body?.messages ?? [];
    assert.deepEqual(second.at(-1), { role: 'tool', tool_call_id: 'call_0_0', content: 'contents of a.ts' });
    assert.deepEqual(
      conversation.messages.map((m) => m.role),
      ['user', 'assistant', 'tool', 'assistant'],
    );
    assert.deepEqual(
      events.map((e) => e.type).filter((t, i, all) => t !== all[i - 1]),
      ['turn_started', 'text', 'assistant_message', 'tool_call_started', 'tool_call_finished', 'text', 'assistant_message', 'turn_done'],
    );
    const started = events.find((e) => e.type === 'tool_call_started');
    assert.deepEqual(started, { type: 'tool_call_started', callId: 'call_0_0', name: 'read_file', args: { file_path: 'a.ts' }, summary: 'a.ts' });
    const finished = events.find((e) => e.type === 'tool_call_finished');
    assert.ok(finished && finished.type === 'tool_call_finished');
    assert.equal(finished.status, 'ok');
    assert.equal(finished.result, 'contents of a.ts');
  });

  it('a second turn sends the first turn as its prefix, after the system prompt', async () => {
    server.setScript([{ text: 'First answer.' }, { text: 'Second answer.' }]);
    const { conversation } = harness();
    await conversation.send('one');
    await conversation.send('two');
    const [first, second] = server.chatRequests.map((r) => r.body?.messages ?? []);
    assert.deepEqual(first[0], { role: 'system', content: 'You are a test assistant.' });
    assert.deepEqual(second.slice(0, first.length), first);
    assert.deepEqual(second.slice(first.length), [
      { role: 'assistant', content: 'First answer.' },
      { role: 'user', content: 'two' },
    ]);
  });

  it('malformed arguments become a tool error for the model, and the loop goes on', async () => {
    server.setScript([{ toolCalls: [{ name: 'read_file', arguments: '{"file_path": "a.ts"' }] }, { text: 'Sorry, retrying is not needed.' }]);
    const { conversation, tools, events } = harness();
    const outcome = await conversation.send('read a.ts');
    assert.equal(outcome.status, 'done');
    assert.equal(tools.read.calls.length, 0);
    const result = toolMessages(conversation.messages)[0];
    assert.match(result.content, /not valid JSON/);
    assert.ok(events.some((e) => e.type === 'tool_call_finished' && e.status === 'error'));
  });

  it('an unknown tool gets an error result naming the tools that exist', async () => {
    server.setScript([{ toolCalls: [{ name: 'mcp_thing', arguments: {} }] }, { text: 'ok' }]);
    const { conversation } = harness();
    assert.equal((await conversation.send('x')).status, 'done');
    const result = toolMessages(conversation.messages)[0];
    assert.match(result.content, /Unknown tool "mcp_thing"/);
    assert.match(result.content, /read_file, edit, run_shell_command/);
  });

  it('a tool that throws gives the model an error result instead of ending the turn', async () => {
    server.setScript([{ toolCalls: [{ name: 'edit', arguments: { file_path: 'a.ts' } }] }, { text: 'The edit failed.' }]);
    const { conversation } = harness({
      extra: {
        tools: toolRegistryFrom([
          fakeTool('edit', 'write', () => {
            throw new Error('disk full');
          }),
        ]),
      },
    });
    assert.equal((await conversation.send('edit a.ts')).status, 'done');
    assert.equal(toolMessages(conversation.messages)[0].content, 'edit failed: disk full');
  });

  it('runs several tool calls of one answer in order, each paired with its result', async () => {
    server.setScript([
      {
        toolCalls: [
          { name: 'read_file', arguments: { file_path: 'a.ts' } },
          { name: 'read_file', arguments: { file_path: 'b.ts' } },
        ],
      },
      { text: 'Both read.' },
    ]);
    const { conversation, tools } = harness();
    await conversation.send('read both');
    assert.deepEqual(tools.read.calls, [{ file_path: 'a.ts' }, { file_path: 'b.ts' }]);
    assert.deepEqual(
      toolMessages(conversation.messages).map((m) => [m.tool_call_id, m.content]),
      [
        ['call_0_0', 'contents of a.ts'],
        ['call_0_1', 'contents of b.ts'],
      ],
    );
  });

  it('aborting mid-stream ends the turn, closes the socket, and keeps the user message', async () => {
    server.setScript([{ text: 'one two three four five six seven eight nine ten', tokensPerSecond: 40 }]);
    const { conversation, events } = harness();
    conversation.subscribe((event) => {
      if (event.type === 'text') conversation.abort();
    });
    const outcome = await conversation.send('tell me a story');
    assert.equal(outcome.status, 'aborted');
    assert.equal(events.at(-1)?.type, 'turn_aborted');
    assert.equal(await server.waitForClientClose(server.chatRequests[0]), true);
    assert.deepEqual(conversation.messages, [{ role: 'user', content: 'tell me a story' }]);
    assert.equal(conversation.canResume(), true);
  });

  it('the caller signal aborts too, and pending tool calls are answered as cancelled', async () => {
    server.setScript([
      {
        toolCalls: [
          { name: 'run_shell_command', arguments: { command: 'sleep 10' } },
          { name: 'read_file', arguments: { file_path: 'a.ts' } },
        ],
      },
    ]);
    const abort = new AbortController();
    const { conversation, tools } = harness({
      extra: {
        tools: toolRegistryFrom([
          fakeTool('run_shell_command', 'shell', async (_args, context) => {
            abort.abort();
            return { ok: false, output: context.signal?.aborted ? 'killed' : 'finished' };
          }),
          fakeTool('read_file', 'read'),
        ]),
      },
    });
    const outcome = await conversation.send('run it', { signal: abort.signal });
    assert.equal(outcome.status, 'aborted');
    const results = toolMessages(conversation.messages);
    assert.equal(results.length, 2, 'every call has a result, so the history stays well paired');
    assert.equal(results[0].content, 'killed');
    assert.match(results[1].content, /Cancelled/);
    assert.equal(tools.read.calls.length, 0);
    assert.equal(server.chatRequests.length, 1, 'no further model call after the abort');
  });

  it('an endpoint error ends the turn with a user-facing message; retryLastTurn resends the same user message', async () => {
    server.setScript([{ status: 401 }, { text: 'Now it works.' }]);
    const { conversation, events } = harness();
    const failed = await conversation.send('hello');
    assert.equal(failed.status, 'error');
    const error = events.find((e) => e.type === 'turn_error');
    assert.ok(error && error.type === 'turn_error');
    assert.equal(error.kind, 'auth');
    assert.match(error.message, /Speculate: Set API Key/);
    assert.deepEqual(conversation.messages, [{ role: 'user', content: 'hello' }]);

    const retried = await conversation.retryLastTurn();
    assert.equal(retried.status, 'done');
    assert.deepEqual(server.chatRequests[1].body?.messages, server.chatRequests[0].body?.messages);
    assert.deepEqual(
      conversation.messages.map((m) => m.role),
      ['user', 'assistant'],
    );
  });

  it('an error after a tool round keeps the tool results; the retry does not run the tool again', async () => {
    server.setScript([{ toolCalls: [{ name: 'edit', arguments: { file_path: 'a.ts' } }] }, { status: 400 }, { text: 'Edited.' }]);
    const { conversation, tools } = harness();
    assert.equal((await conversation.send('edit a.ts')).status, 'error');
    assert.equal(conversation.canResume(), true);
    assert.equal((await conversation.retryLastTurn()).status, 'done');
    assert.equal(tools.edit.calls.length, 1);
  });

  it('a cut stream is an error the user can retry', async () => {
    server.setScript([{ text: 'one two three four five', cutAfterChunks: 3 }, { text: 'whole answer' }]);
    const { conversation } = harness({ clientRetries: 3 });
    const outcome = await conversation.send('go');
    assert.equal(outcome.status, 'error');
    assert.equal(outcome.status === 'error' && outcome.kind, 'network');
    assert.equal((await conversation.retryLastTurn()).status, 'done');
  });

  it('stops a turn that keeps calling tools after the round limit', async () => {
    server.setScript(() => ({ toolCalls: [{ name: 'read_file', arguments: { file_path: 'a.ts' } }] }));
    const { conversation } = harness({ extra: { maxToolRounds: 3 } });
    const outcome = await conversation.send('loop');
    assert.equal(outcome.status, 'error');
    assert.equal(outcome.status === 'error' && outcome.kind, 'tool_round_limit');
    assert.equal(server.chatRequests.length, 3);
    assert.equal(conversation.canResume(), true);
  });

  it('refuses to start a second turn while one runs', async () => {
    server.setScript([{ text: 'slow', latencyMs: 200 }]);
    const { conversation } = harness();
    const first = conversation.send('one');
    assert.throws(() => conversation.send('two'), /already running/);
    conversation.abort();
    assert.equal((await first).status, 'aborted');
  });

  describe('approvals in the loop', () => {
    it('default mode asks before an edit; a denial reaches the model and the loop goes on', async () => {
      server.setScript([{ toolCalls: [{ name: 'edit', arguments: { file_path: 'a.ts' } }] }, { text: 'Okay, not editing.' }]);
      const { conversation, asked, tools, events } = harness({ mode: 'default', answer: 'deny' });
      assert.equal((await conversation.send('edit a.ts')).status, 'done');
      assert.equal(asked.length, 1);
      assert.equal(asked[0].tool, 'edit');
      assert.equal(asked[0].summary, 'a.ts');
      assert.equal(tools.edit.calls.length, 0);
      assert.match(toolMessages(conversation.messages)[0].content, /user declined/);
      assert.ok(events.some((e) => e.type === 'approval_requested' && e.name === 'edit'));
      assert.ok(events.some((e) => e.type === 'tool_call_finished' && e.status === 'denied'));
    });

    it('"allow always" is remembered for the rest of the session', async () => {
      server.setScript([
        { toolCalls: [{ name: 'edit', arguments: { file_path: 'a.ts' } }] },
        { toolCalls: [{ name: 'edit', arguments: { file_path: 'b.ts' } }] },
        { text: 'Both edited.' },
      ]);
      const { conversation, asked, tools } = harness({ mode: 'default', answer: 'allow_always' });
      await conversation.send('edit both');
      assert.equal(asked.length, 1);
      assert.equal(tools.edit.calls.length, 2);
    });

    it('plan mode refuses a write with a message to the model, without asking', async () => {
      server.setScript([{ toolCalls: [{ name: 'edit', arguments: { file_path: 'a.ts' } }] }, { text: 'Here is the plan instead.' }]);
      const { conversation, asked, tools } = harness({ mode: 'plan' });
      assert.equal((await conversation.send('edit a.ts')).status, 'done');
      assert.equal(asked.length, 0);
      assert.equal(tools.edit.calls.length, 0);
      assert.match(toolMessages(conversation.messages)[0].content, /Plan mode/);
    });

    it('an abort while the approval question is open cancels the call', async () => {
      server.setScript([{ toolCalls: [{ name: 'edit', arguments: { file_path: 'a.ts' } }] }]);
      const { conversation, tools } = harness({
        mode: 'default',
        extra: {
          prompter: {
            request: (request) =>
              new Promise((_resolve, reject) => {
                request.signal?.addEventListener('abort', () => reject(new Error('closed')));
                setImmediate(() => conversation.abort());
              }),
          },
        },
      });
      assert.equal((await conversation.send('edit a.ts')).status, 'aborted');
      assert.equal(tools.edit.calls.length, 0);
      assert.match(toolMessages(conversation.messages)[0].content, /Cancelled/);
    });
  });

  describe('CacheSafeParams', () => {
    it('are saved after a successful turn with the system prompt, tools, model and whole history', async () => {
      server.setScript([{ toolCalls: [{ name: 'read_file', arguments: { file_path: 'a.ts' } }] }, { text: 'Done.' }]);
      const { conversation, store } = harness();
      await conversation.send('read a.ts');
      const params = store.get();
      assert.ok(params);
      assert.equal(params.generationConfig.systemPrompt, 'You are a test assistant.');
      assert.deepEqual(params.generationConfig.tools, server.chatRequests[1].body?.tools);
      assert.equal(params.model, 'scripted-model');
      assert.deepEqual(params.history, conversation.messages);
      assert.equal(params.version, 1);
    });

    it('are not reported when a turn fails, only once the retried turn answers', async () => {
      server.setScript([{ status: 400 }, { text: 'ok' }]);
      const { conversation, store } = harness();
      await conversation.send('one');
      assert.equal(store.get(), undefined);
      await conversation.retryLastTurn();
      assert.deepEqual(store.get()?.history, conversation.messages);
      conversation.reset();
      assert.deepEqual(conversation.messages, []);
    });

    it('accepted messages join the history only when well paired, and then refresh the params', async () => {
      server.setScript([{ text: 'First.' }]);
      const { conversation, store } = harness();
      await conversation.send('one');
      const dangling: ChatMessage[] = [
        { role: 'user', content: 'two' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'x1', type: 'function', function: { name: 'read_file', arguments: '{}' } }] },
      ];
      const rejected = conversation.appendMessages(dangling);
      assert.equal(rejected.ok, false);
      assert.equal(conversation.messages.length, 2);
      const accepted = conversation.appendMessages([
        ...dangling,
        { role: 'tool', tool_call_id: 'x1', content: 'file' },
        { role: 'assistant', content: 'Second.' },
      ]);
      assert.deepEqual(accepted, { ok: true });
      assert.equal(store.get()?.history.length, 6);
    });
  });
});
