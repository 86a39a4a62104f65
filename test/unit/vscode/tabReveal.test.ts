// Tab in one frame, host side: a real ChatSession feeds the presenter, which previews the running
// speculation to the webview; Tab's acceptRevealed applies exactly the revealed version or refuses it.
import * as assert from 'node:assert/strict';
import type { SpeculationSnapshot } from '../../../src/core/followup/speculation';
import type { HostToWebview, SpeculationPreview, TranscriptItem } from '../../../src/shared/protocol';
import { ChatPresenter } from '../../../src/vscode/chat/chatPresenter';
import { itemsFromMessages } from '../../../src/vscode/chat/transcriptItems';
import { acceptRevealed } from '../../../src/vscode/speculation/speculationPreview';
import type { ScriptedReply } from '../../fixtures/scriptedServer';
import { MODEL, waitUntil } from '../engine/engineKit';
import { GREET, makeSession, warmUpAndShow, type SessionWorld } from '../engine/sessionKit';

const FAREWELL = `${GREET}export const farewell = (name: string) => \`Bye, \${name}\`;\n`;
const TASK = 'add a farewell function to greet.ts';
const NEXT = 'write a test for farewell';

const FAREWELL_TURNS: Record<string, ScriptedReply[]> = {
  [TASK]: [
    { text: 'Adding it below greet.', toolCalls: [{ name: 'edit', arguments: { file_path: 'src/greet.ts', old_string: '}\n', new_string: '}\nexport const farewell = (name: string) => `Bye, ${name}`;\n' } }] },
    { text: 'Done: greet.ts exports farewell.' },
  ],
};

/** A session whose events feed a presenter, as in the extension; the presenter answers approvals. */
interface World extends SessionWorld {
  presenter: ChatPresenter;
  posted: HostToWebview[];
}

async function makeChat(
  turns: Record<string, ScriptedReply[]>,
  suggestions: Record<string, string>,
  options: { files?: Record<string, string>; failApply?: boolean } = {},
): Promise<World> {
  const posted: HostToWebview[] = [];
  const presenter = new ChatPresenter({ post: (message) => posted.push(message), model: () => ({ label: MODEL, demo: false }), settings: () => ({ enterAcceptsSuggestion: false }) });
  const s = await makeSession(turns, suggestions, {
    ...(options.files ? { files: options.files } : {}),
    session: (world) => ({
      prompter: presenter,
      createOverlay: async () => {
        const overlay = await world.services.createOverlay();
        if (options.failApply) overlay.applyToReal = async () => Promise.reject(new Error('disk full'));
        return overlay;
      },
    }),
  });
  s.session.subscribe((event) => presenter.handle(event));
  return { ...s, presenter, posted };
}

function previews(w: World): SpeculationPreview[] {
  return w.posted.flatMap((m) => (m.type === 'speculationPreview' && m.preview ? [m.preview] : []));
}

/** The webview's copy: every version applied in order, as the webview puts it together. */
function webviewCopy(w: World): { seq: number; final: boolean; items: TranscriptItem[]; next: SpeculationPreview['next'] } {
  let items: TranscriptItem[] = [];
  let last: SpeculationPreview | undefined;
  for (const preview of previews(w)) {
    items = [...items.slice(0, preview.from), ...preview.items];
    last = preview;
  }
  assert.ok(last, 'a preview was sent');
  return { seq: last.seq, final: last.final, items, next: last.next };
}

async function finalPreview(w: World): Promise<ReturnType<typeof webviewCopy>> {
  await waitUntil(() => previews(w).some((p) => p.final), 'a final preview');
  return webviewCopy(w);
}

const withoutIds = (items: TranscriptItem[]) => items.map(({ id: _id, ...rest }) => rest);
const types = (messages: HostToWebview[]) => messages.map((m) => m.type);

