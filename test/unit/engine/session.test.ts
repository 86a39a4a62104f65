// ChatSession end to end: main turns, the suggestion, its speculation, accept (completed, boundary,
// promoted, with conflicts), abort by typing or new chat, and the prefix cache shared by all forks.
import * as assert from 'node:assert/strict';
import type { AssistantMessage, ChatMessage, ToolMessage } from '../../../src/core/messages';
import { ACCEPT_DEBOUNCE_MS } from '../../../src/core/followup/followupState';
import { isToolResultPairingValid } from '../../../src/core/messages/pairing';
import type { RecordedRequest, ScriptedReply } from '../../fixtures/scriptedServer';
import { isFork, isSuggestionRequest, stepOf, taskOf, taskScript, waitUntil } from './engineKit';
import { accepted, disposeSessionWorld, FILES, GREET, makeSession, runEnd, WARMUP, warmUpAndShow, type SessionWorld } from './sessionKit';

/** The canonical prompt without its last message: what a later request can share with it. */
function withoutLastMessage(prompt: string): string {
  return prompt.slice(0, prompt.lastIndexOf('\n', prompt.length - 2) + 1);
}

/** `later` starts with the whole of `prefix`, and the provider reports all of it as cached. */
function assertCachedPrefix(later: RecordedRequest, prefix: string, what: string): void {
  assert.ok(later.prompt.startsWith(prefix), `${what}: the request repeats the shared prefix byte for byte`);
  assert.ok(later.cachedTokens >= Math.floor(prefix.length / 4), `${what}: ${later.cachedTokens} cached tokens cover the ${Math.floor(prefix.length / 4)} of the shared prefix`);
}

const SUGGESTION = 'add a farewell function to greet.ts';
const NEXT = 'write a test for farewell';
const FAREWELL = 'export function greet(name: string) {\n  return `Helo, ${name}`;\n}\nexport const farewell = (name: string) => `Bye, ${name}`;\n';

