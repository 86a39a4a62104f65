// The engine end to end over replays of real servers: main chat, suggestion and speculation through
// ChatSession with the real client, workspace and overlay. What a user would notice: the chat works,
// suggestions appear, speculation runs (or says quietly why not), cut answers are called cut, and
// every run leaves the key unshown, the workspace unwritten and no overlay behind.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { OVERLAY_PARENT } from '../../../src/core/followup/overlay/recovery';
import { isToolResultPairingValid } from '../../../src/core/messages/pairing';
import type { SessionEvent } from '../../../src/core/session';
import type { ReplayRequest, ReplayRule } from '../../fixtures/replay/replayServer';
import { asksThinkingOff, isSuggestionRequest, replayScript, stepOf, taskOf } from '../../fixtures/replay/script';
import { requiresReasoningBack } from '../../fixtures/replay/servers/deepseek';
import { mistralValidator } from '../../fixtures/replay/servers/mistral';
import { strictFields } from '../../fixtures/replay/servers/openai';
import { jsonReply, messagesOf } from '../../fixtures/replay/wire';
import { listBelow, waitUntil } from './engineKit';
import { closeWorld, BASE, chatErrors, KEY, makeWorld, runEnd, SUGGESTION, warmUp, WARMUP, type World } from './replayWorld';

