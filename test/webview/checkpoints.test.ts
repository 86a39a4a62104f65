// The chat webview's checkpoint parts in Chromium: the line ending each turn (Undo / Redo, Changes,
// Restore to here on earlier lines), the undo conflict block, and the speculation's file list with
// +/− counts, a diff per file and per-file exclusion before Tab.
import * as assert from 'node:assert/strict';
import type { TranscriptItem } from '../../src/shared/protocol';
import { settle, useChatPages, type ChatPage } from './harness';

const changed = (id: string, checkpointId: string, text = 'Changed src/a.ts'): TranscriptItem => ({
  kind: 'turnEnd',
  id,
  text,
  historyLength: 4,
  checkpoint: { checkpointId, state: 'applied', files: [{ path: 'src/a.ts', change: 'modified' }] },
});

describe('chat webview: checkpoints', function () {
  this.timeout(20_000);
  const pages = useChatPages();
  let chat: ChatPage;
  beforeEach(() => {
    chat = pages.chat();
  });

  it('ends a turn with Undo and Changes; Undo becomes Redo when the host says it is undone', async () => {
    await chat.init();
    const { page } = chat;
    await chat.send({ type: 'userMessage', id: 'u1', text: 'edit a' });
    await chat.send({ type: 'appendItems', items: [changed('t1', 'cp1')] });
    await settle(page);
    const line = page.locator('.turn-end[data-id="t1"]');
    assert.match(await line.innerText(), /Changed src\/a\.ts\s*Undo\s*Changes/);
    assert.equal(await line.locator('[data-action="restore"]').isVisible(), false, 'the newest line is "here" already');

    await chat.clearPosted();
    await line.locator('[data-action="changes"]').click();
    assert.deepEqual(await chat.waitForPosted('checkpointAction'), { type: 'checkpointAction', checkpointId: 'cp1', action: 'changes' });
    await chat.clearPosted();
    await line.locator('[data-action="undo"]').click();
    assert.deepEqual(await chat.waitForPosted('checkpointAction'), { type: 'checkpointAction', checkpointId: 'cp1', action: 'undo' });

    await chat.send({ type: 'checkpointUpdate', checkpoint: { checkpointId: 'cp1', state: 'undone', files: [{ path: 'src/a.ts', change: 'modified' }] } });
    assert.equal(await line.locator('[data-action="undo"]').count(), 0);
    assert.equal(await line.locator('[data-action="redo"]').isVisible(), true);
    assert.match(await line.innerText(), /undone/);
  });

  it('offers Restore to here on every earlier line, also on turns that changed nothing, and survives a reload', async () => {
    const items: TranscriptItem[] = [
      { kind: 'user', id: 'u1', text: 'look' },
      { kind: 'turnEnd', id: 't1', text: '', historyLength: 2 },
      { kind: 'user', id: 'u2', text: 'edit' },
      changed('t2', 'cp1'),
      { kind: 'user', id: 'u3', text: 'edit more' },
      changed('t3', 'cp2', 'Speculated 1 tool call · 1.2 s saved'),
    ];
    await chat.init({ transcript: items });
    const { page } = chat;
    await settle(page);
    assert.equal(await page.locator('.turn-end[data-id="t1"] [data-action="restore"]').isVisible(), true);
    assert.equal(await page.locator('.turn-end[data-id="t1"] [data-action="undo"]').count(), 0, 'nothing to undo on a turn that changed nothing');
    assert.equal(await page.locator('.turn-end[data-id="t2"] [data-action="restore"]').isVisible(), true);
    assert.equal(await page.locator('.turn-end[data-id="t3"] [data-action="restore"]').isVisible(), false);
    await chat.clearPosted();
    await page.locator('.turn-end[data-id="t1"] [data-action="restore"]').click();
    assert.deepEqual(await chat.waitForPosted('restoreTo'), { type: 'restoreTo', turnEndId: 't1' });
    // The accept's line keeps the notice look (and its words) of before.
    assert.equal(await page.locator('.notice', { hasText: 'Speculated 1 tool call · 1.2 s saved' }).count(), 1);
  });

  it('lets the user choose per file when undo found files changed since, and says what was chosen', async () => {
    await chat.init();
    const { page } = chat;
    await chat.send({
      type: 'appendItems',
      items: [{ kind: 'undoConflicts', id: 'uc1', checkpointId: 'cp1', direction: 'undo', files: [
        { path: 'src/a.ts', reason: '"src/a.ts" was changed after this change was made; your version was kept.', canRestore: true },
        { path: 'lib', reason: '"lib" is a folder or a link now', canRestore: false },
      ] }],
    });
    const block = page.locator('.undo-conflicts[data-id="uc1"]');
    assert.match(await block.innerText(), /2 files were changed since — Undo left them alone/);
    assert.equal(await block.locator('li[data-path="lib"] [data-choice="restore"]').count(), 0, 'an unsafe file can only be kept');
    await chat.clearPosted();
    await block.locator('li[data-path="src/a.ts"] [data-choice="open-diff"]').click();
    assert.deepEqual(await chat.waitForPosted('undoConflictChoice'), { type: 'undoConflictChoice', conflictId: 'uc1', path: 'src/a.ts', choice: 'open-diff' });
    await chat.clearPosted();
    await block.locator('li[data-path="src/a.ts"] [data-choice="restore"]').click();
    assert.deepEqual(await chat.waitForPosted('undoConflictChoice'), { type: 'undoConflictChoice', conflictId: 'uc1', path: 'src/a.ts', choice: 'restore' });
    assert.match(await block.locator('li[data-path="src/a.ts"]').innerText(), /Restored/);
    await chat.send({ type: 'undoConflictResolved', id: 'uc1', path: 'lib', resolution: 'keep-mine' });
    assert.match(await block.locator('li[data-path="lib"]').innerText(), /Kept your version/);
  });

  it('lists the speculation files with +/− counts; a file opens as a diff and can be left out of the accept', async () => {
    await chat.init({
      suggestion: { id: 's1', text: 'add a farewell' },
      speculation: { state: 'ready', toolCalls: 2, filesWritten: ['src/a.ts', 'test/a.test.ts'], suggestionId: 's1' },
      speculationFiles: { runId: 'spec-1', files: [
        { path: 'src/a.ts', change: 'modified', added: 4, removed: 1, excluded: false },
        { path: 'test/a.test.ts', change: 'created', added: 12, removed: 0, excluded: false },
      ] },
    });
    const { page } = chat;
    const list = page.locator('.spec-files');
    assert.equal(await list.isVisible(), true);
    assert.match(await list.locator('.spec-files-summary').innerText(), /2 files\s*\+16 −1/);
    assert.match(await list.locator('[data-path="test/a.test.ts"]').innerText(), /test\/a\.test\.ts\s*new\s*\+12 −0/);

    await chat.clearPosted();
    await list.locator('[data-path="src/a.ts"] .spec-file-diff').click();
    assert.deepEqual(await chat.waitForPosted('previewChanges'), { type: 'previewChanges', path: 'src/a.ts' });
    await chat.clearPosted();
    await list.locator('[data-path="test/a.test.ts"] input[type="checkbox"]').uncheck();
    assert.deepEqual(await chat.waitForPosted('excludeFile'), { type: 'excludeFile', runId: 'spec-1', path: 'test/a.test.ts', excluded: true });

    // The host answers with the new list; the totals count only what Tab will apply.
    await chat.send({ type: 'speculationFiles', files: { runId: 'spec-1', files: [
      { path: 'src/a.ts', change: 'modified', added: 4, removed: 1, excluded: false },
      { path: 'test/a.test.ts', change: 'created', added: 12, removed: 0, excluded: true },
    ] } });
    assert.match(await list.locator('.spec-files-summary').innerText(), /\+4 −1\s*· 1 left out/);
    assert.equal(await list.locator('[data-path="test/a.test.ts"]').getAttribute('class'), 'spec-file change-created excluded');

    // A file some of whose changes were dropped before Tab says how many are still kept.
    await chat.send({ type: 'speculationFiles', files: { runId: 'spec-1', files: [
      { path: 'src/a.ts', change: 'modified', added: 3, removed: 1, excluded: false, hunks: { kept: 2, total: 3 } },
      { path: 'test/a.test.ts', change: 'created', added: 12, removed: 0, excluded: true },
    ] } });
    assert.match(await list.locator('[data-path="src/a.ts"]').innerText(), /2 of 3 changes kept/);
    assert.doesNotMatch(await list.locator('[data-path="test/a.test.ts"]').innerText(), /changes kept/);

    // When the speculation goes, so does its list.
    await chat.send({ type: 'speculation', status: { state: 'idle', toolCalls: 0, filesWritten: [] } });
    assert.equal(await list.isVisible(), false);
  });
});
