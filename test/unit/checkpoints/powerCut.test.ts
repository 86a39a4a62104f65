// Power cuts at every moment of an accept (and of an undo) that commits with a redo log: the disk
// keeps only what was fsync'd, the next start recovers, and every file is wholly old or wholly new —
// old before the log's commit point, new after it — and a file the user edits after the cut stays theirs.
import * as assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { CheckpointStore } from '../../../src/core/checkpoints';
import { checkpointHook } from '../../../src/core/followup/acceptCheckpoint';
import { flushed } from '../../../src/core/fs/pendingFlush';
import { exists, makeSandbox, snapshot, tempFiles, type Sandbox } from '../followup/overlayKit';
import { PowerCutFs } from './powerCutFs';

const DEAD_PID = 3_999_321;
const COUNT = 100;
const fileName = (i: number) => `pkg${i % 2}/file${i}.txt`;
const oldText = (i: number) => `old content of file ${i}\n`.repeat(8);
const newText = (i: number) => `NEW content of file ${i}, longer than before\n`.repeat(9);
const USER_EDIT = 'typed by the user after the power came back\n';

function workspaceFiles(): Record<string, string> {
  const files: Record<string, string> = { 'gone.txt': 'deleted by the accept\n' };
  for (let i = 0; i < COUNT; i++) files[fileName(i)] = oldText(i);
  return files;
}

/**
 * The prefix length right after the redo log's commit point: the fsync of its folder after the
 * fsync of a new log, or the flush of a log written into a slot made ahead (its name already durable).
 */
function commitPoint(cut: PowerCutFs, journalsDir: string, slots: boolean): number {
  if (slots) {
    const written = cut.ops.findIndex((op) => op.op === 'overwrite' && op.path.startsWith(journalsDir) && op.data.subarray(0, 9).toString('latin1') === 'SPECREDO1');
    assert.ok(written >= 0, 'the log is written into a slot');
    const slot = (cut.ops[written] as { path: string }).path;
    assert.match(path.basename(slot), /^slot-\d+-[0-9a-f]+\.redo$/);
    const synced = cut.ops.findIndex((op, index) => index > written && op.op === 'fsync' && op.path === slot);
    assert.ok(synced > written, 'and flushed');
    assert.ok(!cut.ops.some((op) => op.op === 'create' && op.path.startsWith(journalsDir) && op.path.endsWith('.redo')), 'no new log file is made');
    const firstRename = cut.ops.findIndex((op) => op.op === 'rename' && op.to.startsWith(path.dirname(journalsDir)) === false);
    assert.ok(firstRename > synced, 'no workspace file is renamed before the commit point');
    return synced + 1;
  }
  const logSynced = cut.ops.findIndex((op) => op.op === 'fsync' && op.path.startsWith(journalsDir) && op.path.endsWith('.redo'));
  assert.ok(logSynced >= 0, 'the log is fsync’d');
  const dirSynced = cut.ops.findIndex((op, index) => index > logSynced && op.op === 'fsyncDir' && op.path === journalsDir);
  assert.ok(dirSynced > logSynced, 'its folder is fsync’d after it');
  const firstRename = cut.ops.findIndex((op) => op.op === 'rename' && op.to.startsWith(path.dirname(journalsDir)) === false);
  assert.ok(firstRename > dirSynced, 'no workspace file is renamed before the commit point');
  return dirSynced + 1;
}

/** What is in the workspace, per file: 'old', 'new', 'user' or 'other' (mixed, torn, anything else). */
async function states(ws: string, editedIndex: number | undefined): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < COUNT; i++) {
    const text = await readFile(path.join(ws, fileName(i)), 'utf8').catch(() => undefined);
    out.push(text === oldText(i) ? 'old' : text === newText(i) ? 'new' : i === editedIndex && text === USER_EDIT ? 'user' : `other: ${JSON.stringify(text?.slice(0, 40))}`);
  }
  const created = await readFile(path.join(ws, 'new/created.txt'), 'utf8').catch(() => undefined);
  out.push(created === undefined ? 'old' : created === 'created by the accept\n' ? 'new' : 'other');
  const gone = await readFile(path.join(ws, 'gone.txt'), 'utf8').catch(() => undefined);
  out.push(gone === 'deleted by the accept\n' ? 'old' : gone === undefined ? 'new' : 'other');
  return out;
}

/** Whether a power cut after `count` operations leaves a redo log (a slot that was cleared holds none). */
function logSurvives(cut: PowerCutFs, count: number, torn: boolean): boolean {
  return [...cut.survivors(count, torn)].some(([file, node]) => file.endsWith('.redo') && node.kind === 'file' && node.data.subarray(0, 9).toString('latin1') === 'SPECREDO1');
}

async function redoLogsIn(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((name) => name.endsWith('.redo'));
}

