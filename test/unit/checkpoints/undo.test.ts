// Checkpoints of live changes and their undo: byte-for-byte restore (edited, created, deleted files,
// modes, folders), the conflict rule, undo twice, redo, a new process, symlink swaps, bad records.
import * as assert from 'node:assert/strict';
import { chmod, mkdir, readdir, rename, rm, stat, symlink, unlink, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { CheckpointSaveError } from '../../../src/core/checkpoints';
import { exists, snapshot } from '../followup/overlayKit';
import { flushed } from '../../../src/core/fs/pendingFlush';
import { faultyFs, makeCheckpointBox, type CheckpointBox } from './checkpointKit';

const FILES = {
  'src/app.ts': 'export const app = 1;\n',
  'src/util.ts': 'export const util = 1;\n',
  'scripts/run.sh': { content: '#!/bin/sh\necho run\n', mode: 0o755 },
  'restricted.txt': { content: 'owner and group only\n', mode: 0o640 },
  'docs/old.md': 'old docs\n',
  'untouched.txt': 'never touched\n',
};

/** A turn of the live agent: edits, a created file in new folders, a deletion, a rename, a mode-kept rewrite. */
async function agentTurn(box: CheckpointBox, prompt = 'refactor') {
  const fs = box.recorder();
  fs.begin({ kind: 'turn', prompt });
  await fs.writeFile('src/app.ts', 'export const app = 2;\n');
  await fs.writeFile('src/app.ts', 'export const app = 3;\n');
  await fs.writeFile('new/deep/created.ts', 'created\n');
  await fs.delete('docs/old.md');
  await fs.rename('src/util.ts', 'lib/util.ts');
  await fs.writeFile('scripts/run.sh', '#!/bin/sh\necho faster\n');
  await fs.writeFile('restricted.txt', 'still owner and group only\n');
  return fs.seal();
}

describe('checkpoints: undo', () => {
  let box: CheckpointBox;
  beforeEach(async () => {
    box = await makeCheckpointBox(FILES);
  });
  afterEach(() => box.dispose());

  it('undoes an edit of a file whose name is as long as the file system allows (255 bytes, multi-byte)', async () => {
    // 'é' is two bytes: the undo's temp name must be cut at a character, never mid-way, and still fit.
    const longName = `docs/${'é'.repeat(127)}x`;
    assert.equal(Buffer.byteLength(path.posix.basename(longName)), 255);
    await writeFile(path.join(box.ws, longName), 'before\n');
    const before = await snapshot(box.ws);
    const fs = box.recorder();
    fs.begin({ kind: 'turn', prompt: 'edit the long one' });
    await fs.writeFile(longName, 'after\n');
    const summary = await fs.seal();
    assert.ok(summary);
    const result = await box.store.undo(summary.id);
    assert.ok(result.ok, JSON.stringify(result));
    assert.deepEqual(result.restored, [longName]);
    assert.deepEqual(await snapshot(box.ws), before, 'the file is back and no temp is left beside it');
  });

  it('records what a turn changed and undo puts the workspace back byte for byte', async () => {
    const before = await snapshot(box.ws);
    const summary = await agentTurn(box);
    assert.ok(summary);
    assert.deepEqual(summary.files.map((f) => [f.path, f.change]).sort(), [
      ['docs/old.md', 'deleted'],
      ['lib/util.ts', 'created'],
      ['new/deep/created.ts', 'created'],
      ['restricted.txt', 'modified'],
      ['scripts/run.sh', 'modified'],
      ['src/app.ts', 'modified'],
      ['src/util.ts', 'deleted'],
    ]);
    assert.notDeepEqual(await snapshot(box.ws), before);

    const result = await box.store.undo(summary.id);
    assert.ok(result.ok);
    assert.deepEqual(result.conflicts, []);
    assert.deepEqual(result.restored, summary.files.map((f) => f.path).sort());
    // Contents, modes (0755, 0640), the emptied docs/ folder back, new/ and lib/ gone: exactly as before.
    assert.deepEqual(await snapshot(box.ws), before);
    assert.equal((await box.store.read(summary.id)).ok && (await box.store.list())[0].state, 'undone');
  });

  it('a file the user changed after the change is a conflict and keeps the user version; the rest is restored', async () => {
    const summary = (await agentTurn(box))!;
    await box.write('src/app.ts', 'the user typed this\n');
    await unlink(path.join(box.ws, 'new/deep/created.ts'));

    const plan = await box.store.planUndo(summary.id);
    assert.ok(plan.ok);
    assert.deepEqual(plan.conflicts.map((c) => [c.path, c.reason, c.canForce]), [['src/app.ts', 'modified', true]]);

    const result = await box.store.undo(summary.id);
    assert.ok(result.ok);
    assert.deepEqual(result.conflicts.map((c) => c.path), ['src/app.ts']);
    assert.match(result.conflicts[0].message, /"src\/app\.ts" was changed after this change was made; your version was kept/);
    assert.equal(await box.read('src/app.ts'), 'the user typed this\n');
    assert.equal(await box.read('src/util.ts'), 'export const util = 1;\n');
    assert.equal(await exists(path.join(box.ws, 'new')), false, 'the folders the turn created are gone once empty');
    assert.ok(result.restored.includes('new/deep/created.ts'), 'a created file the user deleted already is as before');

    // Undoing again takes up only what was kept; forcing it restores the file, and the user's version is saved for redo.
    const forced = await box.store.undo(summary.id, { force: true });
    assert.ok(forced.ok);
    assert.deepEqual([forced.restored, forced.conflicts], [['src/app.ts'], []]);
    assert.equal(await box.read('src/app.ts'), 'export const app = 1;\n');
    const redo = await box.store.redo(summary.id);
    assert.ok(redo.ok);
    assert.equal(await box.read('src/app.ts'), 'the user typed this\n', 'redo puts back what the forced undo replaced');
  });

  it('undo twice says so and changes nothing', async () => {
    const summary = (await agentTurn(box))!;
    assert.ok((await box.store.undo(summary.id)).ok);
    const after = await snapshot(box.ws);
    const again = await box.store.undo(summary.id);
    assert.deepEqual(again, { ok: false, reason: 'already-undone', message: `Checkpoint "${summary.id}" is already undone; nothing was changed.` });
    assert.deepEqual(await snapshot(box.ws), after);
  });

  it('redo brings the change back exactly, and the checkpoint can be undone again', async () => {
    const summary = (await agentTurn(box))!;
    const changed = await snapshot(box.ws);
    assert.ok((await box.store.undo(summary.id)).ok);
    const redone = await box.store.redo(summary.id);
    assert.ok(redone.ok);
    assert.deepEqual(redone.conflicts, []);
    assert.deepEqual(await snapshot(box.ws), changed);
    assert.equal((await box.store.redo(summary.id)).ok, false, 'nothing to redo any more');
    assert.ok((await box.store.undo(summary.id)).ok);
  });

  it('right after an undo returns (its flush still running) the replaced bytes are there for a redo, and on disk once flushed', async () => {
    const summary = (await agentTurn(box))!;
    await flushed(box.store.root);
    const changed = await snapshot(box.ws);
    assert.ok((await box.store.undo(summary.id)).ok);
    // The undo's replaced bytes ride in its redo log; they are stored under their names by the flush.
    const plan = await box.store.planRedo(summary.id);
    assert.ok(plan.ok, JSON.stringify(plan));
    assert.deepEqual(plan.conflicts, [], 'no saved copy is unavailable');
    const read = await box.store.read(summary.id);
    assert.ok(read.ok && read.record.undo);
    const replaced = read.record.undo.paths.flatMap((p) => (p.replaced.exists ? [p.replaced.sha256] : []));
    assert.ok(replaced.length > 0);
    for (const hash of replaced) assert.ok((await box.store.blobs.read(hash)).length >= 0);
    await flushed(box.store.root);
    for (const hash of replaced) assert.ok(await box.store.blobs.hasOnDisk(hash), 'stored under its name after the flush');
    assert.ok((await box.store.redo(summary.id)).ok);
    assert.deepEqual(await snapshot(box.ws), changed);
  });

  it('a redo over a file changed since the undo keeps the user version', async () => {
    const summary = (await agentTurn(box))!;
    await box.store.undo(summary.id);
    await box.write('src/app.ts', 'edited after the undo\n');
    const redone = await box.store.redo(summary.id);
    assert.ok(redone.ok);
    assert.deepEqual(redone.conflicts.map((c) => [c.path, c.reason]), [['src/app.ts', 'modified']]);
    assert.match(redone.conflicts[0].message, /after it was undone/);
    assert.equal(await box.read('src/app.ts'), 'edited after the undo\n');
    assert.equal(await box.read('new/deep/created.ts'), 'created\n');
  });

  it('checkpoints survive a new process: another store object lists and undoes them', async () => {
    const before = await snapshot(box.ws);
    const summary = (await agentTurn(box))!;
    const later = await box.reopen();
    assert.deepEqual((await later.list()).map((c) => [c.id, c.state]), [[summary.id, 'applied']]);
    assert.ok((await later.undo(summary.id)).ok);
    assert.deepEqual(await snapshot(box.ws), before);
  });

  it('an unknown, malformed or foreign checkpoint is an error and changes nothing', async () => {
    const summary = (await agentTurn(box))!;
    const after = await snapshot(box.ws);
    const unknown = await box.store.undo('20200101-000000-00000000');
    assert.equal(unknown.ok === false && unknown.reason, 'unknown');
    await writeFile(path.join(box.store.recordsDir, `${summary.id}.json`), '{"version":1,"id":"x"');
    const broken = await box.store.undo(summary.id);
    assert.equal(broken.ok === false && broken.reason, 'malformed');
    assert.deepEqual(await snapshot(box.ws), after);
    await assert.rejects(box.store.undo('../escape'), /not a checkpoint id/);
  });

  it('never follows a folder swapped for a symlink out of the workspace', async () => {
    const summary = (await agentTurn(box))!;
    await rm(path.join(box.ws, 'src'), { recursive: true });
    await symlink(box.outside, path.join(box.ws, 'src'));
    const outsideBefore = await snapshot(box.outside);
    const result = await box.store.undo(summary.id, { force: true });
    assert.ok(result.ok);
    assert.deepEqual(result.conflicts.map((c) => [c.path, c.reason, c.canForce]), [
      ['src/app.ts', 'outside-workspace', false],
      ['src/util.ts', 'outside-workspace', false],
    ]);
    assert.deepEqual(await snapshot(box.outside), outsideBefore);
    assert.equal(await box.read('docs/old.md'), 'old docs\n');
  });

  it('a folder where a file was is a conflict that cannot be forced', async () => {
    const summary = (await agentTurn(box))!;
    await rm(path.join(box.ws, 'lib'), { recursive: true });
    await mkdir(path.join(box.ws, 'lib/util.ts'), { recursive: true });
    const result = await box.store.undo(summary.id, { force: true });
    assert.ok(result.ok);
    assert.deepEqual(result.conflicts.map((c) => [c.path, c.reason]), [['lib/util.ts', 'not-a-file']]);
    assert.equal((await stat(path.join(box.ws, 'lib/util.ts'))).isDirectory(), true);
  });

  it('a turn that changed nothing leaves no checkpoint', async () => {
    const fs = box.recorder();
    fs.begin({ kind: 'turn', prompt: 'look around' });
    await fs.readFile('src/app.ts');
    assert.equal(await fs.seal(), null);
    const same = box.recorder();
    same.begin({ kind: 'turn', prompt: 'rewrite the same' });
    await same.writeFile('src/app.ts', 'export const app = 1;\n');
    assert.equal(await same.seal(), null, 'writing identical bytes is no change');
    assert.deepEqual(await readdir(box.store.recordsDir), []);
  });

  it('a write whose checkpoint cannot be saved does not happen', async () => {
    const broken = await box.reopen({ fs: faultyFs('writeDurable', /\/blobs\//, 'ENOSPC'), isProcessAlive: () => true });
    const fs = box.recorder(broken);
    fs.begin({ kind: 'turn', prompt: 'edit' });
    await assert.rejects(fs.writeFile('src/app.ts', 'lost?\n'), (error: unknown) => error instanceof CheckpointSaveError && /could not save a checkpoint of "src\/app\.ts".*ENOSPC.*nothing was written/.test(error.message));
    assert.equal(await box.read('src/app.ts'), 'export const app = 1;\n');
    // A new file has no bytes to save, but the record itself must still be written first.
    const noRecords = await box.reopen({ fs: faultyFs('writeDurable', /\/records\//, 'EIO'), isProcessAlive: () => true });
    const again = box.recorder(noRecords);
    await assert.rejects(again.writeFile('fresh.txt', 'x'), CheckpointSaveError);
    assert.equal(await exists(path.join(box.ws, 'fresh.txt')), false);
  });

  it('restores the before-state even when the user made the file read-only in between', async () => {
    const mode = (await stat(path.join(box.ws, 'src/app.ts'))).mode & 0o777;
    const summary = (await agentTurn(box))!;
    await chmod(path.join(box.ws, 'src/app.ts'), 0o400);
    const result = await box.store.undo(summary.id);
    assert.ok(result.ok);
    assert.equal(await box.read('src/app.ts'), 'export const app = 1;\n');
    assert.equal((await stat(path.join(box.ws, 'src/app.ts'))).mode & 0o777, mode, 'the mode from before the change comes back');
  });

  it('restores a file the change deleted into a folder that is gone since', async () => {
    const summary = (await agentTurn(box))!;
    await rename(path.join(box.ws, 'src'), path.join(box.ws, 'src-moved'));
    await rm(path.join(box.ws, 'src-moved'), { recursive: true });
    const result = await box.store.undo(summary.id);
    assert.ok(result.ok);
    // src/app.ts was modified and is now gone: a conflict; src/util.ts (deleted by the move) comes back into a new src/.
    assert.deepEqual(result.conflicts.map((c) => [c.path, c.reason]), [['src/app.ts', 'deleted']]);
    assert.equal(await box.read('src/util.ts'), 'export const util = 1;\n');
    const redo = await box.store.redo(summary.id);
    assert.ok(redo.ok);
    assert.equal(await exists(path.join(box.ws, 'src')), false, 'redo removes the folder the undo had to create');
  });
});
