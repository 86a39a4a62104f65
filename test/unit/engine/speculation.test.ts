// The speculation engine end to end: real scripted HTTP server, real OpenAI-compatible client, real
// workspace services and overlay on a temp workspace. Each test checks what a user would notice.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import type { AssistantMessage, ChatMessage, ToolMessage } from '../../../src/core/messages';
import { MAX_SPECULATION_TURNS, type SpeculationEvent, type SpeculationSnapshot } from '../../../src/core/followup/speculation';
import { isToolResultPairingValid } from '../../../src/core/messages/pairing';
import { OVERLAY_PARENT } from '../../../src/core/followup/overlay/recovery';
import { allStrings, fileEntry, makeWorld, OUTSIDE_SECRET, treeSnapshot, waitUntil, wireMessages, type EngineWorld } from './engineKit';

const HISTORY: ChatMessage[] = [
  { role: 'user', content: 'what is in src/a.ts?' },
  { role: 'assistant', content: 'It exports a constant a = 1.' },
];

/** The tool results of a run, in order. */
function toolResults(snapshot: SpeculationSnapshot): string[] {
  return snapshot.messages.filter((m): m is ToolMessage => m.role === 'tool').map((m) => m.content);
}

/** Every tool call has its result right after its assistant message, and nothing dangles. */
function assertPaired(messages: ChatMessage[]): void {
  assert.ok(isToolResultPairingValid(messages), 'tool calls and results are paired');
  messages.forEach((message, i) => {
    if (message.role !== 'assistant' || !message.tool_calls) return;
    const following = messages.slice(i + 1, i + 1 + message.tool_calls.length);
    assert.deepEqual(
      following.map((m) => (m.role === 'tool' ? m.tool_call_id : `not a tool result: ${m.role}`)),
      message.tool_calls.map((call) => call.id),
    );
  });
}