describe('Engine end-to-end over replayed servers', function () {
  this.timeout(20_000);
  let w: World | undefined;

  afterEach(async () => {
    const world = w;
    w = undefined;
    await closeWorld(world);
  });

  it('behind a strict gateway that refuses chat_template_kwargs, suggestions and speculation still work (adapted once, then learned)', async () => {
    // OpenAI behind a gateway: unknown fields are refused with "Unrecognized request argument supplied".
    const strict = strictFields(['reasoning_effort']);
    w = await makeWorld({
      baseUrl: 'https://llm-gateway.corp.example/v1',
      rules: [
        strict,
        replayScript(BASE, { ...WARMUP, [SUGGESTION]: [{ toolCalls: [{ name: 'read_file', arguments: { file_path: 'src/greet.ts' } }] }, { text: 'farewell would go after greet.' }] }, { 'show me src/greet.ts': SUGGESTION }),
      ],
    });
    await warmUp(w);
    assert.equal(w.session.visibleSuggestion, SUGGESTION, 'the suggestion appears');
    const done = await runEnd(w, SUGGESTION);
    assert.equal(done.status, 'completed', done.error ?? '');
    assert.deepEqual(done.toolCalls.map((c) => c.name), ['read_file']);
    const refused = w.server.chatRequests.filter((r) => 'chat_template_kwargs' in (r.body ?? {}));
    assert.equal(refused.length, 1, 'chat_template_kwargs was sent once, refused, and never again');
    assert.ok(w.events.every((e) => e.type !== 'fork_unavailable'), 'nothing to report: it works');
  });

  it('Mistral behind its own domain refuses stream_options on every request: the main chat adapts once and works', async () => {
    w = await makeWorld({ baseUrl: 'https://mistral.example.internal/v1', rules: [mistralValidator, replayScript(BASE, WARMUP, { 'show me src/greet.ts': SUGGESTION }, { usage: { prompt_tokens: 900, completion_tokens: 5, total_tokens: 905 }, usageIn: 'finish-chunk' })] });
    await warmUp(w);
    assert.equal(w.session.visibleSuggestion, SUGGESTION);
    const withUsageOption = w.server.chatRequests.filter((r) => 'stream_options' in (r.body ?? {}));
    assert.equal(withUsageOption.length, 1, 'refused once, never sent again');
    assert.equal(chatErrors(w).length, 0);
    await w.session.dismissSuggestion();
  });

  it('a speculation cut at the output limit again after its one retry fails quietly: nothing injected, no overlay, Tab runs it live', async () => {
    w = await makeWorld({
      baseUrl: 'https://api.openai.com/v1',
      rules: [
        replayScript(BASE, {
          ...WARMUP,
          [SUGGESTION]: [{ toolCalls: [{ name: 'write_file', arguments: '{"file_path":"src/farewell.ts","content":"export const farewell = (name: string) => `Bye, ' }], finishReason: 'length' }, { toolCalls: [{ name: 'write_file', arguments: '{"file_path":"src/farewell.ts","content":"export const farewell = (name: string) => `Bye, ' }], finishReason: 'length' }],
        }, { 'show me src/greet.ts': SUGGESTION }),
      ],
      config: { approvalMode: 'yolo' },
    });
    await warmUp(w);
    const done = await runEnd(w, SUGGESTION);
    assert.equal(done.status, 'failed');
    assert.equal(done.errorReason, 'the answer was cut off at the output limit');
    assert.match(done.error ?? '', /finish_reason "length"/);
    assert.deepEqual(done.filesWritten, [], 'the cut call never ran');
    assert.deepEqual(await listBelow(path.join(w.tmpRoot, OVERLAY_PARENT)), [], 'its overlay is gone at once');
    assert.ok(w.events.some((e) => e.type === 'speculation' && e.snapshot?.status === 'failed'));
    // Tab still sends it: the request runs live in the main chat (which is told the same cut).
    const forksBefore = w.server.chatRequests.length;
    await w.session.acceptSuggestion('tab');
    const live = w.server.chatRequests.slice(forksBefore);
    assert.ok(live.length > 0 && live.every((r) => taskOf(r) === SUGGESTION && !asksThinkingOff(r)), 'a live main-chat request');
    assert.equal(chatErrors(w).at(-1)?.kind, 'output_limit');
  });

  it('a speculation stopped by the content filter fails and is never offered as complete', async () => {
    w = await makeWorld({
      baseUrl: 'https://contoso.openai.azure.com/openai/deployments/gpt4o?api-version=2024-10-21',
      rules: [(request: ReplayRequest) => (request.headers['api-key'] === KEY ? undefined : jsonReply(401, { error: { code: '401', message: 'no key' } })), replayScript(BASE, { ...WARMUP, [SUGGESTION]: [{ text: 'Here is how to', finishReason: 'content_filter' }] }, { 'show me src/greet.ts': SUGGESTION })],
    });
    await warmUp(w);
    const done = await runEnd(w, SUGGESTION);
    assert.equal(done.status, 'failed');
    assert.equal(done.errorReason, "the provider's content filter stopped the answer");
    assert.equal(done.messages.length, 1, 'only the suggestion itself: no half answer to inject');
  });

  it('a fork that fails for a lasting reason is said once, quietly; the chat keeps working', async () => {
    const forksRefused: ReplayRule = (request) =>
      request.body?.model === 'qwen-fast' ? jsonReply(404, { error: { message: 'The model `qwen-fast` does not exist or you do not have access to it.', type: 'invalid_request_error', param: null, code: 'model_not_found' } }) : undefined;
    w = await makeWorld({
      baseUrl: 'https://dashscope-intl.aliyuncs.com/compatible-mode/v1',
      rules: [forksRefused, replayScript(BASE, { ...WARMUP, again: [{ text: 'Sure.' }] }, { 'show me src/greet.ts': SUGGESTION, again: SUGGESTION })],
      config: { fastModel: 'qwen-fast' },
    });
    assert.equal((await w.session.submit('hello'))?.status, 'done');
    assert.equal((await w.session.submit('show me src/greet.ts'))?.status, 'done');
    const world = w;
    await waitUntil(() => world.events.some((e) => e.type === 'fork_unavailable'), 'the fork failure to be said');
    const said = w.events.filter((e): e is Extract<SessionEvent, { type: 'fork_unavailable' }> => e.type === 'fork_unavailable');
    assert.equal(said.length, 1);
    assert.match(said[0]!.reason, /The model `qwen-fast` does not exist/);
    assert.ok(w.logs.some((line) => line.includes('qwen-fast')), 'and logged');
    assert.equal(w.session.visibleSuggestion, null);
    // The same failure on the next turn is not said again.
    assert.equal((await w.session.submit('again'))?.status, 'done');
    await waitUntil(() => world.server.chatRequests.filter((r) => r.body?.model === 'qwen-fast').length >= 2, 'the next fork');
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(w.events.filter((e) => e.type === 'fork_unavailable').length, 1, 'said once');
    assert.equal(chatErrors(w).length, 0, 'the main chat was never interrupted');
  });

  it('main chat: an answer cut at the output limit is kept but called cut, with no Retry and no suggestion', async () => {
    w = await makeWorld({ baseUrl: 'https://api.openai.com/v1', rules: [replayScript(BASE, { ...WARMUP, 'list the steps': [{ text: 'Step one: open the', finishReason: 'length' }] }, { 'list the steps': 'continue' })] });
    assert.equal((await w.session.submit('hello'))?.status, 'done');
    const outcome = await w.session.submit('list the steps');
    assert.equal(outcome?.status, 'error');
    const [error] = chatErrors(w);
    assert.equal(error?.kind, 'output_limit');
    assert.match(error?.message ?? '', /cut off: the model reached its output limit \(finish_reason "length"\)\. Send "continue"/);
    assert.equal(error?.retryable, false, 'nothing to resume: the cut answer is in the history');
    assert.equal((w.session.messages.at(-1) as { content?: string }).content, 'Step one: open the');
    // The answered warm-up may be predicted from; the cut answer may not.
    assert.ok(!w.server.chatRequests.some((r) => isSuggestionRequest(r) && taskOf(r) === 'list the steps'), 'no suggestion after a cut answer');
  });

  it('main chat: a tool call cut at the output limit again after its one retry does not run; Retry lets the model try again', async () => {
    w = await makeWorld({
      baseUrl: 'https://api.openai.com/v1',
      rules: [
        replayScript(BASE, {
          'write farewell': [
            { toolCalls: [{ name: 'write_file', arguments: '{"file_path":"src/farewell.ts","content":"export const fare' }], finishReason: 'length' },
            { toolCalls: [{ name: 'write_file', arguments: '{"file_path":"src/farewell.ts","content":"export const fare' }], finishReason: 'length' },
            { text: 'I will write it in smaller steps.' },
          ],
        }),
      ],
      config: { approvalMode: 'yolo' },
    });
    const outcome = await w.session.submit('write farewell');
    assert.equal(outcome?.status, 'error');
    const [error] = chatErrors(w);
    assert.equal(error?.kind, 'output_limit');
    assert.equal(error?.retryable, true);
    assert.match(error?.message ?? '', /tool calls did not run/);
    assert.ok(isToolResultPairingValid(w.session.messages));
    const retried = await w.session.retry();
    assert.equal(retried?.status, 'done');
    // The cut arguments went back as {} (the raw text stays in our history for the tool result).
    const second = w.server.chatRequests.at(-1)!;
    const call = (messagesOf(second).find((m) => Array.isArray(m.tool_calls))?.tool_calls as { function: { arguments: string } }[])[0]!;
    assert.equal(call.function.arguments, '{}');
  });

  it('main chat on vLLM: cut-off tool-call arguments never poison the next request', async () => {
    // vLLM refuses any history whose tool-call arguments are not a JSON object.
    const refusesBad: ReplayRule = (request) => {
      for (const m of messagesOf(request)) {
        for (const c of (m.tool_calls as { function: { arguments: string } }[] | undefined) ?? []) {
          try {
            JSON.parse(c.function.arguments);
          } catch {
            return jsonReply(400, { object: 'error', message: 'Expecting value: line 1 column 1 (char 0)', type: 'BadRequestError', param: null, code: 400 });
          }
        }
      }
      return undefined;
    };
    w = await makeWorld({
      baseUrl: 'http://gpu-box:8000/v1',
      rules: [refusesBad, replayScript(BASE, { 'read greet': [{ toolCalls: [{ name: 'read_file', arguments: '' }, { name: 'read_file', arguments: '{"file_path": "src/gr' }] }, { text: 'Read it.' }] })],
    });
    const outcome = await w.session.submit('read greet');
    assert.equal(outcome?.status, 'done', JSON.stringify(chatErrors(w)));
    const results = w.session.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    assert.match(results[1] ?? '', /not valid JSON.*\{"file_path": "src\/gr/s, 'the model is told what it sent');
  });

  it('DeepSeek thinking mode: reasoning_content is kept on the tool-call message and sent back, so round two is accepted', async () => {
    w = await makeWorld({
      baseUrl: 'https://api.deepseek.com/v1',
      rules: [requiresReasoningBack, replayScript(BASE, { 'read greet': [{ reasoning: 'I should read it.', toolCalls: [{ name: 'read_file', arguments: { file_path: 'src/greet.ts' } }] }, { text: 'It greets.' }] })],
    });
    const outcome = await w.session.submit('read greet');
    assert.equal(outcome?.status, 'done', JSON.stringify(chatErrors(w)));
    const assistant = w.session.messages.find((m) => m.role === 'assistant' && m.tool_calls);
    assert.equal((assistant as { reasoning_content?: string }).reasoning_content, 'I should read it.');
    const second = w.server.chatRequests.at(-1)!;
    assert.equal(messagesOf(second).find((m) => Array.isArray(m.tool_calls))?.reasoning_content, 'I should read it.');
  });

  it('a tool call written as text (no tool parser on the server) gets a hint in the chat; speculating on it fails with the reason', async () => {
    const asText = '<tool_call>\n{"name": "read_file", "arguments": {"file_path": "src/greet.ts"}}\n</tool_call>';
    w = await makeWorld({ baseUrl: 'http://gpu-box:8000/v1', rules: [replayScript(BASE, { ...WARMUP, [SUGGESTION]: [{ text: asText }] }, { 'show me src/greet.ts': SUGGESTION })] });
    await warmUp(w);
    const done = await runEnd(w, SUGGESTION);
    assert.equal(done.status, 'failed');
    assert.equal(done.errorReason, 'the server does not parse tool calls (its tool-call parser is off)');
    await w.session.dismissSuggestion();
    const w2 = w;
    w2.events.length = 0;
    await w2.session.newChat();
    w2.server.serve([replayScript(BASE, { 'read it': [{ text: asText }] })]);
    assert.equal((await w2.session.submit('read it'))?.status, 'done');
    const notices = w2.events.flatMap((e) => (e.type === 'chat' && e.event.type === 'notice' ? [e.event.text] : []));
    assert.equal(notices.length, 1);
    assert.match(notices[0]!, /--enable-auto-tool-choice.*--jinja/s);
  });

  it('keep-alive comments keep a slow reasoning model alive past the idle timeout', async () => {
    const slow: ReplayRule = (request) => {
      if (taskOf(request) !== 'think hard' || stepOf(request) !== 0) return undefined;
      const rule = replayScript(BASE, { 'think hard': [{ reasoning: 'Long thought.', text: 'Answer.' }] }, {}, { reasoningField: 'reasoning' });
      const reply = rule(request)!;
      // 1.25 s of keep-alives 25 ms apart against a 1 s idle limit: only the comments keep it alive.
      return { ...reply, body: [...Array.from({ length: 50 }, () => ': OPENROUTER PROCESSING\n\n'), ...(reply.body as string[])], paceMs: 25 };
    };
    w = await makeWorld({ baseUrl: 'https://openrouter.ai/api/v1', rules: [slow], idleTimeoutMs: 1_000 });
    const outcome = await w.session.submit('think hard');
    assert.equal(outcome?.status, 'done', JSON.stringify(chatErrors(w)));
    assert.ok(!asksThinkingOff(w.server.chatRequests[0]!), 'the main chat keeps the provider\'s thinking');
  });
});