describe('Tab reveal: the host side with a real session', function () {
  this.timeout(20_000);
  let w: World | undefined;

  afterEach(async () => {
    if (!w) return;
    await w.session.dispose();
    await w.world.abortAll();
    await w.world.dispose();
    w = undefined;
  });

  it('previews the finished run with its pipelined suggestion; Tab applies that version without sending its turns again', async () => {
    const current = (w = await makeChat(FAREWELL_TURNS, { 'show me src/greet.ts': TASK, [TASK]: NEXT }));
    await warmUpAndShow(current, TASK);
    const copy = await finalPreview(current);
    assert.deepEqual(copy.next && { text: copy.next.text }, { text: NEXT }, 'the next suggestion comes with the run');
    assert.deepEqual(copy.items.map((item) => item.kind), ['user', 'assistant', 'toolGroup', 'assistant']);
    assert.equal(await current.world.read('src/greet.ts'), GREET, 'nothing applied before Tab');

    const suggestionId = current.presenter.currentSuggestionId!;
    current.posted.length = 0;
    let usual = 0;
    await acceptRevealed({ session: current.session, presenter: current.presenter, acceptUsual: async () => void usual++ }, { suggestionId, seq: copy.seq, method: 'tab' });

    assert.equal(usual, 0);
    assert.equal(await current.world.read('src/greet.ts'), FAREWELL, 'the file on disk changed');
    const sent = types(current.posted);
    const appended = current.posted.flatMap((m) => (m.type === 'appendItems' ? m.items : []));
    assert.deepEqual(appended.map((item) => item.kind), ['turnEnd'], `the turns are not sent again, only the line after them: ${sent.join(', ')}`);
    assert.ok(!sent.includes('suggestionCleared'), 'the webview cleared the accepted suggestion itself');
    assert.deepEqual(current.posted.find((m) => m.type === 'revealAnswer'), { type: 'revealAnswer', seq: copy.seq, outcome: 'applied', notApplied: [] });
    assert.ok(sent.indexOf('revealAnswer') < sent.indexOf('appendItems'));
    const line = appended[0];
    assert.match(line?.kind === 'turnEnd' ? line.text : '', /^Speculated 1 tool call · [\d.]+ s saved$/);
    const shown = current.posted.find((m) => m.type === 'suggestion');
    assert.deepEqual(shown, { type: 'suggestion', id: copy.next!.id, text: NEXT }, 'the next suggestion keeps the id the webview already shows');

    // What the webview revealed is what was injected, and a reload shows it the same way.
    const event = current.events.find((e) => e.type === 'speculation_accepted');
    assert.ok(event && event.type === 'speculation_accepted');
    assert.deepEqual(withoutIds(copy.items), withoutIds(itemsFromMessages(event.messages, event.toolCalls, () => 'x', true)));
    const transcript = current.presenter.snapshot().transcript;
    const at = transcript.findIndex((item) => item.id === copy.items[0].id);
    assert.deepEqual(transcript.slice(at, at + copy.items.length), copy.items);
    assert.equal(transcript[at + copy.items.length]?.kind, 'turnEnd');
  });

  it('refuses a stale version (the run moved on since) and accepts the Tab the usual way', async () => {
    const current = (w = await makeChat(FAREWELL_TURNS, { 'show me src/greet.ts': TASK, [TASK]: NEXT }));
    await warmUpAndShow(current, TASK);
    const copy = await finalPreview(current);
    const older = previews(current).at(-2)!;
    assert.ok(older.seq < copy.seq);

    current.posted.length = 0;
    let usual = 0;
    await acceptRevealed(
      { session: current.session, presenter: current.presenter, acceptUsual: async () => {
        usual++;
        await current.session.acceptSuggestion('tab');
      } },
      { suggestionId: older.suggestionId, seq: older.seq, method: 'tab' },
    );
    assert.equal(usual, 1);
    assert.deepEqual(current.posted[0], { type: 'revealAnswer', seq: older.seq, outcome: 'withdrawn', notApplied: [] }, 'the block goes first');
    const appended = current.posted.find((m) => m.type === 'appendItems');
    assert.ok(appended && appended.type === 'appendItems', 'then the host sends the turns it applied');
    assert.deepEqual(withoutIds(appended.items), withoutIds(copy.items));
    assert.equal(await current.world.read('src/greet.ts'), FAREWELL);
  });

  it('refuses a reveal of a suggestion that is no longer shown and accepts nothing', async () => {
    const current = (w = await makeChat(FAREWELL_TURNS, { 'show me src/greet.ts': TASK }));
    await warmUpAndShow(current, TASK);
    const copy = await finalPreview(current);
    current.posted.length = 0;
    let usual = 0;
    await acceptRevealed({ session: current.session, presenter: current.presenter, acceptUsual: async () => void usual++ }, { suggestionId: 's-old', seq: copy.seq, method: 'tab' });
    assert.deepEqual(current.posted, [{ type: 'revealAnswer', seq: copy.seq, outcome: 'withdrawn', notApplied: [] }]);
    assert.equal(usual, 0);
    assert.equal(await current.world.read('src/greet.ts'), GREET);
  });

  it('conflicts after the reveal: says which file is not applied, and after "keep mine" marks its tool result', async () => {
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
    const files = { 'src/greet.ts': GREET, 'src/a.ts': 'export const a = 1;\n', 'src/b.ts': 'export const b = 1;\n' };
    const current = (w = await makeChat(turns, { 'show me src/greet.ts': BOTH }, { files }));
    await warmUpAndShow(current, BOTH);
    const copy = await finalPreview(current);
    const MINE = 'export const a = 7; // mine\n';
    await current.world.write('src/a.ts', MINE);

    const suggestionId = current.presenter.currentSuggestionId!;
    current.posted.length = 0;
    await acceptRevealed({ session: current.session, presenter: current.presenter, acceptUsual: async () => assert.fail('not refused') }, { suggestionId, seq: copy.seq, method: 'tab' });
    assert.deepEqual(types(current.posted), ['revealAnswer', 'conflicts']);
    assert.deepEqual(current.posted[0], { type: 'revealAnswer', seq: copy.seq, outcome: 'conflicts', notApplied: ['src/a.ts'] });
    assert.equal(await current.world.read('src/b.ts'), 'export const b = 2;\n');

    current.posted.length = 0;
    current.presenter.conflictResolved('src/a.ts', 'keep-mine');
    await current.session.resolveConflict('src/a.ts', 'keep-mine');
    assert.equal(await current.world.read('src/a.ts'), MINE, 'the user’s version stays');
    const update = current.posted.find((m) => m.type === 'toolCallUpdate');
    assert.ok(update && update.type === 'toolCallUpdate', `the kept file's tool result is updated: ${types(current.posted).join(', ')}`);
    assert.match(update.call.result ?? '', /not applied — the user kept their own version of src\/a\.ts/);
    const group = copy.items.find((item) => item.kind === 'toolGroup');
    assert.equal(update.groupId, group?.id, 'in the revealed tool group');
    assert.equal(current.posted.filter((m) => m.type === 'toolCallUpdate').length, 1, 'only the kept file’s call changes');
    assert.deepEqual(current.posted.find((m) => m.type === 'revealAnswer'), { type: 'revealAnswer', seq: copy.seq, outcome: 'applied', notApplied: ['src/a.ts'] });
    const appended = current.posted.flatMap((m) => (m.type === 'appendItems' ? m.items : []));
    assert.deepEqual(appended.map((item) => item.kind), ['turnEnd'], 'the turns are not sent again, only the line after them');
    // The presenter keeps the block where the webview shows it: before the conflict choices.
    const transcript = current.presenter.snapshot().transcript;
    const blockAt = transcript.findIndex((item) => item.id === copy.items[0].id);
    const conflictsAt = transcript.findIndex((item) => item.kind === 'conflicts');
    assert.ok(blockAt >= 0 && blockAt < conflictsAt, 'block, then conflicts');
  });

  it('a failed apply withdraws the block: nothing is shown as applied, and the request runs live', async () => {
    const current = (w = await makeChat(FAREWELL_TURNS, { 'show me src/greet.ts': TASK }, { failApply: true }));
    await warmUpAndShow(current, TASK);
    const copy = await finalPreview(current);
    const suggestionId = current.presenter.currentSuggestionId!;
    current.posted.length = 0;
    await acceptRevealed({ session: current.session, presenter: current.presenter, acceptUsual: async () => assert.fail('not refused') }, { suggestionId, seq: copy.seq, method: 'tab' });
    const sent = types(current.posted);
    assert.deepEqual(current.posted[0], { type: 'revealAnswer', seq: copy.seq, outcome: 'withdrawn', notApplied: [] });
    assert.deepEqual(sent.slice(0, 3), ['revealAnswer', 'notice', 'speculation'], 'withdrawn before the notice says why');
    const notice = current.posted.find((m) => m.type === 'notice');
    assert.match(notice?.type === 'notice' ? notice.text : '', /Could not apply the speculated changes \(disk full\); running the request live instead/);
    const transcript = current.presenter.snapshot().transcript;
    assert.equal(transcript.some((item) => item.id.startsWith(copy.items[0].id.split('.')[0] + '.')), false, 'the revealed items are not kept');
    // The live run did the work for real.
    assert.equal(await current.world.read('src/greet.ts'), FAREWELL);
  });

  it('Tab while the run is still in flight is refused as a reveal and promotes the run as before', async () => {
    const slow: Record<string, ScriptedReply[]> = { [TASK]: [{ ...FAREWELL_TURNS[TASK][0], latencyMs: 400 }, FAREWELL_TURNS[TASK][1]] };
    const current = (w = await makeChat(slow, { 'show me src/greet.ts': TASK }));
    await warmUpAndShow(current, TASK);
    await waitUntil(() => previews(current).length > 0, 'the first preview');
    const copy = webviewCopy(current);
    assert.equal(copy.final, false);
    const suggestionId = current.presenter.currentSuggestionId!;
    current.posted.length = 0;
    await acceptRevealed(
      { session: current.session, presenter: current.presenter, acceptUsual: () => current.session.acceptSuggestion('tab') },
      { suggestionId, seq: copy.seq, method: 'tab' },
    );
    assert.deepEqual(current.posted[0], { type: 'revealAnswer', seq: copy.seq, outcome: 'withdrawn', notApplied: [] });
    assert.ok(types(current.posted).includes('appendItems'), 'the promoted run’s turns are sent as before');
    assert.equal(await current.world.read('src/greet.ts'), FAREWELL);
  });
});

