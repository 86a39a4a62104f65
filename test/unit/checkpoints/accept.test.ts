// The checkpoint of an accept, saved through the accept's own hook from what its journal knows:
// undo restores the workspace byte for byte; it is on disk before the first file is replaced (a
// crash mid-commit is rolled forward and still undoable); a checkpoint that cannot be saved stops
// the accept with nothing changed; a file that changes at that moment stays the user's.
import * as assert from 'node:assert/strict';
import { chmod, stat } from 'node:fs/promises';
import * as path from 'node:path';
import { CheckpointStore } from '../../../src/core/checkpoints';
import { checkpointHook } from '../../../src/core/followup/acceptCheckpoint';
import { OverlayApplyError, recoverInterruptedApplies, type OverlayFs } from '../../../src/core/followup/overlayFs';
import { exists, makeSandbox, snapshot, type Sandbox } from '../followup/overlayKit';
import { faultyFs } from './checkpointKit';

const DEAD_PID = 3_999_998;

async function speculate(overlay: OverlayFs): Promise<void> {
  await overlay.writeFile('a.txt', 'a speculated\n');
  await overlay.writeFile('bin/run.sh', '#!/bin/sh\necho faster\n');
  await overlay.writeFile('new/deep/created.txt', 'created\n');
  await overlay.delete('gone.txt');
  await overlay.delete('olddir/only.txt');
  await overlay.delete('olddir');
}

describe('checkpoints: an accept', () => {
  let box: Sandbox;
  let store: CheckpointStore;
  beforeEach(async () => {
    box = await makeSandbox({ 'a.txt': 'a original\n', 'bin/run.sh': { content: '#!/bin/sh\necho run\n', mode: 0o755 }, 'gone.txt': 'to be deleted\n', 'olddir/only.txt': 'only\n', 'keep.txt': 'untouched\n' });
    await chmod(path.join(box.ws, 'a.txt'), 0o600);
    store = await CheckpointStore.open({ stateDir: path.join(box.parent, 'state'), workspaceRoot: box.ws });
  });
  afterEach(async () => {
    await box.dispose();
  });

  it('records every replaced file before replacing it, and undo puts the workspace back byte for byte', async () => {
    const before = await snapshot(box.ws);
    const overlay = await box.open();
    await speculate(overlay);
    const recording = store.begin({ kind: 'accept', suggestion: 'speed up run.sh', runId: 'r1' });
    let savedBeforeFirstReplace = false;
    const hook = checkpointHook(recording, new Set());
    const result = await overlay.applyToReal({
      beforeReplace: async (plan) => {
        const answer = await hook(plan);
        // The record is on disk, every before-state in it, while the real files are still the old ones.
        const read = await store.read(recording.id);
        savedBeforeFirstReplace = read.ok && read.record.files.length === 5 && (await box.read('a.txt')) === 'a original\n';
        return answer;
      },
    });
    assert.equal(savedBeforeFirstReplace, true);
    assert.deepEqual(result.conflicts, []);
    const summary = await recording.finish(result.applied);
    assert.deepEqual(summary?.files.map((f) => [f.path, f.change]).sort(), [
      ['a.txt', 'modified'], ['bin/run.sh', 'modified'], ['gone.txt', 'deleted'], ['new/deep/created.txt', 'created'], ['olddir/only.txt', 'deleted'],
    ]);
    assert.equal(await exists(path.join(box.ws, 'olddir')), false);

    const undone = await store.undo(summary!.id);
    assert.ok(undone.ok);
    assert.deepEqual(undone.conflicts, []);
    assert.deepEqual(await snapshot(box.ws), before, 'contents, modes 0600 and 0755, olddir/ back, new/ gone');
    assert.equal((await stat(path.join(box.ws, 'a.txt'))).mode & 0o777, 0o600);
  });

  it('a crash in the middle of the commit is rolled forward at the next start and the accept still undoes', async () => {
    const before = await snapshot(box.ws);
    const overlay = await box.open({ pid: DEAD_PID, onApplyStep: (event) => {
      if (event.phase === 'committed' && event.index === 1) throw Object.assign(new Error('simulated crash'), { name: 'Crash' });
    } });
    await speculate(overlay);
    const dying = await CheckpointStore.open({ stateDir: path.join(box.parent, 'state'), workspaceRoot: box.ws, pid: DEAD_PID });
    const recording = dying.begin({ kind: 'accept', suggestion: 's', runId: 'r1' });
    await assert.rejects(overlay.applyToReal({ beforeReplace: checkpointHook(recording, new Set()) }), /simulated crash/);

    // The next start: the overlay's journal first, then the checkpoints.
    const [outcome] = await recoverInterruptedApplies({ tmpRoot: box.tmpRoot, fallbackTmpRoots: [], workspaces: [box.ws], isProcessAlive: (pid) => pid === process.pid });
    assert.equal(outcome.outcome, 'rolled-forward');
    const report = await store.recover();
    assert.deepEqual(report.recordings.map((r) => r.outcome), ['completed']);
    const [summary] = await store.list();
    assert.equal(summary.files.length, 5);
    assert.ok((await store.undo(summary.id)).ok);
    assert.deepEqual(await snapshot(box.ws), before);
  });

  it('a checkpoint that cannot be saved stops the accept: nothing in the workspace changes', async () => {
    const before = await snapshot(box.ws);
    const overlay = await box.open();
    await speculate(overlay);
    const full = await CheckpointStore.open({ stateDir: path.join(box.parent, 'state'), workspaceRoot: box.ws, fs: faultyFs('writeDurable', /\/blobs\//, 'ENOSPC') });
    const recording = full.begin({ kind: 'accept', suggestion: 's', runId: 'r1' });
    await assert.rejects(
      overlay.applyToReal({ beforeReplace: checkpointHook(recording, new Set()) }),
      (error: unknown) => error instanceof OverlayApplyError && /checkpoint that undoes it could not be saved .*ENOSPC.*no file in the workspace was changed/.test(error.message),
    );
    assert.deepEqual(await snapshot(box.ws), before);
    assert.equal(overlay.writtenFiles().length, 5, 'the speculation is still there to accept again');
  });

  it('a file that changes while its state is being saved is a conflict and keeps the user version', async () => {
    const overlay = await box.open();
    await speculate(overlay);
    const recording = store.begin({ kind: 'accept', suggestion: 's', runId: 'r1' });
    const hook = checkpointHook(recording, new Set());
    const result = await overlay.applyToReal({
      beforeReplace: async (plan) => {
        await box.write('a.txt', 'typed at that very moment\n');
        return hook(plan);
      },
    });
    assert.deepEqual(result.conflicts.map((c) => [c.path, c.reason]), [['a.txt', 'modified']]);
    assert.equal(await box.read('a.txt'), 'typed at that very moment\n');
    const summary = await recording.finish(result.applied);
    assert.ok(!summary?.files.some((f) => f.path === 'a.txt'), 'what was not replaced is not in the checkpoint');
  });
});
