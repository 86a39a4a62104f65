// The chat's view of checkpoints: each turn ends with a line (Undo / Changes when it changed files),
// undo and redo update every line of the checkpoint, Restore to here finds the later checkpoints,
// undo conflicts and the speculation's files survive a reload through the snapshot.
import * as assert from 'node:assert/strict';
import type { CheckpointSummary } from '../../../src/core/checkpoints';
import type { HostToWebview, TranscriptItem } from '../../../src/shared/protocol';
import { ChatPresenter } from '../../../src/vscode/chat/chatPresenter';

function presenter() {
  const posted: HostToWebview[] = [];
  const chat = new ChatPresenter({ post: (m) => posted.push(m), model: () => ({ label: 'm', demo: false }), settings: () => ({ enterAcceptsSuggestion: false }) });
  return { chat, posted };
}

function summary(id: string, files: string[], state: CheckpointSummary['state'] = 'applied'): CheckpointSummary {
  return { id, createdAt: 0, origin: { kind: 'turn', prompt: 'p' }, state, files: files.map((path) => ({ path, change: 'modified' as const })) };
}

const lines = (chat: ChatPresenter) => chat.snapshot().transcript.filter((i): i is Extract<TranscriptItem, { kind: 'turnEnd' }> => i.kind === 'turnEnd');

describe('checkpoints: the chat presenter', () => {
  it('ends every turn with a line; one that changed files says what and carries its checkpoint', () => {
    const { chat } = presenter();
    chat.handle({ type: 'turn_recorded', point: { id: 'pt1', historyLength: 2, checkpointId: null }, checkpoint: null });
    chat.handle({ type: 'turn_recorded', point: { id: 'pt2', historyLength: 6, checkpointId: 'cp1' }, checkpoint: summary('cp1', ['src/a.ts']) });
    chat.handle({ type: 'turn_recorded', point: { id: 'pt3', historyLength: 9, checkpointId: 'cp2' }, checkpoint: summary('cp2', ['a', 'b', 'c']) });
    assert.deepEqual(lines(chat).map((l) => [l.text, l.historyLength, l.checkpoint?.checkpointId]), [
      ['', 2, undefined],
      ['Changed src/a.ts', 6, 'cp1'],
      ['Changed 3 files', 9, 'cp2'],
    ]);
  });

  it('an undo updates the lines of its checkpoint (in the snapshot too) and Restore to here skips undone ones', () => {
    const { chat, posted } = presenter();
    chat.handle({ type: 'turn_recorded', point: { id: 'pt1', historyLength: 2, checkpointId: null }, checkpoint: null });
    chat.handle({ type: 'turn_recorded', point: { id: 'pt2', historyLength: 6, checkpointId: 'cp1' }, checkpoint: summary('cp1', ['a']) });
    chat.handle({ type: 'turn_recorded', point: { id: 'pt3', historyLength: 9, checkpointId: 'cp2' }, checkpoint: summary('cp2', ['b']) });
    const first = lines(chat)[0].id;
    assert.deepEqual(chat.checkpointsAfter(first), ['cp2', 'cp1'], 'newest first');
    chat.handle({ type: 'checkpoint_changed', checkpoint: summary('cp2', ['b'], 'undone') });
    assert.deepEqual(posted.at(-1), { type: 'checkpointUpdate', checkpoint: { checkpointId: 'cp2', state: 'undone', files: [{ path: 'b', change: 'modified' }] } });
    assert.equal(lines(chat)[2].checkpoint?.state, 'undone');
    assert.deepEqual(chat.checkpointsAfter(first), ['cp1']);
    assert.deepEqual(chat.checkpointsAfter(lines(chat)[2].id), [], 'nothing after the last line');
    assert.deepEqual(chat.checkpointsAfter('nope'), []);
  });

  it('shows the files an undo found changed, with which can be restored, and keeps the answers', () => {
    const { chat, posted } = presenter();
    const id = chat.undoConflicts('cp1', 'undo', [
      { path: 'a.ts', reason: 'modified', message: '"a.ts" was changed after this change was made; your version was kept.', canForce: true },
      { path: 'b', reason: 'not-a-file', message: '"b" is a folder or a link now', canForce: false },
    ]);
    chat.undoConflictResolved(id, 'a.ts', 'restore');
    assert.deepEqual(posted.at(-1), { type: 'undoConflictResolved', id, path: 'a.ts', resolution: 'restore' });
    const block = chat.snapshot().transcript.find((i) => i.kind === 'undoConflicts');
    assert.deepEqual(block?.kind === 'undoConflicts' && block.files.map((f) => [f.path, f.canRestore, f.resolution]), [
      ['a.ts', true, 'restore'],
      ['b', false, undefined],
    ]);
  });

  it('keeps the speculation files in the snapshot until a new chat', () => {
    const { chat } = presenter();
    const files = { runId: 'r1', files: [{ path: 'a.ts', change: 'modified' as const, added: 2, removed: 1, excluded: true }] };
    chat.setSpeculationFiles(files);
    assert.deepEqual(chat.snapshot().speculationFiles, files);
    chat.clear();
    assert.equal(chat.snapshot().speculationFiles, null);
  });
});