describe('Engine end-to-end: speculation', function () {
  this.timeout(20_000);
  let world: EngineWorld;

  afterEach(async () => {
    if (!world) return;
    // Whatever state a test left its runs in, aborting them must leave no overlay folder behind.
    await world.abortAll();
    const left = await world.overlayLeftovers();
    await world.dispose();
    assert.deepEqual(left, [], 'nothing left under <tmpRoot>/speculate/');
  });

  it('runs a multi-turn edit in auto-edit mode without touching the workspace, then applies exactly what the model wrote', async () => {
    world = await makeWorld({ 'src/a.ts': 'export const a = 1;\n', 'README.md': '# demo\n', 'lib/util.ts': 'export const util = true;\n' });
    world.server.setScript([
      { text: 'Reading src/a.ts first.', toolCalls: [{ name: 'read_file', arguments: { file_path: 'src/a.ts' } }] },
      { toolCalls: [{ name: 'edit', arguments: { file_path: 'src/a.ts', old_string: 'export const a = 1;', new_string: 'export const a = 2;' } }] },
      { toolCalls: [{ name: 'write_file', arguments: { file_path: 'src/helper.ts', content: "import { a } from './a';\nexport const double = () => a * 2;\n" } }] },
      { text: 'Bumped a to 2 and added src/helper.ts with double().' },
    ]);
    const before = await treeSnapshot(world.root);
    const outsideBefore = await treeSnapshot(world.outside);

    const speculation = world.speculate('bump a to 2 and add a double helper', {}, HISTORY);
    const final = await speculation.done;

    assert.equal(final.status, 'completed', final.error ?? '');
    assert.equal(final.boundary, null);
    assert.equal(final.turns, 4);
    assert.deepEqual(
      final.toolCalls.map((c) => [c.index, c.name, c.decision, c.executed, c.ok]),
      [
        [0, 'read_file', 'allow', true, true],
        [1, 'edit', 'redirect', true, true],
        [2, 'write_file', 'redirect', true, true],
      ],
    );
    assert.deepEqual(final.filesWritten, [
      { path: 'src/a.ts', kind: 'modified' },
      { path: 'src/helper.ts', kind: 'created' },
    ]);
    assert.deepEqual(final.messages.map((m) => m.role), ['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
    assert.deepEqual(final.messages[0], { role: 'user', content: 'bump a to 2 and add a double helper' });
    assert.match(toolResults(final)[0], /export const a = 1;/);
    assert.equal((final.messages.at(-1) as AssistantMessage).content, 'Bumped a to 2 and added src/helper.ts with double().');
    assertPaired(final.messages);
    assertPaired(speculation.messagesForInjection());

    // Every round trip was a fork of the main chat: its system prompt and history, then the run.
    assert.equal(world.server.chatRequests.length, 4);
    for (const request of world.server.chatRequests) {
      const messages = wireMessages(request);
      assert.deepEqual(messages.slice(0, 4).map((m) => [m.role, m.content]), [
        ['system', world.services.systemPrompt],
        ['user', HISTORY[0].content],
        ['assistant', HISTORY[1].content],
        ['user', 'bump a to 2 and add a double helper'],
      ]);
    }

    // Not accepted yet: the workspace and its neighbour are byte for byte as they were.
    assert.deepEqual(await treeSnapshot(world.root), before);
    assert.deepEqual(await treeSnapshot(world.outside), outsideBefore);

    const applied = await speculation.apply();
    assert.deepEqual([...applied.applied].sort(), ['src/a.ts', 'src/helper.ts']);
    assert.deepEqual(applied.conflicts, []);
    assert.deepEqual(await treeSnapshot(world.root), {
      ...before,
      'src/a.ts': fileEntry('export const a = 2;\n'),
      'src/helper.ts': fileEntry("import { a } from './a';\nexport const double = () => a * 2;\n"),
    });
    assert.deepEqual(await treeSnapshot(world.outside), outsideBefore);
    await speculation.disposeOverlay();
    assert.deepEqual(await world.overlayLeftovers(), []);
  });

  describe('every escape route is a path boundary; nothing inside or outside the workspace changes', () => {
    type Case = { tool: string; label: string; args: (w: EngineWorld) => Record<string, unknown> };
    const outsideFile = (w: EngineWorld) => path.join(w.outside, 'secret.txt');
    const cases: Case[] = [];
    const routes: { label: string; target: (w: EngineWorld, name: string) => string }[] = [
      { label: '../outside/', target: (_w, name) => `../outside/${name}` },
      { label: 'an absolute path outside', target: (w, name) => path.join(w.outside, name) },
      { label: 'a symlinked folder inside the workspace pointing outside', target: (_w, name) => `linkdir/${name}` },
      { label: 'a symlinked file pointing outside', target: () => 'linkfile.txt' },
    ];
    for (const route of routes) {
      cases.push({ tool: 'write_file', label: route.label, args: (w) => ({ file_path: route.target(w, 'x.txt'), content: 'escaped' }) });
      cases.push({ tool: 'edit', label: route.label, args: (w) => ({ file_path: route.target(w, 'secret.txt'), old_string: 'outside secret', new_string: 'escaped' }) });
      cases.push({ tool: 'read_file', label: route.label, args: (w) => ({ file_path: route.target(w, 'secret.txt') }) });
    }
    cases.push({ tool: 'run_shell_command', label: 'a working directory outside', args: () => ({ command: 'ls', directory: '../outside' }) });

    for (const { tool, label, args } of cases) {
      it(`${tool} through ${label}`, async () => {
        world = await makeWorld({ 'src/a.ts': 'export const a = 1;\n' });
        await world.link('linkdir', world.outside);
        await world.link('linkfile.txt', outsideFile(world));
        const callArgs = args(world);
        world.server.setScript([{ toolCalls: [{ name: tool, arguments: callArgs }] }, { text: 'should never be asked' }]);
        const before = await treeSnapshot(world.root);
        const outsideBefore = await treeSnapshot(world.outside);

        const speculation = world.speculate('touch the secret');
        const final = await speculation.done;

        assert.equal(final.status, 'boundary', final.error ?? '');
        assert.equal(final.boundary?.type, 'path');
        assert.equal(final.boundary?.tool, tool);
        assert.deepEqual(final.toolCalls.map((c) => [c.name, c.decision, c.executed]), [[tool, 'boundary', false]]);
        // The call never ran: nothing of it joins the history, and no second model turn was asked for.
        assert.deepEqual(final.messages, [{ role: 'user', content: 'touch the secret' }]);
        assert.equal(world.server.chatRequests.length, 1);
        assert.ok(!allStrings(final).some((s) => s.includes(OUTSIDE_SECRET.trim())), 'the secret was not read');
        assert.deepEqual(final.filesWritten, []);

        const applied = await speculation.apply();
        assert.deepEqual(applied, { applied: [], conflicts: [] });
        assert.deepEqual(await treeSnapshot(world.root), before);
        assert.deepEqual(await treeSnapshot(world.outside), outsideBefore);
        await speculation.disposeOverlay();
      });
    }
  });

  describe('a boundary in the middle of a turn', () => {
    it('keeps the calls executed before it (by index) and removes the shell call and everything after it', async () => {
      world = await makeWorld({ 'a.txt': 'alpha\n', 'b.txt': 'beta\n', 'c.txt': 'gamma\n', 'x/keep.txt': 'keep me\n' });
      world.server.setScript([
        {
          text: 'Reading, then cleaning up.',
          toolCalls: [
            { id: 'r1', name: 'read_file', arguments: { file_path: 'a.txt' } },
            { id: 'r2', name: 'read_file', arguments: { file_path: 'b.txt' } },
            { id: 's1', name: 'run_shell_command', arguments: { command: 'rm -rf x' } },
            { id: 'r3', name: 'read_file', arguments: { file_path: 'c.txt' } },
          ],
        },
      ]);
      const before = await treeSnapshot(world.root);
      const final = await world.speculate('clean up x').done;

      assert.equal(final.status, 'boundary');
      assert.equal(final.boundary?.type, 'shell');
      assert.equal(final.boundary?.tool, 'run_shell_command');
      assert.match(final.boundary?.detail ?? '', /rm -rf x/);
      assert.deepEqual(
        final.toolCalls.map((c) => [c.index, c.id, c.decision, c.executed]),
        [
          [0, 'r1', 'allow', true],
          [1, 'r2', 'allow', true],
          [2, 's1', 'boundary', false],
        ],
      );
      assert.deepEqual(final.messages, [
        { role: 'user', content: 'clean up x' },
        {
          role: 'assistant',
          content: 'Reading, then cleaning up.',
          tool_calls: [
            { id: 'r1', type: 'function', function: { name: 'read_file', arguments: JSON.stringify({ file_path: 'a.txt' }) } },
            { id: 'r2', type: 'function', function: { name: 'read_file', arguments: JSON.stringify({ file_path: 'b.txt' }) } },
          ],
        },
        { role: 'tool', tool_call_id: 'r1', content: final.toolCalls[0].result ?? '' },
        { role: 'tool', tool_call_id: 'r2', content: final.toolCalls[1].result ?? '' },
      ]);
      assert.match(final.toolCalls[0].result ?? '', /alpha/);
      assert.match(final.toolCalls[1].result ?? '', /beta/);
      assertPaired(final.messages);
      assert.deepEqual(await treeSnapshot(world.root), before, 'x/ is still there');
    });

    it('stops at the first of two edits in default mode, keeping the reads before it', async () => {
      world = await makeWorld({ 'a.txt': 'alpha\n', 'b.txt': 'beta\n' });
      world.server.setScript([
        {
          toolCalls: [
            { id: 'r1', name: 'read_file', arguments: { file_path: 'a.txt' } },
            { id: 'r2', name: 'read_file', arguments: { file_path: 'b.txt' } },
            { id: 'e1', name: 'edit', arguments: { file_path: 'a.txt', old_string: 'alpha', new_string: 'ALPHA' } },
            { id: 'e2', name: 'edit', arguments: { file_path: 'b.txt', old_string: 'beta', new_string: 'BETA' } },
          ],
        },
      ]);
      const before = await treeSnapshot(world.root);
      const final = await world.speculate('shout both files', { approvalMode: 'default' }).done;

      assert.equal(final.status, 'boundary');
      assert.deepEqual(final.boundary && { type: final.boundary.type, tool: final.boundary.tool }, { type: 'edit', tool: 'edit' });
      assert.deepEqual(
        final.toolCalls.map((c) => [c.index, c.id, c.decision, c.executed]),
        [
          [0, 'r1', 'allow', true],
          [1, 'r2', 'allow', true],
          [2, 'e1', 'boundary', false],
        ],
      );
      const assistant = final.messages[1] as AssistantMessage;
      assert.deepEqual(assistant.tool_calls?.map((c) => c.id), ['r1', 'r2']);
      assert.deepEqual(final.messages.slice(2).map((m) => (m as ToolMessage).tool_call_id), ['r1', 'r2']);
      assertPaired(final.messages);
      assert.deepEqual(final.filesWritten, []);
      assert.deepEqual(await treeSnapshot(world.root), before);
    });
  });

  describe('limits', () => {
    it(`stops a model that never finishes after ${MAX_SPECULATION_TURNS} model requests`, async () => {
      world = await makeWorld({ 'a.txt': 'alpha\n' });
      world.server.setScript(() => ({ toolCalls: [{ name: 'read_file', arguments: { file_path: 'a.txt' } }] }));
      // Asking for more turns than the engine allows is capped, not honoured.
      const final = await world.speculate('read it forever', { maxTurns: 50 }).done;

      assert.equal(final.status, 'boundary');
      assert.equal(final.boundary?.type, 'limit');
      assert.match(final.boundary?.detail ?? '', /20 model turns/);
      assert.equal(world.server.chatRequests.length, MAX_SPECULATION_TURNS);
      assert.equal(final.turns, MAX_SPECULATION_TURNS);
      assert.equal(final.messages.length, 1 + 2 * MAX_SPECULATION_TURNS);
      assertPaired(final.messages);
    });

    it('stops before the history grows past maxMessages', async () => {
      world = await makeWorld({ 'a.txt': 'alpha\n' });
      world.server.setScript(() => ({ toolCalls: [{ name: 'read_file', arguments: { file_path: 'a.txt' } }] }));
      const final = await world.speculate('read it forever', { maxMessages: 6 }).done;

      assert.equal(final.status, 'boundary');
      assert.equal(final.boundary?.type, 'limit');
      assert.match(final.boundary?.detail ?? '', /6 messages/);
      assert.ok(final.messages.length <= 6, `${final.messages.length} messages`);
      assert.ok(final.messages.length >= 5, 'the turns that fit were kept');
      assertPaired(final.messages);
    });
  });

  describe('failures fail open: status failed, the workspace untouched, no overlay left', () => {
    const failures: { label: string; reply: Record<string, unknown>; requests: number; error: RegExp }[] = [
      { label: 'HTTP 500 on every retry', reply: { status: 500 }, requests: 1 + 3, error: /3 attempts/ },
      { label: 'HTTP 401', reply: { status: 401 }, requests: 1 + 1, error: /key|401|auth/i },
      { label: 'a stream cut in the middle', reply: { text: 'Now I will also update the readme file', cutAfterChunks: 4 }, requests: 1 + 1, error: /./ },
    ];
    for (const { label, reply, requests, error } of failures) {
      it(label, async () => {
        world = await makeWorld({ 'a.txt': 'alpha\n' });
        world.server.setScript([
          { toolCalls: [{ name: 'write_file', arguments: { file_path: 'new.txt', content: 'speculated\n' } }] },
          reply,
          reply,
          reply,
        ]);
        const before = await treeSnapshot(world.root);
        const speculation = world.speculate('write new.txt');
        const final = await speculation.done;

        assert.equal(final.status, 'failed');
        assert.match(final.error ?? '', error);
        assert.equal(world.server.chatRequests.length, requests);
        assert.deepEqual(await treeSnapshot(world.root), before);
        assert.deepEqual(await world.overlayLeftovers(), []);
        await assert.rejects(speculation.apply(), /failed speculation cannot be applied/);
        assert.deepEqual(await treeSnapshot(world.root), before);
      });
    }
  });

  it('reports a user edit made after the overlay copied the file as a conflict and keeps the user version', async () => {
    world = await makeWorld({ 'a.ts': 'export const a = 1;\n', 'b.ts': 'export const b = 1;\n' });
    world.server.setScript([
      {
        toolCalls: [
          { name: 'edit', arguments: { file_path: 'a.ts', old_string: '= 1', new_string: '= 2' } },
          { name: 'edit', arguments: { file_path: 'b.ts', old_string: '= 1', new_string: '= 2' } },
        ],
      },
      { text: 'Both bumped.' },
    ]);
    const speculation = world.speculate('bump a and b');
    assert.equal((await speculation.done).status, 'completed');
    await world.write('a.ts', 'export const a = 42; // mine\n');

    const result = await speculation.apply();
    assert.deepEqual(result.applied, ['b.ts']);
    assert.deepEqual(result.conflicts.map((c) => c.path), ['a.ts']);
    assert.equal(await world.read('a.ts'), 'export const a = 42; // mine\n');
    assert.equal(await world.read('b.ts'), 'export const b = 2;\n');
    await speculation.disposeOverlay();
  });

  it('abort while the server is slow closes the request, ends as aborted and deletes the overlay', async () => {
    world = await makeWorld({ 'a.txt': 'alpha\n' });
    world.server.setScript([
      { toolCalls: [{ name: 'write_file', arguments: { file_path: 'new.txt', content: 'speculated\n' } }] },
      { text: 'finally', latencyMs: 30_000 },
    ]);
    const before = await treeSnapshot(world.root);
    const speculation = world.speculate('write new.txt slowly');
    assert.ok(await world.server.waitForChatRequests(2, 5_000), 'the second request arrived');
    assert.ok(speculation.overlayFs, 'the run has an overlay');
    assert.notDeepEqual(await world.overlayLeftovers(), [], 'the overlay exists while the run is alive');
    const slow = world.server.chatRequests[1];

    await speculation.abort();

    assert.ok(await world.server.waitForClientClose(slow, 5_000), 'the server saw the connection close');
    const final = speculation.snapshot();
    assert.equal(final.status, 'aborted');
    assert.deepEqual(await world.overlayLeftovers(), []);
    assert.deepEqual(await treeSnapshot(world.root), before);
    assert.equal(world.server.chatRequests.length, 2, 'nothing was asked after the abort');
  });

  it('reads, list_directory, glob and grep_search see the overlay writes of earlier turns', async () => {
    world = await makeWorld({ 'docs/old.md': '# Old\nOLD_MARKER stays here\n', 'src/a.ts': 'export const a = 1;\n' });
    world.server.setScript([
      {
        toolCalls: [
          { name: 'write_file', arguments: { file_path: 'notes/plan.md', content: 'FRESH_MARKER: the plan\n' } },
          { name: 'edit', arguments: { file_path: 'docs/old.md', old_string: 'OLD_MARKER', new_string: 'FRESH_MARKER' } },
        ],
      },
      {
        toolCalls: [
          { name: 'read_file', arguments: { file_path: 'notes/plan.md' } },
          { name: 'list_directory', arguments: { path: 'notes' } },
          { name: 'glob', arguments: { pattern: '**/*.md' } },
          { name: 'grep_search', arguments: { pattern: 'FRESH_MARKER' } },
          { name: 'grep_search', arguments: { pattern: 'OLD_MARKER' } },
        ],
      },
      { text: 'The plan is written.' },
    ]);
    const final = await world.speculate('write the plan').done;

    assert.equal(final.status, 'completed', final.error ?? '');
    const [, , read, list, glob, grepFresh, grepOld] = toolResults(final);
    assert.match(read, /FRESH_MARKER: the plan/);
    assert.match(list, /plan\.md/);
    assert.match(glob, /notes\/plan\.md/);
    assert.match(glob, /docs\/old\.md/);
    assert.match(grepFresh, /notes\/plan\.md/);
    assert.match(grepFresh, /docs\/old\.md/);
    assert.doesNotMatch(grepOld, /docs\/old\.md/, 'the edited-away text is gone in the merged view');
    assert.equal(await world.read('docs/old.md'), '# Old\nOLD_MARKER stays here\n');
  });

  it('never shows an overlay path in messages, tool results, events or boundary details', async () => {
    world = await makeWorld({ 'src/a.ts': 'export const a = 1;\n' });
    await world.link('linkdir', world.outside);
    world.server.setScript([
      { toolCalls: [{ name: 'write_file', arguments: { file_path: 'notes/plan.md', content: 'plan\n' } }] },
      {
        toolCalls: [
          { name: 'read_file', arguments: { file_path: 'notes/plan.md' } },
          { name: 'read_file', arguments: { file_path: 'notes/missing.md' } },
          { name: 'read_file', arguments: { file_path: 'notes' } },
          { name: 'edit', arguments: { file_path: 'notes/plan.md', old_string: 'not there', new_string: 'x' } },
          { name: 'write_file', arguments: { file_path: 'notes/plan.md/inner.md', content: 'x' } },
          { name: 'list_directory', arguments: { path: 'notes/plan.md' } },
          { name: 'glob', arguments: { pattern: 'notes/**' } },
          { name: 'grep_search', arguments: { pattern: '(unclosed' } },
          { name: 'grep_search', arguments: { pattern: 'plan', path: 'notes' } },
          { name: 'write_file', arguments: { file_path: path.join(world.root, 'notes', 'abs.md'), content: 'abs\n' } },
        ],
      },
      { toolCalls: [{ name: 'write_file', arguments: { file_path: 'linkdir/escape.md', content: 'x' } }] },
    ]);
    const events: SpeculationEvent[] = [];
    const speculation = world.speculate('write the plan', { onEvent: (event) => events.push(event) });
    const final = await speculation.done;

    assert.equal(final.status, 'boundary');
    assert.equal(final.boundary?.type, 'path');
    assert.equal(final.toolCalls.filter((c) => c.executed).length, 11);
    assert.match(toolResults(final).join('\n'), /notes\/plan\.md/, 'workspace paths are shown');
    const overlayDir = (speculation.overlayFs as { dir?: string } | undefined)?.dir ?? '';
    const strings = [...allStrings(final), ...allStrings(events), ...allStrings(speculation.messagesForInjection())];
    const leaks = strings.filter((s) => s.includes(world.tmpRoot) || (overlayDir !== '' && s.includes(overlayDir)) || /speculate-\d+\/\d+\//.test(s));
    assert.deepEqual(leaks, []);
    await speculation.disposeOverlay();
  });

  describe('more ways a run meets the world', () => {
    it('a read-only shell command runs before any write, but after a write it is a boundary (it would read stale files)', async () => {
      world = await makeWorld({ 'a.txt': 'alpha\n' });
      world.server.setScript([
        { toolCalls: [{ name: 'run_shell_command', arguments: { command: 'cat a.txt' } }] },
        { toolCalls: [{ name: 'write_file', arguments: { file_path: 'a.txt', content: 'ALPHA\n' } }] },
        { toolCalls: [{ name: 'run_shell_command', arguments: { command: 'cat a.txt' } }] },
      ]);
      const final = await world.speculate('shout a.txt').done;

      assert.equal(final.status, 'boundary');
      assert.equal(final.boundary?.type, 'shell');
      assert.match(final.boundary?.detail ?? '', /would not see the speculated edits/);
      assert.match(toolResults(final)[0], /alpha/, 'the first cat ran in the workspace');
      assert.deepEqual(final.toolCalls.map((c) => [c.name, c.decision, c.executed]), [
        ['run_shell_command', 'allow', true],
        ['write_file', 'redirect', true],
        ['run_shell_command', 'boundary', false],
      ]);
      assert.equal(await world.read('a.txt'), 'alpha\n');
    });

    it('malformed tool arguments come back to the model as an error and the run goes on', async () => {
      world = await makeWorld({ 'a.txt': 'alpha\n' });
      world.server.setScript([
        { toolCalls: [{ name: 'write_file', arguments: '{"file_path": "b.txt", "content": ' }] },
        { toolCalls: [{ name: 'write_file', arguments: { file_path: 'b.txt', content: 'beta\n' } }] },
        { text: 'Wrote b.txt.' },
      ]);
      const speculation = world.speculate('write b.txt');
      const final = await speculation.done;

      assert.equal(final.status, 'completed');
      assert.match(toolResults(final)[0], /not valid JSON/);
      assert.deepEqual(final.filesWritten, [{ path: 'b.txt', kind: 'created' }]);
      assertPaired(final.messages);
      await speculation.apply();
      assert.equal(await world.read('b.txt'), 'beta\n');
    });

    const stops: { tool: string; args: Record<string, unknown>; type: string }[] = [
      { tool: 'web_fetch', args: { url: 'http://127.0.0.1:9/' }, type: 'denied_tool' },
      { tool: 'ask_user_question', args: { question: 'Which file?' }, type: 'denied_tool' },
      { tool: 'todo_write', args: { todos: [] }, type: 'denied_tool' },
      { tool: 'mcp__github__create_issue', args: { title: 'x' }, type: 'unknown_tool' },
    ];
    for (const { tool, args, type } of stops) {
      it(`${tool} stops the run before it runs (${type})`, async () => {
        world = await makeWorld({ 'a.txt': 'alpha\n' });
        world.server.setScript([{ toolCalls: [{ name: 'read_file', arguments: { file_path: 'a.txt' } }, { name: tool, arguments: args }] }]);
        const final = await world.speculate('go on').done;

        assert.equal(final.status, 'boundary');
        assert.deepEqual(final.boundary && [final.boundary.type, final.boundary.tool], [type, tool]);
        assert.deepEqual(final.toolCalls.map((c) => c.executed), [true, false]);
        assert.deepEqual((final.messages[1] as AssistantMessage).tool_calls?.map((c) => c.function.name), ['read_file']);
        assertPaired(final.messages);
      });
    }

    it('abort while a shell command runs stops the command and ends the run as aborted', async () => {
      world = await makeWorld({ 'a.txt': 'alpha\n' });
      world.server.setScript([{ toolCalls: [{ name: 'run_shell_command', arguments: { command: 'sleep 30' } }] }, { text: 'never' }]);
      const events: SpeculationEvent[] = [];
      const speculation = world.speculate('wait a while', { onEvent: (event) => events.push(event) });
      await waitUntil(() => events.some((e) => e.type === 'tool_start'), 'the command to start');

      await speculation.abort();

      assert.equal(speculation.snapshot().status, 'aborted');
      assert.equal(world.server.chatRequests.length, 1, 'no model turn after the abort');
      assert.deepEqual(await world.overlayLeftovers(), []);
    });

    it('an overlay that cannot be created fails the run without a model call or a temp path in the error', async () => {
      world = await makeWorld({ 'a.txt': 'alpha\n' });
      world.server.setScript([{ text: 'never asked' }]);
      const overlayPath = path.join(world.tmpRoot, OVERLAY_PARENT, String(process.pid), 'f00d');
      const speculation = world.speculate('anything', {
        createOverlay: async () => {
          throw Object.assign(new Error(`ENOENT: no such file or directory, mkdir '${overlayPath}'`), { code: 'ENOENT' });
        },
      });
      const final = await speculation.done;

      assert.equal(final.status, 'failed');
      assert.equal(world.server.chatRequests.length, 0);
      assert.ok(final.error && !final.error.includes(world.tmpRoot), `the error names no overlay path: ${final.error}`);
      assert.match(final.error ?? '', /ENOENT/);
    });
  });
});