for (const slots of [false, true]) describe(`redo log${slots ? ' in a slot made ahead' : ''}: a power cut after every prefix`, function () {
  this.timeout(300_000);
  let box: Sandbox;
  beforeEach(async () => {
    box = await makeSandbox(workspaceFiles());
  });
  afterEach(async () => {
    await box.dispose();
  });

  async function accept(cut: PowerCutFs | undefined): Promise<{ store: CheckpointStore; id: string | undefined }> {
    const stateDir = path.join(box.parent, 'state');
    const store = await CheckpointStore.open({ stateDir, workspaceRoot: box.ws, pid: DEAD_PID, ...(cut ? { fs: cut.checkpointFs } : {}) });
    if (slots) await store.slots.prepare();
    const overlay = await box.open({ pid: DEAD_PID, ...(cut ? { applyFs: cut.applyFs } : {}) });
    for (let i = 0; i < COUNT; i++) await overlay.writeFile(fileName(i), newText(i));
    await overlay.writeFile('new/created.txt', 'created by the accept\n');
    await overlay.delete('gone.txt');
    await cut?.watch([box.ws, store.dir]);
    const recording = store.begin({ kind: 'accept', suggestion: 'rewrite everything', runId: 'r1' });
    const result = await overlay.applyToReal({ beforeReplace: checkpointHook(recording, new Set()), redoDir: recording.redoDir });
    assert.equal(result.applied.length, COUNT + 2);
    const summary = await recording.finish(result.applied);
    await overlay.flushed();
    return { store, id: summary?.id };
  }

  async function recoverAfterCut(): Promise<CheckpointStore> {
    const next = await CheckpointStore.open({ stateDir: path.join(box.parent, 'state'), workspaceRoot: box.ws, pid: DEAD_PID + 1, isProcessAlive: () => false });
    const report = await next.recover();
    assert.deepEqual(report.failures, []);
    return next;
  }

  it('an accept of 100 files with its checkpoint: wholly old before the commit point, wholly new after it, never a user edit lost', async () => {
    const original = await snapshot(box.ws);
    const cut = new PowerCutFs();
    const { store } = await accept(cut);
    const total = cut.ops.length;
    const commit = commitPoint(cut, store.journalsDir, slots);
    assert.ok(total > 3 * COUNT, `the accept's operations are all recorded (${total})`);
    const seen = new Set<string>();
    let distinct = 0;
    let undoneOnce = false;
    // torn: an overwrite not yet flushed (a log into its slot, a slot being cleared) got its first sector onto the disk.
    for (let k = 0; k <= total; k++) for (const torn of [false, true]) {
      const key = cut.stateKey(k, torn);
      if (seen.has(key)) continue;
      seen.add(key);
      distinct++;
      for (const edited of [undefined, 7]) {
        await cut.cutAfter(k, torn);
        if (edited !== undefined) await writeFile(path.join(box.ws, fileName(edited)), USER_EDIT);
        const next = await recoverAfterCut();
        const now = await states(box.ws, edited);
        const want = k >= commit ? 'new' : 'old';
        assert.deepEqual(now.map((s, i) => (i === edited ? s : s === want ? want : s)), now.map((_, i) => (i === edited ? 'user' : want)), `power cut after ${k} of ${total} operations (commit point ${commit}), torn: ${torn}, user edit: ${edited !== undefined}`);
        assert.deepEqual(await tempFiles(box.ws), [], `no temp left after ${k}`);
        assert.deepEqual(await redoLogsIn(next.journalsDir), [], `no log left after ${k}`);
        const checkpoints = await next.list();
        if (k < commit) {
          assert.deepEqual(checkpoints, [], `an uncommitted accept leaves no checkpoint (after ${k})`);
          assert.equal(await exists(path.join(box.ws, 'new')), false, 'nor the folder it would have made');
        } else {
          assert.equal(checkpoints.length, 1, `a committed accept keeps its checkpoint (after ${k})`);
          if (!undoneOnce && edited === undefined) {
            // The before-state came from the log: undo gives back the workspace byte for byte.
            const undone = await next.undo(checkpoints[0].id);
            assert.ok(undone.ok && undone.conflicts.length === 0, `undo after a cut at ${k}`);
            await next.undo(checkpoints[0].id).catch(() => undefined);
            assert.deepEqual(await snapshot(box.ws), original);
            undoneOnce = true;
          }
        }
      }
    }
    assert.ok(undoneOnce);
    assert.ok(distinct >= 3, `prefixes leave several different disks (${distinct})`);
  });

  it('an undo of that accept: wholly new before its commit point, wholly old after it, never a user edit lost', async () => {
    const { id } = await accept(undefined);
    assert.ok(id);
    const cut = new PowerCutFs();
    const stateDir = path.join(box.parent, 'state');
    const store = await CheckpointStore.open({ stateDir, workspaceRoot: box.ws, pid: DEAD_PID, fs: cut.checkpointFs });
    if (slots) await store.slots.prepare();
    await cut.watch([box.ws, store.dir]);
    const undone = await store.undo(id);
    assert.ok(undone.ok && undone.restored.length === COUNT + 2);
    await flushed(store.root);
    const total = cut.ops.length;
    const commit = commitPoint(cut, store.journalsDir, slots);
    const seen = new Set<string>();
    for (let k = 0; k <= total; k++) for (const torn of [false, true]) {
      const key = cut.stateKey(k, torn);
      if (seen.has(key)) continue;
      seen.add(key);
      for (const edited of [undefined, 7]) {
        await cut.cutAfter(k, torn);
        if (edited !== undefined) await writeFile(path.join(box.ws, fileName(edited)), USER_EDIT);
        const next = await recoverAfterCut();
        const now = await states(box.ws, edited);
        // Undo takes the workspace back: before its commit point it still holds the accept's files.
        const want = k >= commit ? 'old' : 'new';
        assert.deepEqual(now, now.map((_, i) => (i === edited ? 'user' : want)), `power cut after ${k} of ${total} operations of the undo (commit point ${commit}), torn: ${torn}, user edit: ${edited !== undefined}`);
        assert.deepEqual(await tempFiles(box.ws), []);
        assert.deepEqual(await redoLogsIn(next.journalsDir), []);
        const read = await next.read(id);
        assert.ok(read.ok);
        assert.equal(read.record.state, k >= commit ? 'undone' : 'applied', `the record says what the disk holds (after ${k})`);
        // While its log survives, the next start finishes the undo and says the edited file was kept.
        if (k >= commit && edited !== undefined && logSurvives(cut, k, torn)) assert.deepEqual(read.record.undo?.kept, [fileName(edited)], 'the edited file is a conflict, kept');
      }
    }
    assert.ok(seen.size >= 3);
  });
});
