// The chat the user steers: attached context that forks repeat byte for byte, Edit & resend,
// Regenerate, a stored chat opened again, and the tokens each part of the work spent.
import * as assert from 'node:assert/strict';
import { readFileAttachment, type Attachment } from '../../../src/core/context/attachments';
import type { SessionEvent } from '../../../src/core/session';
import type { RecordedRequest } from '../../fixtures/scriptedServer';
import { isFork, isSuggestionRequest, taskOf, waitUntil } from './engineKit';
import { disposeSessionWorld, FILES, GREET, makeSession, runEnd, warmUpAndShow, type SessionWorld } from './sessionKit';

const ASK = 'why does greet misspell Hello?';
const SUGGESTION = 'fix the typo in greet';

function tokensOf(request: RecordedRequest): { input: number; cached: number } {
  return { input: Math.ceil(request.prompt.length / 4), cached: request.cachedTokens };
}

function sum(requests: RecordedRequest[]): { input: number; cached: number } {
  return requests.map(tokensOf).reduce((a, b) => ({ input: a.input + b.input, cached: a.cached + b.cached }), { input: 0, cached: 0 });
}

function userMessages(s: SessionWorld): string[] {
  return s.session.messages.filter((m) => m.role === 'user').map((m) => m.content as string);
}

describe('Engine: the chat people expect', function () {
  this.timeout(20_000);
  let s: SessionWorld | undefined;

  afterEach(async () => {
    const ended = s;
    s = undefined;
    if (ended) await disposeSessionWorld(ended);
  });

  it('attached context is part of the user message, and every fork repeats it byte for byte', async () => {
    s = await makeSession(
      { [ASK]: [{ text: 'Because of the typo "Helo".' }], [SUGGESTION]: [{ text: 'Fixed.' }] },
      { [ASK]: SUGGESTION },
    );
    assert.equal((await s.session.submit('hello'))?.status, 'done');
    const file = await readFileAttachment(s.world.services.fs, 'src/greet.ts');
    assert.ok(file.ok);
    const selection: Attachment = { kind: 'selection', path: 'src/greet.ts', startLine: 2, endLine: 2, text: '  return `Helo, ${name}`;\n' };
    const problems: Attachment = { kind: 'problems', path: 'src/greet.ts', problems: [{ line: 2, column: 11, severity: 'warning', message: 'Unknown word "Helo"', source: 'cSpell' }] };
    assert.equal((await s.session.submit(ASK, [file.attachment, selection, problems]))?.status, 'done');

    const sent = s.session.messages.find((m) => m.role === 'user' && m.content.startsWith(ASK));
    assert.equal(
      sent?.content,
      `${ASK}\n\n<attached_context>\n<file path="src/greet.ts">\n${GREET}</file>\n` +
        '<selection path="src/greet.ts" lines="2-2">\n  return `Helo, ${name}`;\n</selection>\n' +
        '<problems path="src/greet.ts">\nsrc/greet.ts:2:11 warning: Unknown word "Helo" [cSpell]\n</problems>\n</attached_context>',
    );
    // The file changes after sending: what was sent stays what it was, in the history and in forks.
    await s.world.write('src/greet.ts', 'export const changed = true;\n');

    const current = s;
    await waitUntil(() => current.clock.pendingTimers > 0, 'the suggestion');
    s.clock.advance(300);
    assert.equal(s.session.visibleSuggestion, SUGGESTION);
    assert.equal((await runEnd(s, SUGGESTION)).status, 'completed');
    const requests = s.world.server.chatRequests;
    const main = requests.filter((r) => !isFork(r) && taskOf(r) === ASK).at(-1)!;
    const forks = requests.filter((r) => isFork(r) && (taskOf(r) === ASK || taskOf(r) === SUGGESTION));
    assert.ok(forks.length >= 2, 'a suggestion and a speculation forked from the chat');
    assert.ok(main.prompt.includes('<attached_context>'), 'the main request carries the context');
    for (const fork of forks) {
      assert.ok(fork.prompt.startsWith(main.prompt), `${isSuggestionRequest(fork) ? 'suggestion' : 'speculation'} repeats the main prompt, context and all, byte for byte`);
      assert.ok(fork.cachedTokens >= Math.floor(main.prompt.length / 4), 'and the provider serves that prefix from its cache');
      assert.ok(!fork.prompt.includes('export const changed'), 'the later file content never reaches a fork');
    }
  });

  it('Edit & resend replaces the chat from that message on and keeps its attachments', async () => {
    s = await makeSession({ 'say hi, briefly': [{ text: 'Hi.' }] }, {}, { config: { suggestionsEnabled: false } });
    assert.equal((await s.session.submit('hello'))?.status, 'done');
    const file = await readFileAttachment(s.world.services.fs, 'README.md');
    assert.ok(file.ok);
    assert.equal((await s.session.submit('show me src/greet.ts', [file.attachment]))?.status, 'done');
    assert.equal(s.session.messages.length, 6, 'hello + answer, then the read_file round and the answer');
    const events: SessionEvent[] = [];
    s.session.subscribe((e) => events.push(e));

    const outcome = await s.session.editAndResend(2, 'say hi, briefly');
    assert.equal(outcome?.status, 'done');
    assert.deepEqual(userMessages(s), ['hello', 'say hi, briefly\n\n<attached_context>\n<file path="README.md">\n# greet\n</file>\n</attached_context>']);
    assert.equal(s.session.messages.at(-1)?.content, 'Hi.');
    assert.deepEqual(
      events.filter((e) => e.type === 'history_truncated' || e.type === 'user_message').map((e) => (e.type === 'user_message' ? [e.type, e.text, e.historyIndex] : [e.type, e.length])),
      [['history_truncated', 2], ['user_message', 'say hi, briefly', 2]],
    );
    assert.equal(await s.world.read('src/greet.ts'), FILES['src/greet.ts'], 'files are not rewound');
    const refused = await s.session.editAndResend(1, 'not a user message');
    assert.equal(refused?.status, 'refused');
  });

  it('Regenerate drops the last answer and asks again with the same history', async () => {
    let attempt = 0;
    s = await makeSession({}, {}, { config: { suggestionsEnabled: false } });
    s.world.server.setScript((request) => {
      if (taskOf(request) === 'hello') return { text: 'Hi.' };
      return { text: `Answer ${++attempt}` };
    });
    assert.equal((await s.session.submit('hello'))?.status, 'done');
    assert.equal((await s.session.submit('tell me a joke'))?.status, 'done');
    assert.equal(s.session.messages.at(-1)?.content, 'Answer 1');
    const before = s.world.server.chatRequests.at(-1)!;
    assert.equal((await s.session.regenerate())?.status, 'done');
    assert.equal(s.session.messages.at(-1)?.content, 'Answer 2');
    assert.equal(s.session.messages.length, 4);
    assert.equal(s.world.server.chatRequests.at(-1)!.prompt, before.prompt, 'the same request is sent again');
  });

  it('opening a stored chat stops the running speculation, deletes its overlay, and continues the chat', async () => {
    s = await makeSession({ [SUGGESTION]: [{ text: 'slow', latencyMs: 30_000 }], 'and now?': [{ text: 'Still here.' }] }, { 'show me src/greet.ts': SUGGESTION });
    await warmUpAndShow(s, SUGGESTION);
    const current = s;
    await waitUntil(async () => (await current.world.overlayLeftovers()).length > 0, 'the speculation overlay');
    const stored = s.session.messages;
    const usage = s.session.usageSnapshot;
    assert.deepEqual((await s.session.openChat({ messages: stored, usage })), { ok: true });
    assert.equal(s.session.currentSpeculation, null);
    assert.deepEqual(await s.world.overlayLeftovers(), [], 'the overlay is deleted');
    assert.deepEqual(s.session.messages, stored);
    assert.deepEqual(s.session.usageSnapshot, usage, 'the chat\'s usage comes back with it');
    assert.ok(s.session.cacheSafeParams, 'forks can start from the opened chat at once');
    assert.equal((await s.session.submit('and now?'))?.status, 'done');
    const last = s.world.server.chatRequests.at(-1)!;
    assert.ok(last.prompt.includes('show me src/greet.ts'), 'the next turn sends the stored history');

    const broken = await s.session.openChat({ messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'x', type: 'function', function: { name: 'edit', arguments: '{}' } }] }] });
    assert.equal(broken.ok, false);
  });

  it('counts tokens per source from the server\'s usage fields, cached tokens included', async () => {
    s = await makeSession({ [SUGGESTION]: [{ text: 'Fixed.' }] }, { 'show me src/greet.ts': SUGGESTION });
    const usageEvents: Extract<SessionEvent, { type: 'usage' }>[] = [];
    s.session.subscribe((e) => {
      if (e.type === 'usage') usageEvents.push(e);
    });
    await warmUpAndShow(s, SUGGESTION);
    assert.equal((await runEnd(s, SUGGESTION)).status, 'completed');
    const current = s;
    await waitUntil(() => usageEvents.some((e) => e.source === 'speculation'), 'the speculation\'s usage');
    const requests = s.world.server.chatRequests;
    const main = requests.filter((r) => !isFork(r));
    const suggestions = requests.filter(isSuggestionRequest);
    const speculation = requests.filter((r) => isFork(r) && !isSuggestionRequest(r));
    const entries = current.session.usageSnapshot.entries;
    const of = (source: string) => entries.find((e) => e.source === source)!;
    assert.deepEqual({ input: of('chat').input, cached: of('chat').cached }, sum(main));
    assert.deepEqual({ input: of('suggestion').input, cached: of('suggestion').cached }, sum(suggestions));
    assert.deepEqual({ input: of('speculation').input, cached: of('speculation').cached }, sum(speculation));
    assert.ok(of('speculation').cached > 0 && of('suggestion').cached > 0, 'forks are served from the cache');
    assert.ok(entries.every((e) => e.output > 0));
    assert.equal(usageEvents.filter((e) => e.source === 'chat').length, 2, 'one usage line per answered turn');
    assert.deepEqual(usageEvents.at(-1)!.chat, current.session.usageSnapshot);

    await s.session.newChat();
    assert.deepEqual(s.session.usageSnapshot, { entries: [] }, 'a new chat starts at zero');
  });

  it('switching the main or the fast model aborts a running speculation and deletes its overlay', async () => {
    s = await makeSession({ [SUGGESTION]: [{ text: 'slow', latencyMs: 30_000 }] }, { 'show me src/greet.ts': SUGGESTION });
    await warmUpAndShow(s, SUGGESTION);
    const current = s;
    await waitUntil(async () => (await current.world.overlayLeftovers()).length > 0, 'the speculation overlay');
    // The run's model request is out (the overlay comes first; aborting before the request would
    // leave nothing to close).
    const isRun = (r: RecordedRequest) => taskOf(r) === SUGGESTION && !isSuggestionRequest(r);
    await waitUntil(() => current.world.server.chatRequests.some(isRun), 'the speculation\'s model request');
    const running = s.world.server.chatRequests.find(isRun)!;
    const config = { model: 'scripted-model', fastModel: '', approvalMode: 'auto-edit' as const, suggestionsEnabled: true, speculationEnabled: true, maxTurns: 20, maxMessages: 100 };
    s.session.updateConfig({ ...config, fastModel: 'a-faster-model' });
    await waitUntil(() => current.session.currentSpeculation === null, 'the speculation to be aborted');
    await waitUntil(async () => (await current.world.overlayLeftovers()).length === 0, 'the overlay to be deleted');
    assert.ok(await s.world.server.waitForClientClose(running, 5_000), 'its model request was closed');
  });
});
