// The agent tool's sub-agents against the scripted server and the real tools: a nested
// conversation on the fast model with the read tools only, its steps reported on the parent's card,
// its answer returned and its tokens counted in the turn; stopped when it loops or runs out of
// rounds or tokens; during speculation run only while every call it makes passes the gate.
import * as assert from 'node:assert/strict';
import { ApprovalScheduler } from '../../../src/core/chat/approvals';
import { Conversation } from '../../../src/core/chat/conversation';
import type { ChatEvent } from '../../../src/core/chat/events';
import { createSubAgentRunner, MAX_REPEATED_CALLS, type SubAgentOptions } from '../../../src/core/chat/subAgent';
import type { RecordedRequest, Script, ScriptedReply } from '../../fixtures/scriptedServer';
import { allStrings, makeWorld, MODEL, OUTSIDE_SECRET, type EngineWorld } from '../engine/engineKit';

const GREET = 'export function greet(name: string) {\n  return `Hello, ${name}`;\n}\n';
const FAST = 'scripted-fast';

function systemOf(request: RecordedRequest): string {
  const content = request.body?.messages?.[0]?.content;
  return typeof content === 'string' ? content : '';
}
const isSubAgent = (request: RecordedRequest) => systemOf(request).startsWith('You are a sub-agent');

/** The parent's replies in order, the sub-agent's by its own round. */
function script(parent: ScriptedReply[], sub: (round: number) => ScriptedReply): Script {
  let p = 0;
  let s = 0;
  return (request) => (isSubAgent(request) ? sub(s++) : (parent[p++] ?? { text: '(parent: nothing more scripted)' }));
}

const delegate: ScriptedReply = { toolCalls: [{ name: 'agent', arguments: { description: 'find greet', prompt: 'Where is greet defined? Report file and line.' } }] };