describe('Engine end-to-end: ChatSession', function () {
  this.timeout(20_000);
  let s: SessionWorld | undefined;

  afterEach(async () => {
    const ended = s;
    s = undefined;
    if (ended) await disposeSessionWorld(ended);
  });

  it('suggests, speculates, accepts with Tab, and pipelines the next step — all forks on the main chat prefix', async () => {
    s = await makeSession(
      {
        [SUGGESTION]: [
          { toolCalls: [{ name: 'edit', arguments: { file_path: 'src/greet.ts', old_string: '}\n', new_string: '}\nexport const farewell = (name: string) => `Bye, ${name}`;\n' } }] },
          { text: 'Added farewell to src/greet.ts.' },
        ],
        [NEXT]: [
          { toolCalls: [{ name: 'write_file', arguments: { file_path: 'test/greet.test.ts', content: "import { farewell } from '../src/greet';\n" } }] },
          { text: 'Wrote test/greet.test.ts.' },
        ],
      },
      { 'show me src/greet.ts': SUGGESTION, [SUGGESTION]: NEXT },
    );
    await warmUpAndShow(s, SUGGESTION);
    const done = await runEnd(s, SUGGESTION);
    assert.equal(done.status, 'completed', done.error ?? '');
    assert.equal(done.pipelinedSuggestion, NEXT);
    assert.equal(await s.world.read('src/greet.ts'), GREET, 'nothing applied before Tab');
    assert.ok(done.usage.cachedTokens > 0, 'cached tokens are recorded');

    // The prefix cache: every fork repeats the main chat's system prompt, tools and history.
    const requests = s.world.server.chatRequests;
    const main = requests.filter((r) => !isFork(r));
    assert.deepEqual(main.map((r) => taskOf(r)), ['hello', 'show me src/greet.ts', 'show me src/greet.ts']);
    const suggestion = requests.find((r) => isSuggestionRequest(r) && taskOf(r) === 'show me src/greet.ts')!;
    const speculated = requests.filter((r) => isFork(r) && !isSuggestionRequest(r) && taskOf(r) === SUGGESTION);
    const pipelined = requests.find((r) => isSuggestionRequest(r) && taskOf(r) === SUGGESTION)!;
    assert.deepEqual(
      requests.filter(isSuggestionRequest).map((r) => taskOf(r)),
      ['hello', 'show me src/greet.ts', SUGGESTION],
      'a prediction after each answer (the first one included), then one pipelined',
    );
    assert.equal(speculated.length, 2);
    assertCachedPrefix(suggestion, main.at(-1)!.prompt, 'suggestion after the main turn');
    assertCachedPrefix(speculated[0], withoutLastMessage(suggestion.prompt), 'speculation after the suggestion');
    assertCachedPrefix(speculated[1], speculated[0].prompt, 'second speculated turn');
    assertCachedPrefix(pipelined, speculated[1].prompt, 'pipelined suggestion');

    const historyBefore = s.session.messages;
    await s.session.acceptSuggestion('tab');

    const [event] = accepted(s);
    assert.ok(event, 'speculation_accepted was sent');
    assert.equal(event.suggestion, SUGGESTION);
    assert.equal(event.alreadyRendered, false);
    assert.equal(event.continuesLive, false);
    assert.deepEqual(event.applied, ['src/greet.ts']);
    assert.deepEqual(event.messages, done.messages);
    assert.deepEqual(event.toolCalls.map((c) => c.name), ['edit']);
    assert.deepEqual(s.session.messages, [...historyBefore, ...done.messages]);
    assert.ok(isToolResultPairingValid(s.session.messages));
    assert.equal(await s.world.read('src/greet.ts'), FAREWELL);

    // Tab, Tab: the pipelined suggestion is on screen at once (no clock move) and already running.
    assert.equal(s.session.visibleSuggestion, NEXT);
    assert.equal(s.session.currentSpeculation?.suggestion, NEXT);
    const next = await runEnd(s, NEXT);
    assert.equal(next.status, 'completed', next.error ?? '');
    const nextFirst = s.world.server.chatRequests.find((r) => isFork(r) && !isSuggestionRequest(r) && taskOf(r) === NEXT)!;
    assertCachedPrefix(nextFirst, withoutLastMessage(pipelined.prompt), 'speculation of the pipelined suggestion');

    s.clock.advance(ACCEPT_DEBOUNCE_MS);
    await s.session.acceptSuggestion('tab');
    assert.equal(accepted(s).length, 2);
    assert.equal(await s.world.read('test/greet.test.ts'), "import { farewell } from '../src/greet';\n");
    assert.deepEqual(await s.world.overlayLeftovers(), [], 'accepted overlays are deleted');
  });

  it('typing into the input dismisses the suggestion and aborts its speculation', async () => {
    s = await makeSession({ [SUGGESTION]: [{ text: 'slow', latencyMs: 30_000 }] }, { 'show me src/greet.ts': SUGGESTION });
    await warmUpAndShow(s, SUGGESTION);
    const current = s;
    await waitUntil(() => current.world.server.chatRequests.some((r) => taskOf(r) === SUGGESTION), 'the speculation request');
    const slow = s.world.server.chatRequests.find((r) => taskOf(r) === SUGGESTION)!;
    assert.notDeepEqual(await s.world.overlayLeftovers(), []);

    s.session.setUserTyping(true);

    assert.equal(s.session.visibleSuggestion, null);
    assert.ok(await s.world.server.waitForClientClose(slow, 5_000), 'the request was closed');
    await waitUntil(async () => (await current.world.overlayLeftovers()).length === 0, 'the overlay to be deleted');
    assert.equal(s.session.currentSpeculation, null);
    assert.ok(s.events.some((e) => e.type === 'suggestion' && e.text === null));
    // Sent once abort() has returned, which may be just after the overlay folder disappears.
    await waitUntil(() => current.events.some((e) => e.type === 'speculation' && e.snapshot === null), 'the idle speculation status');
    assert.equal(await s.world.read('src/greet.ts'), GREET);
  });

  it('closing the chat right after typing waits for the aborted speculation: no overlay folder is left behind', async () => {
    // An overlay whose cleanup takes a while (a slow temp disk): the abort typing starts is still running at dispose.
    s = await makeSession({ [SUGGESTION]: [{ text: 'slow', latencyMs: 30_000 }] }, { 'show me src/greet.ts': SUGGESTION }, {
      session: (world) => ({
        createOverlay: async () => {
          const overlay = await world.services.createOverlay();
          const cleanup = overlay.cleanup.bind(overlay);
          overlay.cleanup = async () => {
            await new Promise((resolve) => setTimeout(resolve, 300));
            await cleanup();
          };
          return overlay;
        },
      }),
    });
    await warmUpAndShow(s, SUGGESTION);
    const current = s;
    await waitUntil(() => current.world.server.chatRequests.some((r) => taskOf(r) === SUGGESTION), 'the speculation request');
    assert.notDeepEqual(await s.world.overlayLeftovers(), []);

    s.session.setUserTyping(true);
    await s.session.dispose();

    assert.deepEqual(await s.world.overlayLeftovers(), []);
    assert.equal(await s.world.read('src/greet.ts'), GREET);
  });

  it('a new chat aborts the speculation and forgets the conversation', async () => {
    s = await makeSession({ [SUGGESTION]: [{ text: 'slow', latencyMs: 30_000 }] }, { 'show me src/greet.ts': SUGGESTION });
    await warmUpAndShow(s, SUGGESTION);
    const current = s;
    await waitUntil(() => current.world.server.chatRequests.some((r) => taskOf(r) === SUGGESTION), 'the speculation request');
    const slow = s.world.server.chatRequests.find((r) => taskOf(r) === SUGGESTION)!;

    await s.session.newChat();

    assert.ok(await s.world.server.waitForClientClose(slow, 5_000), 'the request was closed');
    assert.deepEqual(await s.world.overlayLeftovers(), []);
    assert.equal(s.session.currentSpeculation, null);
    assert.equal(s.session.visibleSuggestion, null);
    assert.deepEqual(s.session.messages, []);
    assert.equal(s.session.cacheSafeParams, undefined);
  });

  it('Tab on a boundary in default mode injects the reads, then the agent continues live and asks before the edit', async () => {
    const FIX = 'fix the typo in greet.ts';
    const fixEdit = { name: 'edit', arguments: { file_path: 'src/greet.ts', old_string: 'Helo', new_string: 'Hello' } };
    s = await makeSession(
      {
        [FIX]: [
          { toolCalls: [{ name: 'read_file', arguments: { file_path: 'src/greet.ts' } }] },
          { toolCalls: [{ name: 'read_file', arguments: { file_path: 'README.md' } }, fixEdit] },
          { toolCalls: [fixEdit] },
          { text: 'Fixed the typo.' },
        ],
      },
      { 'show me src/greet.ts': FIX },
      { config: { approvalMode: 'default' }, answer: 'allow' },
    );
    await warmUpAndShow(s, FIX);
    const done = await runEnd(s, FIX);
    assert.equal(done.status, 'boundary');
    assert.equal(done.boundary?.type, 'edit');
    const historyBefore = s.session.messages;

    await s.session.acceptSuggestion('tab');

    const [event] = accepted(s);
    assert.equal(event.continuesLive, true);
    assert.deepEqual(event.applied, []);
    assert.deepEqual(s.approvals.map((a) => [a.tool, a.summary]), [['edit', 'src/greet.ts']], 'the boundary tool asked for approval');
    assert.equal(await s.world.read('src/greet.ts'), GREET.replace('Helo', 'Hello'));
    const added = s.session.messages.slice(historyBefore.length);
    assert.deepEqual(added.slice(0, 5), done.messages, 'the speculated part joined first');
    assert.deepEqual(
      added.map((m) => (m.role === 'assistant' ? `assistant:${m.tool_calls?.map((c) => c.function.name).join('+') ?? m.content}` : m.role)),
      ['user', 'assistant:read_file', 'tool', 'assistant:read_file', 'tool', 'assistant:edit', 'tool', 'assistant:Fixed the typo.'],
    );
    assert.ok(isToolResultPairingValid(s.session.messages));
    const live = s.world.server.chatRequests.filter((r) => !isFork(r) && taskOf(r) === FIX);
    assert.deepEqual(live.map(stepOf), [2, 3], 'the main agent went on from the boundary, not from the start');
  });

  it('Tab on a boundary in auto-edit mode applies the finished edit, then the live shell call asks', async () => {
    const BUMP = 'bump the version and clean the build';
    s = await makeSession(
      {
        [BUMP]: [
          {
            toolCalls: [
              { name: 'edit', arguments: { file_path: 'package.json', old_string: '"1.0.0"', new_string: '"1.0.1"' } },
              { name: 'run_shell_command', arguments: { command: 'rm -rf build' } },
            ],
          },
          { toolCalls: [{ name: 'run_shell_command', arguments: { command: 'rm -rf build' } }] },
          { text: 'Bumped the version; I left build/ alone as you asked.' },
        ],
      },
      { 'show me src/greet.ts': BUMP },
      { answer: 'deny', files: { ...FILES, 'package.json': '{ "version": "1.0.0" }\n', 'build/out.js': 'built\n' } },
    );
    await warmUpAndShow(s, BUMP);
    const done = await runEnd(s, BUMP);
    assert.equal(done.status, 'boundary');
    assert.equal(done.boundary?.type, 'shell');

    await s.session.acceptSuggestion('tab');

    const [event] = accepted(s);
    assert.equal(event.continuesLive, true);
    assert.deepEqual(event.applied, ['package.json']);
    assert.equal(await s.world.read('package.json'), '{ "version": "1.0.1" }\n');
    assert.deepEqual(s.approvals.map((a) => [a.tool, a.summary]), [['run_shell_command', 'rm -rf build']]);
    assert.equal(await s.world.read('build/out.js'), 'built\n', 'the denied command did not run');
    const last = s.session.messages.at(-1) as AssistantMessage;
    assert.equal(last.content, 'Bumped the version; I left build/ alone as you asked.');
  });

  describe('conflicts on accept', () => {
    const BOTH = 'bump a and b in src';
    const turns = {
      [BOTH]: [
        {
          toolCalls: [
            { name: 'edit', arguments: { file_path: 'src/a.ts', old_string: '= 1', new_string: '= 2' } },
            { name: 'edit', arguments: { file_path: 'src/b.ts', old_string: '= 1', new_string: '= 2' } },
          ],
        },
        { text: 'Both are 2 now.' },
      ],
    };
    const files = { ...FILES, 'src/a.ts': 'export const a = 1;\n', 'src/b.ts': 'export const b = 1;\n' };
    const MINE = 'export const a = 7; // mine\n';

    async function acceptIntoConflict(): Promise<SessionWorld> {
      const current = await makeSession(turns, { 'show me src/greet.ts': BOTH }, { files });
      s = current;
      await warmUpAndShow(current, BOTH);
      assert.equal((await runEnd(current, BOTH)).status, 'completed');
      await current.world.write('src/a.ts', MINE);
      await current.session.acceptSuggestion('tab');
      const conflicts = current.events.filter((e) => e.type === 'conflicts');
      assert.equal(conflicts.length, 1);
      assert.deepEqual(conflicts[0].type === 'conflicts' && conflicts[0].conflicts.map((c) => c.path), ['src/a.ts']);
      assert.ok(current.session.conflictsPending);
      assert.equal(accepted(current).length, 0, 'nothing is injected while the user decides');
      assert.equal(await current.world.read('src/b.ts'), 'export const b = 2;\n', 'the file without a conflict is applied');
      assert.equal(await current.world.read('src/a.ts'), MINE);
      return current;
    }

    function resultOf(messages: ChatMessage[], file: string): string {
      const call = messages.flatMap((m) => (m.role === 'assistant' ? m.tool_calls ?? [] : [])).find((c) => c.function.arguments.includes(file))!;
      return (messages.find((m) => m.role === 'tool' && m.tool_call_id === call.id) as ToolMessage).content;
    }

    it('keep mine: the user version stays and the history says the edit was not applied', async () => {
      const current = await acceptIntoConflict();
      await current.session.resolveConflict('src/a.ts', 'keep-mine');

      assert.equal(current.session.conflictsPending, false);
      assert.equal(await current.world.read('src/a.ts'), MINE);
      const [event] = accepted(current);
      assert.deepEqual(event.applied, ['src/b.ts']);
      assert.deepEqual(event.notApplied, ['src/a.ts']);
      const history = current.session.messages;
      assert.match(resultOf(history, 'src/a.ts'), /not applied.*src\/a\.ts/);
      assert.doesNotMatch(resultOf(history, 'src/b.ts'), /not applied/, 'the applied edit is not marked');
      assert.ok(isToolResultPairingValid(history));
    });

    it('overwrite: the speculated content lands', async () => {
      const current = await acceptIntoConflict();
      await current.session.resolveConflict('src/a.ts', 'overwrite');

      assert.equal(current.session.conflictsPending, false);
      assert.equal(await current.world.read('src/a.ts'), 'export const a = 2;\n');
      const [event] = accepted(current);
      assert.deepEqual([...event.applied].sort(), ['src/a.ts', 'src/b.ts']);
      assert.deepEqual(event.notApplied, []);
      assert.doesNotMatch(resultOf(current.session.messages, 'src/a.ts'), /not applied/);
    });
  });

  it('Tab while the speculation still runs promotes it: its progress follows and nothing is restarted', async () => {
    const SLOW = 'add a farewell function slowly';
    s = await makeSession(
      {
        [SLOW]: [
          { latencyMs: 300, toolCalls: [{ name: 'read_file', arguments: { file_path: 'src/greet.ts' } }] },
          { toolCalls: [{ name: 'edit', arguments: { file_path: 'src/greet.ts', old_string: 'Helo', new_string: 'Hello' } }] },
          { text: 'Done: greet says Hello now.' },
        ],
      },
      { 'show me src/greet.ts': SLOW },
    );
    await warmUpAndShow(s, SLOW);
    const current = s;
    await waitUntil(() => current.world.server.chatRequests.some((r) => taskOf(r) === SLOW && !isSuggestionRequest(r)), 'the speculation request');
    assert.equal(s.session.currentSpeculation?.status, 'running');
    const from = s.events.length;

    await s.session.acceptSuggestion('tab');

    const after = s.events.slice(from).map((e) => e.type);
    const promoted = after.indexOf('speculation_promoted');
    const firstProgress = after.indexOf('speculation_progress');
    const acceptedAt = after.indexOf('speculation_accepted');
    assert.ok(promoted >= 0 && firstProgress > promoted && acceptedAt > firstProgress, `events in order: ${after.join(', ')}`);
    const progress = s.events.slice(from).filter((e) => e.type === 'speculation_progress');
    assert.ok(progress.some((e) => e.type === 'speculation_progress' && e.event.type === 'tool_end' && e.event.record.name === 'edit'), 'the edit is shown as it happens');
    const [event] = accepted(s);
    assert.equal(event.alreadyRendered, true);
    assert.equal(event.continuesLive, false);
    assert.equal(await s.world.read('src/greet.ts'), GREET.replace('Helo', 'Hello'));
    const forSlow = s.world.server.chatRequests.filter((r) => taskOf(r) === SLOW && !isSuggestionRequest(r));
    assert.deepEqual(forSlow.map((r) => [isFork(r), stepOf(r)]), [[true, 0], [true, 1], [true, 2]], 'each step asked once, none again live');
    assert.equal((s.session.messages.at(-1) as AssistantMessage).content, 'Done: greet says Hello now.');
  });

  it('Tab after the run finished but before its next suggestion is known still shows that suggestion when it comes', async () => {
    const turns = {
      [SUGGESTION]: [{ toolCalls: [{ name: 'edit', arguments: { file_path: 'src/greet.ts', old_string: 'Helo', new_string: 'Hello' } }] }, { text: 'Done.' }],
      [NEXT]: [{ text: 'Test written.' }],
    };
    const suggestions = { 'show me src/greet.ts': SUGGESTION, [SUGGESTION]: NEXT };
    s = await makeSession(turns, suggestions);
    const current = s;
    // The pipelined prediction is held back until Tab was pressed.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const script = taskScript({ ...WARMUP, ...turns }, suggestions) as (request: RecordedRequest) => ScriptedReply;
    s.world.server.setScript(async (request) => {
      if (isSuggestionRequest(request) && taskOf(request) === SUGGESTION) await held;
      return script(request);
    });
    await warmUpAndShow(s, SUGGESTION);
    await waitUntil(() => current.session.currentSpeculation?.status === 'completed', 'the run to finish');
    await waitUntil(() => current.world.server.chatRequests.some((r) => isSuggestionRequest(r) && taskOf(r) === SUGGESTION), 'the pipelined request');

    await s.session.acceptSuggestion('tab');
    assert.equal(accepted(s).length, 1);
    assert.equal(await s.world.read('src/greet.ts'), GREET.replace('Helo', 'Hello'));
    release();

    await waitUntil(() => current.session.visibleSuggestion === NEXT, 'the pipelined suggestion to show');
    assert.equal(s.session.currentSpeculation?.suggestion, NEXT);
  });

  it('with DashScope caching the forks send the cache header and marks and still hit the main chat prefix', async () => {
    s = await makeSession(
      { [SUGGESTION]: [{ toolCalls: [{ name: 'read_file', arguments: { file_path: 'README.md' } }] }, { text: 'Nothing to add.' }] },
      { 'show me src/greet.ts': SUGGESTION },
      { prefixCaching: 'dashscope' },
    );
    await warmUpAndShow(s, SUGGESTION);
    assert.equal((await runEnd(s, SUGGESTION)).status, 'completed');
    const requests = s.world.server.chatRequests;
    for (const request of requests) {
      assert.equal(request.headers['x-dashscope-cachecontrol'], 'enable');
      assert.match(JSON.stringify(request.body?.messages), /"cache_control":\{"type":"ephemeral"\}/);
    }
    const mainLast = requests.filter((r) => !isFork(r)).at(-1)!;
    const suggestion = requests.find((r) => isSuggestionRequest(r) && taskOf(r) === 'show me src/greet.ts')!;
    const speculated = requests.filter((r) => isFork(r) && !isSuggestionRequest(r));
    assertCachedPrefix(suggestion, mainLast.prompt, 'suggestion');
    assertCachedPrefix(speculated[0], withoutLastMessage(suggestion.prompt), 'speculation');
    assertCachedPrefix(speculated[1], speculated[0].prompt, 'second speculated turn');
  });

  it('with speculation switched off the suggestion still shows, and Tab sends it as a normal message', async () => {
    s = await makeSession({ [SUGGESTION]: [{ text: 'Added it.' }] }, { 'show me src/greet.ts': SUGGESTION }, { config: { speculationEnabled: false } });
    await warmUpAndShow(s, SUGGESTION, false);
    assert.equal(s.session.currentSpeculation, null);
    assert.deepEqual(await s.world.overlayLeftovers(), []);

    await s.session.acceptSuggestion('tab');

    assert.equal(accepted(s).length, 0);
    const live = s.world.server.chatRequests.filter((r) => taskOf(r) === SUGGESTION && !isSuggestionRequest(r));
    assert.deepEqual(live.map(isFork), [false], 'one live main request');
    assert.deepEqual(s.session.messages.slice(-2), [
      { role: 'user', content: SUGGESTION },
      { role: 'assistant', content: 'Added it.' },
    ]);
  });

  it('discarding a finished run deletes its overlay and applies nothing', async () => {
    s = await makeSession(
      { [SUGGESTION]: [{ toolCalls: [{ name: 'write_file', arguments: { file_path: 'src/bye.ts', content: 'bye\n' } }] }, { text: 'Done.' }] },
      { 'show me src/greet.ts': SUGGESTION },
    );
    await warmUpAndShow(s, SUGGESTION);
    assert.equal((await runEnd(s, SUGGESTION)).status, 'completed');
    assert.notDeepEqual(await s.world.overlayLeftovers(), []);

    await s.session.discard();

    assert.deepEqual(await s.world.overlayLeftovers(), []);
    assert.equal(s.session.visibleSuggestion, null);
    assert.equal(s.session.currentSpeculation, null);
    await assert.rejects(s.world.read('src/bye.ts'), /ENOENT/);
    s.clock.advance(ACCEPT_DEBOUNCE_MS);
    await s.session.acceptSuggestion('tab');
    assert.equal(accepted(s).length, 0, 'nothing left to accept');
  });

  describe('a promoted run that does not complete', () => {
    const TASK = 'tidy greet.ts';
    const readGreet = { toolCalls: [{ name: 'read_file', arguments: { file_path: 'src/greet.ts' } }], latencyMs: 200 };

    it('fails: the user is told and the request runs live, with nothing of the run applied', async () => {
      s = await makeSession({}, { 'show me src/greet.ts': TASK });
      const base = taskScript(WARMUP, { 'show me src/greet.ts': TASK }) as (request: RecordedRequest) => ScriptedReply;
      s.world.server.setScript((request) => {
        if (taskOf(request) !== TASK || isSuggestionRequest(request)) return base(request);
        if (isFork(request)) return stepOf(request) === 0 ? readGreet : { status: 401 };
        return { text: 'Tidied it live.' };
      });
      await warmUpAndShow(s, TASK);
      const current = s;
      await waitUntil(() => current.world.server.chatRequests.some((r) => taskOf(r) === TASK && isFork(r) && !isSuggestionRequest(r)), 'the speculation request');

      await s.session.acceptSuggestion('tab');

      assert.ok(s.events.some((e) => e.type === 'speculation_promoted'));
      assert.ok(s.events.some((e) => e.type === 'notice' && /runs live/.test(e.text)), 'the user is told');
      assert.equal(accepted(s).length, 0);
      assert.deepEqual(s.session.messages.slice(-2), [
        { role: 'user', content: TASK },
        { role: 'assistant', content: 'Tidied it live.' },
      ]);
      assert.equal(s.session.busy, false);
    });

    it('stops at a boundary: the finished part is injected and the agent continues live', async () => {
      s = await makeSession(
        {
          [TASK]: [
            readGreet,
            { toolCalls: [{ name: 'run_shell_command', arguments: { command: 'npx prettier --write src/greet.ts' } }] },
            { text: 'Left formatting to you.' },
          ],
        },
        { 'show me src/greet.ts': TASK },
        { answer: 'deny' },
      );
      await warmUpAndShow(s, TASK);
      const current = s;
      await waitUntil(() => current.world.server.chatRequests.some((r) => taskOf(r) === TASK && isFork(r) && !isSuggestionRequest(r)), 'the speculation request');

      await s.session.acceptSuggestion('tab');

      const [event] = accepted(s);
      assert.equal(event.alreadyRendered, true);
      assert.equal(event.continuesLive, true);
      assert.deepEqual(s.approvals.map((a) => a.tool), ['run_shell_command']);
      const forTask = s.world.server.chatRequests.filter((r) => taskOf(r) === TASK && !isSuggestionRequest(r));
      assert.deepEqual(forTask.map((r) => [isFork(r), stepOf(r)]), [[true, 0], [true, 1], [false, 1], [false, 2]]);
      assert.equal((s.session.messages.at(-1) as AssistantMessage).content, 'Left formatting to you.');
      assert.ok(isToolResultPairingValid(s.session.messages));
    });
  });
});
