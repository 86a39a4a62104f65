// Checkpoints through the ChatSession: Tab records one and undo/redo take it back and forth; live
// turns record theirs; a file left out before Tab is not applied and the turns say so; restore to an
// earlier point undoes the later checkpoints in reverse and may rewind the conversation.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import type { ToolMessage } from '../../../src/core/messages';
import type { SessionEvent } from '../../../src/core/session';
import { exists } from '../followup/overlayKit';
import { listBelow, treeSnapshot, waitUntil } from '../engine/engineKit';
import { REDO_SUFFIX } from '../../../src/core/fs/redoLog';
import { nodeCheckpointFs, type CheckpointFs } from '../../../src/core/checkpoints/checkpointFs';
import { accepted, GREET, makeSession, runEnd, warmUpAndShow, type SessionWorld } from '../engine/sessionKit';

const SUGGESTION = 'add farewell and a test';
const FAREWELL = GREET + 'export const farewell = (name: string) => `Bye, ${name}`;\n';
const TEST = "import { farewell } from '../src/greet';\n";
const TURNS = {
  [SUGGESTION]: [
    {
      toolCalls: [
        { name: 'edit', arguments: { file_path: 'src/greet.ts', old_string: '}\n', new_string: '}\nexport const farewell = (name: string) => `Bye, ${name}`;\n' } },
        { name: 'write_file', arguments: { file_path: 'test/greet.test.ts', content: TEST } },
      ],
    },
    { text: 'Added farewell and its test.' },
  ],
  'rename greet in the readme': [
    { toolCalls: [{ name: 'write_file', arguments: { file_path: 'README.md', content: '# greetings\n' } }] },
    { text: 'Renamed it.' },
  ],
  'add a changelog': [
    { toolCalls: [{ name: 'write_file', arguments: { file_path: 'docs/CHANGELOG.md', content: '# Changes\n' } }] },
    { text: 'Added docs/CHANGELOG.md.' },
  ],
};

type Recorded = Extract<SessionEvent, { type: 'turn_recorded' }>;
const recorded = (s: SessionWorld) => s.events.filter((e): e is Recorded => e.type === 'turn_recorded');