describe('Tab reveal: what the presenter previews', () => {
  function presenter() {
    const posted: HostToWebview[] = [];
    const chat = new ChatPresenter({ post: (message) => posted.push(message), model: () => ({ label: 'm', demo: false }), settings: () => ({ enterAcceptsSuggestion: false }) });
    return { chat, posted };
  }

  function snapshot(overrides: Partial<SpeculationSnapshot> = {}): SpeculationSnapshot {
    return {
      id: 'run1', suggestion: 'add a test', status: 'running', boundary: null, toolCalls: [], filesWritten: [], messages: [{ role: 'user', content: 'add a test' }],
      pipelinedSuggestion: null, error: null, errorReason: null, startedAt: 0, finishedAt: null, usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0 }, turns: 0,
      ...overrides,
    };
  }

  const call = { id: 'c1', type: 'function' as const, function: { name: 'read_file', arguments: '{"file_path":"a.ts"}' } };
  const record = { index: 0, id: 'c1', name: 'read_file', args: { file_path: 'a.ts' }, rawArgs: '', summary: 'a.ts', decision: 'allow' as const, executed: true, ok: true, result: 'A' };
  const turnOne = [
    { role: 'user' as const, content: 'add a test' },
    { role: 'assistant' as const, content: 'Reading.', tool_calls: [call] },
    { role: 'tool' as const, tool_call_id: 'c1', content: 'A' },
  ];
  const done = [...turnOne, { role: 'assistant' as const, content: 'Added.' }];

  const sentPreviews = (posted: HostToWebview[]) => posted.flatMap((m) => (m.type === 'speculationPreview' ? [m.preview] : []));

  it('sends only what changed, nothing when a tool merely started, and drops the preview when the run goes', () => {
    const { chat, posted } = presenter();
    chat.handle({ type: 'suggestion', text: 'add a test' });
    chat.handle({ type: 'speculation', snapshot: snapshot() });
    chat.handle({ type: 'speculation', snapshot: snapshot({ toolCalls: [{ ...record, executed: false, ok: null, result: null }] }) });
    chat.handle({ type: 'speculation', snapshot: snapshot({ messages: turnOne, toolCalls: [record] }) });
    chat.handle({ type: 'speculation', snapshot: snapshot({ status: 'completed', messages: done, toolCalls: [record], pipelinedSuggestion: 'run it' }) });
    const [first, second, third, ...rest] = sentPreviews(posted);
    assert.equal(rest.length, 0, 'a tool start alone sends nothing');
    assert.deepEqual(first && { from: first.from, kinds: first.items.map((i) => i.kind), final: first.final }, { from: 0, kinds: ['user'], final: false });
    assert.deepEqual(second && { from: second.from, kinds: second.items.map((i) => i.kind) }, { from: 1, kinds: ['assistant', 'toolGroup'] });
    assert.deepEqual(third && { from: third.from, kinds: third.items.map((i) => i.kind), final: third.final }, { from: 3, kinds: ['assistant'], final: true });
    assert.ok(first && second && third && first.seq < second.seq && second.seq < third.seq);
    assert.equal(third?.next?.text, 'run it');
    // A reload gets it whole.
    const init = chat.snapshot().preview;
    assert.deepEqual(init && { seq: init.seq, from: init.from, count: init.items.length }, { seq: third?.seq, from: 0, count: 4 });

    chat.handle({ type: 'speculation', snapshot: null });
    assert.deepEqual(sentPreviews(posted).at(-1), null);
    assert.equal(chat.snapshot().preview, undefined);
  });

  it('a failed run, or one without a suggestion on screen, has no preview', () => {
    const { chat, posted } = presenter();
    chat.handle({ type: 'speculation', snapshot: snapshot() });
    assert.deepEqual(sentPreviews(posted), [], 'no suggestion shown');
    chat.handle({ type: 'suggestion', text: 'add a test' });
    chat.handle({ type: 'speculation', snapshot: snapshot({ status: 'failed', error: 'rate limited' }) });
    assert.deepEqual(sentPreviews(posted), []);
  });

  it('after a reload during the apply, the applied turns are appended (the reloaded webview never had the block)', () => {
    const { chat, posted } = presenter();
    chat.handle({ type: 'suggestion', text: 'add a test' });
    const final = snapshot({ status: 'completed', messages: done, toolCalls: [record] });
    chat.handle({ type: 'speculation', snapshot: final });
    const preview = sentPreviews(posted).at(-1)!;
    assert.equal(chat.beginReveal(preview.seq, final), true);
    chat.sendInit();
    posted.length = 0;
    chat.handle({ type: 'suggestion', text: null });
    chat.handle({
      type: 'speculation_accepted', runId: 'run1', suggestion: 'add a test', messages: done, historyStart: 4, toolCalls: [record], applied: ['a.ts'], notApplied: [],
      timeSavedMs: 1200, alreadyRendered: false, continuesLive: false, excluded: [], point: { id: 'pt1', historyLength: 8, checkpointId: null }, checkpoint: null,
    });
    assert.deepEqual(types(posted), ['suggestionCleared', 'appendItems', 'appendItems'], 'the turns, then the line after them');
  });

  it('refuses a second reveal of the same version and one whose turns no longer match the run', () => {
    const { chat, posted } = presenter();
    chat.handle({ type: 'suggestion', text: 'add a test' });
    const final = snapshot({ status: 'completed', messages: done, toolCalls: [record] });
    chat.handle({ type: 'speculation', snapshot: final });
    const preview = sentPreviews(posted).at(-1)!;
    assert.equal(chat.beginReveal(preview.seq, snapshot({ status: 'completed', messages: turnOne, toolCalls: [record] })), false, 'the run differs from the preview');
    assert.deepEqual(posted.at(-1), { type: 'revealAnswer', seq: preview.seq, outcome: 'withdrawn', notApplied: [] });
    assert.equal(chat.beginReveal(preview.seq, final), true);
    assert.equal(chat.beginReveal(preview.seq, final), false, 'taken once');
  });
});