describe('agent tool: sub-agents', () => {
  let world: EngineWorld | undefined;
  afterEach(async () => {
    await world?.dispose();
    world = undefined;
  });

  async function setUp(s: Script, runner: Partial<SubAgentOptions> = {}) {
    world = await makeWorld({ 'src/greet.ts': GREET, 'src/app.ts': "import { greet } from './greet';\n" }, s);
    const w = world;
    const subAgent = createSubAgentRunner({ llm: w.llm, model: () => FAST, approvalMode: () => 'default', tools: w.services.tools, workspaceRoot: w.root, ...runner });
    const conversation = new Conversation({
      llm: w.llm,
      model: MODEL,
      systemPrompt: 'You are the parent.',
      tools: w.services.tools,
      toolContext: { ...w.services.toolContext, subAgent },
      approvals: new ApprovalScheduler({ mode: 'default', isReadOnly: async () => false }),
      prompter: { request: async () => 'deny' },
    });
    const events: ChatEvent[] = [];
    conversation.subscribe((event) => events.push(event));
    return { w, conversation, events, subAgent };
  }

  it('runs a nested conversation on the fast model with the read tools, and returns its answer as the result', async () => {
    const { w, conversation, events } = await setUp(
      script([delegate, { text: 'greet lives in src/greet.ts.' }], (round) =>
        [
          { toolCalls: [{ name: 'grep_search', arguments: { pattern: 'function greet' } }] },
          { toolCalls: [{ name: 'read_file', arguments: { file_path: 'src/greet.ts' } }] },
          { text: 'greet is defined in src/greet.ts line 1.' },
        ][round],
      ),
    );
    const outcome = await conversation.send('Where is greet?');
    assert.equal(outcome.status, 'done');
    const requests = w.server.chatRequests;
    const sub = requests.filter(isSubAgent);
    assert.equal(sub.length, 3);
    assert.ok(sub.every((r) => r.body?.model === FAST), 'the sub-agent runs on the fast model');
    assert.deepEqual(
      sub[0].body?.tools?.map((t) => (t as { function: { name: string } }).function.name),
      ['read_file', 'list_directory', 'glob', 'grep_search', 'lsp', 'skill'],
      'read tools only: no edits, no shell, no network, no nested agent',
    );
    // It sees its task, not the parent's conversation.
    assert.deepEqual(sub[0].body?.messages?.slice(1), [{ role: 'user', content: 'Where is greet defined? Report file and line.' }]);
    const toolResult = requests.filter((r) => !isSubAgent(r))[1].body?.messages?.at(-1);
    assert.deepEqual(toolResult, { role: 'tool', tool_call_id: 'call_0_0', content: 'greet is defined in src/greet.ts line 1.' });
    const progress = events.filter((e): e is Extract<ChatEvent, { type: 'tool_call_progress' }> => e.type === 'tool_call_progress');
    assert.deepEqual(progress.map((e) => [e.callId, e.line]), [['call_0_0', 'grep_search "function greet"'], ['call_0_0', 'read_file src/greet.ts']]);
    // Every request's tokens count toward the turn (the fixture reports ceil(prompt/4) prompt tokens).
    const promptTokens = requests.reduce((sum, r) => sum + Math.ceil(r.prompt.length / 4), 0);
    assert.equal(outcome.usage.promptTokens, promptTokens);
  });

  it('stops a sub-agent that repeats the same call, and says so to the parent', async () => {
    const { w, conversation } = await setUp(script([delegate, { text: 'ok' }], () => ({ toolCalls: [{ name: 'read_file', arguments: { file_path: 'src/greet.ts' } }] })));
    const outcome = await conversation.send('Where is greet?');
    assert.equal(outcome.status, 'done');
    assert.equal(w.server.chatRequests.filter(isSubAgent).length, MAX_REPEATED_CALLS, 'stopped at the third identical call');
    const result = conversation.messages.find((m) => m.role === 'tool');
    assert.match(result?.role === 'tool' ? result.content : '', /^The sub-agent "find greet" was stopped: it made the same call \(read_file src\/greet\.ts\) 3 times, so it was not getting further\./);
  });

  it('bounds a sub-agent in rounds and in tokens', async () => {
    let file = 0;
    const wandering = () => ({ toolCalls: [{ name: 'glob', arguments: { pattern: `**/*.${file++}` } }] });
    const rounds = await setUp(script([delegate, { text: 'ok' }], wandering), { maxRounds: 4 });
    await rounds.conversation.send('Where is greet?');
    assert.equal(rounds.w.server.chatRequests.filter(isSubAgent).length, 4);
    const roundResult = rounds.conversation.messages.find((m) => m.role === 'tool');
    assert.match(roundResult?.role === 'tool' ? roundResult.content : '', /did not finish: it used all of its 4 rounds\. Do the rest yourself/);
    await world!.dispose();
    world = undefined;

    const tokens = await setUp(script([delegate, { text: 'ok' }], wandering), { maxTokens: 100 });
    await tokens.conversation.send('Where is greet?');
    assert.equal(tokens.w.server.chatRequests.filter(isSubAgent).length, 1, 'no request after the budget is spent');
    const tokenResult = tokens.conversation.messages.find((m) => m.role === 'tool');
    assert.match(tokenResult?.role === 'tool' ? tokenResult.content : '', /did not finish: it used up its budget of 100 tokens/);
  });

  describe('during speculation', () => {
    it('runs when each of its calls passes the gate; its tokens count toward the run', async () => {
      const { w, subAgent } = await setUp(
        script([delegate, { text: 'It is in src/greet.ts.' }], (round) => [{ toolCalls: [{ name: 'read_file', arguments: { file_path: 'src/greet.ts' } }] }, { text: 'src/greet.ts line 1.' }][round]),
      );
      const run = w.speculate('where is greet', { toolContext: { ...w.services.toolContext, subAgent } });
      const final = await run.done;
      assert.equal(final.status, 'completed', final.error ?? final.boundary?.detail);
      assert.deepEqual(final.toolCalls.map((c) => [c.name, c.decision, c.executed, c.result]), [['agent', 'allow', true, 'src/greet.ts line 1.']]);
      const all = w.server.chatRequests.reduce((sum, r) => sum + Math.ceil(r.prompt.length / 4), 0);
      assert.equal(final.usage.promptTokens, all, 'the sub-agent requests count toward the run');
    });

    it('is a boundary as soon as one of its calls would not pass the gate, and that call never runs', async () => {
      const { w, subAgent } = await setUp(
        script([delegate, { text: 'never' }], (round) =>
          [
            { toolCalls: [{ name: 'read_file', arguments: { file_path: 'src/greet.ts' } }] },
            { toolCalls: [{ name: 'read_file', arguments: { file_path: '../outside/secret.txt' } }] },
            { text: 'never' },
          ][round],
        ),
      );
      const run = w.speculate('where is greet', { toolContext: { ...w.services.toolContext, subAgent } });
      const final = await run.done;
      assert.equal(final.status, 'boundary');
      assert.equal(final.boundary?.type, 'denied_tool');
      assert.equal(final.boundary?.tool, 'agent');
      assert.match(final.boundary?.detail ?? '', /its call read_file \.\.\/outside\/secret\.txt cannot run ahead of you \(Path "\.\.\/outside\/secret\.txt" resolves outside the workspace/);
      assert.deepEqual(final.toolCalls.map((c) => [c.name, c.executed]), [['agent', false]], 'the agent call is left to the live chat');
      assert.equal(w.server.chatRequests.filter(isSubAgent).length, 2, 'it stopped at the call');
      assert.ok(!allStrings(w.server.chatRequests.map((r) => r.body)).some((s) => s.includes(OUTSIDE_SECRET.trim())), 'the secret never reached the model');
    });
  });
});