describe('checkpoints: in the chat session', function () {
  this.timeout(20_000);
  let s: SessionWorld | undefined;
  let initial: Record<string, string>;
  afterEach(async () => {
    if (!s) return;
    await s.session.dispose();
    await s.world.dispose();
    s = undefined;
  });

  async function acceptSuggestion(exclude: string[] = [], checkpointFs?: CheckpointFs): Promise<SessionWorld> {
    const current = await makeSession(TURNS, { 'show me src/greet.ts': SUGGESTION }, { checkpoints: true, ...(checkpointFs ? { checkpointFs } : {}) });
    s = current;
    initial = await treeSnapshot(current.world.root);
    await warmUpAndShow(current, SUGGESTION);
    assert.equal((await runEnd(current, SUGGESTION)).status, 'completed');
    const runId = current.session.currentSpeculation!.id;
    for (const file of exclude) current.session.setExcluded(runId, file, true);
    await current.session.acceptSuggestion('tab');
    return current;
  }

  it('Tab records a checkpoint; undo restores the workspace byte for byte and redo brings the accept back', async () => {
    const current = await acceptSuggestion();
    const [event] = accepted(current);
    assert.ok(event.checkpoint);
    assert.deepEqual(event.checkpoint.files.map((f) => [f.path, f.change]), [['src/greet.ts', 'modified'], ['test/greet.test.ts', 'created']]);
    assert.equal(event.point.checkpointId, event.checkpoint.id);
    assert.equal(await current.world.read('src/greet.ts'), FAREWELL);

    const outcome = await current.session.undoCheckpoint(event.checkpoint.id);
    assert.ok(outcome.ok);
    assert.deepEqual(outcome.restored, ['src/greet.ts', 'test/greet.test.ts']);
    assert.deepEqual(await treeSnapshot(current.world.root), initial);
    const changed = current.events.filter((e) => e.type === 'checkpoint_changed');
    assert.deepEqual(changed.map((e) => e.type === 'checkpoint_changed' && e.checkpoint.state), ['undone']);
    assert.equal(current.session.visibleSuggestion, null, 'the suggestion predicted before the undo goes');

    assert.ok((await current.session.redoCheckpoint(event.checkpoint.id)).ok);
    assert.equal(await current.world.read('src/greet.ts'), FAREWELL);
    assert.equal(await current.world.read('test/greet.test.ts'), TEST);
  });

  it('closing the chat right after Tab waits for the accept\'s flush: its redo log is gone, not left for recovery', async () => {
    // A disk whose fsyncs take a while: the flush is still running when the window closes.
    const slowDisk: CheckpointFs = { ...nodeCheckpointFs, fsyncFile: async (file) => { await new Promise((resolve) => setTimeout(resolve, 150)); await nodeCheckpointFs.fsyncFile(file); } };
    const current = await acceptSuggestion([], slowDisk);
    assert.ok(accepted(current)[0].checkpoint);
    await current.session.dispose();
    const left = (await listBelow(path.join(current.world.parent, 'state'))).filter((file) => file.endsWith(REDO_SUFFIX));
    assert.deepEqual(left, []);
    assert.equal(await current.world.read('src/greet.ts'), FAREWELL);
  });

  it('a live turn that writes records its own checkpoint; one that only reads records none', async () => {
    const current = await makeSession(TURNS, {}, { checkpoints: true, config: { suggestionsEnabled: false } });
    s = current;
    await current.session.submit('hello');
    await current.session.submit('rename greet in the readme');
    const [hello, rename] = recorded(current);
    assert.equal(hello.checkpoint, null);
    assert.ok(rename.checkpoint);
    assert.deepEqual(rename.checkpoint.origin, { kind: 'turn', prompt: 'rename greet in the readme' });
    assert.equal(await current.world.read('README.md'), '# greetings\n');
    assert.ok((await current.session.undoCheckpoint(rename.checkpoint.id)).ok);
    assert.equal(await current.world.read('README.md'), '# greet\n');
  });

  it('a file left out before Tab is not applied, not in the checkpoint, and the history says why', async () => {
    const current = await acceptSuggestion(['test/greet.test.ts']);
    const [event] = accepted(current);
    assert.deepEqual(event.applied, ['src/greet.ts']);
    assert.deepEqual(event.excluded, ['test/greet.test.ts']);
    assert.equal(await exists(path.join(current.world.root, 'test/greet.test.ts')), false);
    assert.deepEqual(event.checkpoint?.files.map((f) => f.path), ['src/greet.ts']);
    const results = current.session.messages.filter((m): m is ToolMessage => m.role === 'tool').map((m) => m.content);
    assert.ok(results.some((r) => /not applied — the user left test\/greet\.test\.ts out when accepting/.test(r)), results.join('\n'));
    assert.ok(!results.some((r) => /left src\/greet\.ts out/.test(r)));
  });

  it('a file changed after the accept is a conflict for undo and stays as the user has it', async () => {
    const current = await acceptSuggestion();
    const id = accepted(current)[0].checkpoint!.id;
    await current.world.write('src/greet.ts', 'mine\n');
    const plan = await current.session.planUndo(id);
    assert.ok(plan.ok);
    assert.deepEqual(plan.conflicts.map((c) => c.path), ['src/greet.ts']);
    const kept = await current.session.undoCheckpoint(id);
    assert.ok(kept.ok);
    assert.deepEqual(kept.conflicts.map((c) => c.path), ['src/greet.ts']);
    assert.equal(await current.world.read('src/greet.ts'), 'mine\n');
    assert.equal(await exists(path.join(current.world.root, 'test')), false);
    const forced = await current.session.undoCheckpoint(id, ['src/greet.ts']);
    assert.ok(forced.ok);
    assert.equal(await current.world.read('src/greet.ts'), GREET);
  });

  it('restore to an earlier point: its later checkpoints undone newest first, then the conversation rewound to it', async () => {
    const current = await makeSession(TURNS, {}, { checkpoints: true, config: { suggestionsEnabled: false } });
    s = current;
    await current.session.submit('hello');
    const atHere = await treeSnapshot(current.world.root);
    const here = recorded(current)[0].point;
    assert.equal(here.historyLength, current.session.messages.length);
    await current.session.submit('rename greet in the readme');
    await current.session.submit('add a changelog');
    const later = recorded(current).slice(1).map((r) => r.point.checkpointId!).reverse();
    for (const id of later) assert.ok((await current.session.undoCheckpoint(id)).ok);
    assert.deepEqual(await treeSnapshot(current.world.root), atHere);

    assert.deepEqual(await current.session.rewindConversation(here.historyLength), { ok: true });
    assert.equal(current.session.messages.length, here.historyLength);
    assert.ok(current.events.some((e) => e.type === 'history_truncated' && e.length === here.historyLength), 'the transcript is told to cut there');
  });

  it('refuses to undo while a turn runs', async () => {
    const current = await acceptSuggestion();
    const id = accepted(current)[0].checkpoint!.id;
    current.world.server.setScript(() => ({ text: 'slow', latencyMs: 5_000 }));
    const turn = current.session.submit('anything');
    await waitUntil(() => current.session.busy, 'the turn to run');
    const busy = await current.session.undoCheckpoint(id);
    assert.equal(busy.ok === false && busy.reason, 'busy');
    current.session.stop();
    await turn;
    assert.equal(await current.world.read('src/greet.ts'), FAREWELL);
  });
});
