// An answer cut at the output limit inside a tool call (finish_reason "length", arguments not JSON)
// against the scripted server in vLLM's strict mode: never replayed as it came, the turn does not
// end on it, the model is told and asked once more with a raised max_tokens — in the main chat and
// in speculation alike. A second cut ends the turn as before; a server refusing the raised limit
// gets the request without it.
import * as assert from 'node:assert/strict';
import { ApprovalScheduler } from '../../../src/core/chat/approvals';
import { Conversation } from '../../../src/core/chat/conversation';
import type { ChatEvent } from '../../../src/core/chat/events';
import { MIN_RAISED_OUTPUT_TOKENS } from '../../../src/core/chat/lengthRecovery';
import { toolRegistryFrom } from '../../../src/core/chat/toolRegistry';
import { OpenAiCompatibleClient } from '../../../src/core/llm/openAiCompatibleClient';
import { cutOffInsideToolCall, ScriptedServer, type Script } from '../../fixtures/scriptedServer';
import { makeWorld, type EngineWorld } from '../engine/engineKit';
import { fakeTool, unusedFs } from './fakeTools';

const BIG = { file_path: 'src/big.ts', content: 'export const table = [\n' + '  1,\n'.repeat(400) + '];\n' };
const CUT = cutOffInsideToolCall('write_file', BIG, 300, 'Writing the table.');

describe('recovery from an answer cut inside a tool call', () => {
  let server: ScriptedServer;
  afterEach(async () => {
    await server?.close();
  });

  async function chat(script: Script) {
    server = new ScriptedServer({ script, rejectMalformedToolArguments: true });
    await server.start();
    const write = fakeTool('write_file', 'write', (args) => ({ ok: true, output: `wrote ${String(args.file_path)}` }));
    const conversation = new Conversation({
      llm: new OpenAiCompatibleClient({ baseURL: server.baseUrl, retry: { maxAttempts: 1, baseDelayMs: 1 } }),
      model: 'scripted-model',
      systemPrompt: 'You are a test assistant.',
      tools: toolRegistryFrom([write]),
      toolContext: { fs: unusedFs },
      approvals: new ApprovalScheduler({ mode: 'yolo', isReadOnly: async () => false }),
      prompter: { request: async () => 'allow' },
    });
    const events: ChatEvent[] = [];
    conversation.subscribe((event) => events.push(event));
    return { conversation, events, write };
  }

  it('main chat: tells the model its call was cut, asks again with a raised max_tokens, and finishes', async () => {
    const { conversation, events, write } = await chat([CUT, { toolCalls: [{ name: 'write_file', arguments: BIG }] }, { text: 'Done.' }]);
    const outcome = await conversation.send('Write the table.');
    assert.equal(outcome.status, 'done', outcome.status === 'error' ? outcome.message : '');
    assert.deepEqual(write.calls, [BIG], 'the cut call never ran; the complete one did');
    const [first, retry, last] = server.chatRequests;
    assert.equal(first.body?.max_tokens, undefined, 'the first request leaves the server its own limit');
    assert.equal(retry.body?.max_tokens, MIN_RAISED_OUTPUT_TOKENS, 'the retry asks for more');
    assert.equal(last.body?.max_tokens, undefined, 'only the retry');
    // What the retry sent: the cut call as {} (vLLM's strict server accepted it), then the explanation.
    const sent = retry.body?.messages?.slice(-2) as Array<Record<string, unknown>>;
    assert.deepEqual((sent[0].tool_calls as Array<{ function: { arguments: string } }>)[0].function.arguments, '{}');
    assert.equal(sent[0].content, 'Writing the table.');
    assert.match(String(sent[1].content), /^Not run: your answer reached the output limit \(finish_reason "length"\) while the arguments of this call were being written, so they arrived incomplete \(300 characters, not valid JSON\)\. Send the call again, complete\./);
    assert.ok(events.some((e) => e.type === 'notice' && /cut off at the output limit in the middle of a tool call/.test(e.text)));
    assert.ok(!events.some((e) => e.type === 'turn_error'));
    // Every request of the turn counts.
    assert.equal(outcome.usage.promptTokens, server.chatRequests.reduce((sum, r) => sum + Math.ceil(r.prompt.length / 4), 0));
  });

  it('main chat: a second cut in the same turn ends it as an output-limit error, still well paired', async () => {
    const { conversation, write } = await chat([CUT, CUT, { text: 'never' }]);
    const outcome = await conversation.send('Write the table.');
    assert.equal(outcome.status, 'error');
    assert.equal(outcome.status === 'error' && outcome.kind, 'output_limit');
    assert.equal(server.chatRequests.length, 2, 'retried once only');
    assert.deepEqual(write.calls, []);
    assert.equal(outcome.status === 'error' && outcome.retryable, true);
  });

  it('main chat: a server that refuses the raised limit gets the retry without it', async () => {
    let step = 0;
    const { conversation } = await chat((request) => {
      if (request.body?.max_tokens !== undefined) return { status: 400, body: { error: { message: 'max_tokens must be at most 4096', type: 'invalid_request_error', code: null } } };
      return [CUT, { text: 'I will write it in parts.' }][step++] ?? { text: 'extra' };
    });
    const outcome = await conversation.send('Write the table.');
    assert.equal(outcome.status, 'done', outcome.status === 'error' ? outcome.message : '');
    assert.deepEqual(server.chatRequests.map((r) => r.body?.max_tokens), [undefined, MIN_RAISED_OUTPUT_TOKENS, undefined]);
  });

  describe('speculation', () => {
    let world: EngineWorld | undefined;
    afterEach(async () => {
      await world?.dispose();
      world = undefined;
    });

    it('recovers the same way: the retry writes into the overlay and the run completes', async () => {
      let step = 0;
      world = await makeWorld({ 'src/a.ts': 'a\n' }, () => [CUT, { toolCalls: [{ name: 'write_file', arguments: BIG }] }, { text: 'Written.' }][step++] ?? { text: 'extra' });
      const run = world.speculate('write the table', { approvalMode: 'yolo' });
      const final = await run.done;
      assert.equal(final.status, 'completed', final.error ?? '');
      assert.deepEqual(final.filesWritten.map((f) => f.path), ['src/big.ts']);
      assert.deepEqual(world.server.chatRequests.map((r) => r.body?.max_tokens), [undefined, MIN_RAISED_OUTPUT_TOKENS, undefined]);
      const roles = final.messages.map((m) => m.role);
      assert.deepEqual(roles, ['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
      const recovered = final.messages[1];
      assert.equal(recovered.role === 'assistant' && recovered.tool_calls?.[0].function.arguments, '{}');
      assert.match(final.messages[2].role === 'tool' ? final.messages[2].content : '', /^Not run: your answer reached the output limit/);
      assert.deepEqual(final.toolCalls.map((c) => [c.name, c.executed]), [['write_file', true]], 'only the complete call is a record of the run');
    });
  });
});
