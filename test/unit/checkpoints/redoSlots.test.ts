// Redo logs made ahead (issue 28): an accept or undo commits by writing its log into a slot made
// beforehand — no new file on the wait —, the slot is cleared after the flush and used again; a log
// that does not fit, or a slot that vanished, falls back to a new file; a dead process's slot is
// finished (or removed) at the next start, a live one's never touched (unless its pid is an earlier
// process's, reused); the undo lock stops a second
// window's undo of the same checkpoint.
import * as assert from 'node:assert/strict';
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { CheckpointStore } from '../../../src/core/checkpoints';
import { nodeCheckpointFs, type CheckpointFs } from '../../../src/core/checkpoints/checkpointFs';
import { restoreLockPath } from '../../../src/core/checkpoints/restoreLock';
import { checkpointHook } from '../../../src/core/followup/acceptCheckpoint';
import { nodeApplyFs, type ApplyFs } from '../../../src/core/followup/overlay/applyFs';
import type { OverlayFs } from '../../../src/core/followup/overlayFs';
import { flushed } from '../../../src/core/fs/pendingFlush';
import { decodeRedoLog, encodeRedoLog, type RedoPlan } from '../../../src/core/fs/redoLog';
import { SLOT_BYTES, SPARE_SLOTS, slotOwner } from '../../../src/core/fs/redoSlots';
import { exists, makeSandbox, snapshot, type Sandbox } from '../followup/overlayKit';

const DEAD_PID = 3_999_611;
const MAGIC = 'SPECREDO1';

const slotsIn = async (dir: string) => (await readdir(dir)).filter((name) => slotOwner(name) !== undefined).sort();
const holdsLog = async (file: string) => (await readFile(file)).subarray(0, MAGIC.length).toString('latin1') === MAGIC;

describe('redo-log slots made ahead', () => {
  let box: Sandbox;
  beforeEach(async () => {
    box = await makeSandbox({ 'a.txt': 'a original\n', 'b.txt': 'b original\n', 'gone.txt': 'to be deleted\n' });
  });
  afterEach(async () => {
    await box.dispose();
  });

  const stateDir = () => path.join(box.parent, 'state');

  async function speculate(overlay: OverlayFs): Promise<void> {
    await overlay.writeFile('a.txt', 'a speculated\n');
    await overlay.writeFile('b.txt', 'b speculated\n');
    await overlay.delete('gone.txt');
  }

  async function accept(store: CheckpointStore, overlay: OverlayFs) {
    const recording = store.begin({ kind: 'accept', suggestion: 's', runId: 'r1' });
    const result = await overlay.applyToReal({ beforeReplace: checkpointHook(recording, new Set()), redoDir: recording.redoDir });
    const summary = await recording.finish(result.applied);
    return { result, summary };
  }

  it('a log decodes whole with what the slot held after it, and a log torn in its first sector is not committed', () => {
    const plan: RedoPlan = { version: 1, kind: 'accept', pid: 1, workspaceRoot: '/w', steps: [], createdDirs: [] };
    const log = encodeRedoLog(plan, [Buffer.from('body')]);
    const inSlot = Buffer.concat([log, Buffer.alloc(SLOT_BYTES - log.length, 7)]);
    assert.equal(decodeRedoLog(inSlot).committed, true, 'the old bytes after the log are no part of it');
    const bigger = encodeRedoLog(plan, [Buffer.alloc(2048, 1)]);
    const torn = Buffer.concat([bigger.subarray(0, 512), Buffer.alloc(SLOT_BYTES - 512)]);
    assert.equal(decodeRedoLog(torn).committed, false);
  });

  it('an accept and its undo commit into slots made ahead: no new log file, each slot cleared and ready again after the flush', async () => {
    const before = await snapshot(box.ws);
    const store = await CheckpointStore.open({ stateDir: stateDir(), workspaceRoot: box.ws });
    await store.slots.prepare();
    const slots = await slotsIn(store.journalsDir);
    assert.equal(slots.length, SPARE_SLOTS);
    for (const slot of slots) assert.equal((await readFile(path.join(store.journalsDir, slot))).length, SLOT_BYTES);

    const created: string[] = [];
    const watching: ApplyFs = { ...nodeApplyFs, createFile: async (file, data, options) => { created.push(file); await nodeApplyFs.createFile(file, data, options); } };
    const overlay = await box.open({ applyFs: watching });
    await speculate(overlay);
    const { result, summary } = await accept(store, overlay);
    assert.deepEqual(result.applied, ['a.txt', 'b.txt', 'gone.txt']);
    assert.equal(await box.read('a.txt'), 'a speculated\n');
    assert.deepEqual(created.filter((file) => file.startsWith(store.journalsDir)), [], 'the log went into a slot');
    await overlay.flushed();
    assert.deepEqual(await slotsIn(store.journalsDir), slots, 'the same slots, no other log');
    for (const slot of slots) assert.equal(await holdsLog(path.join(store.journalsDir, slot)), false, `${slot} is cleared after the flush`);
    assert.equal(store.slots.readyCount, SPARE_SLOTS);

    const undone = await store.undo(summary!.id);
    assert.ok(undone.ok && undone.conflicts.length === 0);
    assert.deepEqual(await snapshot(box.ws), before);
    await flushed(store.root);
    assert.deepEqual((await readdir(store.journalsDir)).filter((name) => name !== 'set-aside').sort(), slots, 'no log and no lock left');
    assert.deepEqual(await readdir(path.join(store.journalsDir, 'set-aside')), [], 'the replaced files set aside are gone after the flush');
    assert.equal(store.slots.readyCount, SPARE_SLOTS);
  });

  it('a log larger than a slot, or a slot removed under the pool, commits through a new log file as before', async () => {
    const store = await CheckpointStore.open({ stateDir: stateDir(), workspaceRoot: box.ws });
    await store.slots.prepare();
    const created: string[] = [];
    const watching: ApplyFs = { ...nodeApplyFs, createFile: async (file, data, options) => { created.push(file); await nodeApplyFs.createFile(file, data, options); } };
    const overlay = await box.open({ applyFs: watching });
    // Ten files of 60 KB go through the log (under its per-file limit): 600 KB does not fit a slot.
    for (let i = 0; i < 10; i++) await overlay.writeFile(`big/file${i}.txt`, `${i}`.repeat(60 * 1024));
    await accept(store, overlay);
    assert.equal(created.filter((file) => file.startsWith(store.journalsDir) && file.endsWith('.redo')).length, 1, 'a new log file');
    await overlay.flushed();
    assert.equal(await box.read('big/file3.txt'), '3'.repeat(60 * 1024));

    for (const slot of await slotsIn(store.journalsDir)) await rm(path.join(store.journalsDir, slot));
    const second = await box.open();
    await second.writeFile('a.txt', 'after the slots were removed\n');
    const { result } = await accept(store, second);
    assert.deepEqual(result.applied, ['a.txt']);
    assert.equal(await box.read('a.txt'), 'after the slots were removed\n');
    await second.flushed();
    assert.deepEqual((await readdir(store.journalsDir)).filter((name) => name.endsWith('.redo')), [], 'its log removed after the flush');
  });

  it('the next start finishes a committed accept a dead process left in its slot, removes its other slots, and leaves a live process’s alone', async () => {
    const dying = await CheckpointStore.open({ stateDir: stateDir(), workspaceRoot: box.ws, pid: DEAD_PID });
    await dying.slots.prepare();
    const overlay = await box.open({ pid: DEAD_PID, onApplyStep: (event) => {
      // Right after the commit point, before any file is renamed: the process dies.
      if (event.phase === 'logged') throw Object.assign(new Error('simulated crash'), { name: 'Crash' });
    } });
    await speculate(overlay);
    await assert.rejects(accept(dying, overlay), /simulated crash/);
    assert.equal(await box.read('a.txt'), 'a original\n', 'nothing renamed yet');
    const deadSlots = await slotsIn(dying.journalsDir);
    assert.equal((await Promise.all(deadSlots.map((slot) => holdsLog(path.join(dying.journalsDir, slot))))).filter(Boolean).length, 1, 'one slot holds the committed log');

    const next = await CheckpointStore.open({ stateDir: stateDir(), workspaceRoot: box.ws });
    await next.slots.prepare();
    const liveSlots = (await slotsIn(next.journalsDir)).filter((name) => slotOwner(name) === process.pid);
    // An earlier process that had this pid left a slot: not this pool's, so it goes too.
    await writeFile(path.join(next.journalsDir, `slot-${process.pid}-0badc0ffee00.redo`), Buffer.alloc(SLOT_BYTES));
    const report = await next.recover();
    assert.deepEqual(report.failures, []);
    assert.deepEqual(report.accepts.map((a) => [a.outcome, a.applied]), [['rolled-forward', ['a.txt', 'b.txt', 'gone.txt']]], 'the ready slot is removed without a report');
    assert.equal(await box.read('a.txt'), 'a speculated\n');
    assert.equal(await exists(path.join(box.ws, 'gone.txt')), false);
    assert.deepEqual(await slotsIn(next.journalsDir), liveSlots, 'the dead process’s slots are gone (and the reused pid’s), this one’s stay');
    const [checkpoint] = await next.list();
    assert.ok(checkpoint, 'the checkpoint came back from the log');
    assert.ok((await next.undo(checkpoint.id)).ok);
    assert.equal(await box.read('a.txt'), 'a original\n');
  });

  it('an undo of a checkpoint another live window is undoing is busy; a dead window’s lock, or one an earlier process with this pid left, is taken over; dead ones are removed at the next start', async () => {
    const store = await CheckpointStore.open({ stateDir: stateDir(), workspaceRoot: box.ws, pid: DEAD_PID });
    await store.slots.prepare();
    const overlay = await box.open({ pid: DEAD_PID });
    await speculate(overlay);
    const { summary } = await accept(store, overlay);
    await overlay.flushed();
    const lock = restoreLockPath(store, summary!.id);

    await writeFile(lock, String(process.pid));
    const busy = await store.undo(summary!.id);
    assert.ok(!busy.ok && busy.reason === 'busy', 'another live process holds it');
    assert.equal(await box.read('a.txt'), 'a speculated\n', 'nothing changed');

    await writeFile(lock, String(DEAD_PID + 7));
    const undone = await store.undo(summary!.id);
    assert.ok(undone.ok, 'a dead process’s lock is taken over');
    await flushed(store.root);
    assert.equal(await exists(lock), false, 'and released after the flush');

    // An earlier process that had this one's pid (a container's extension host restarted) left its lock.
    await writeFile(lock, String(DEAD_PID));
    const redone = await store.redo(summary!.id);
    assert.ok(redone.ok, 'a lock naming this process, which is not undoing it, is an earlier one’s: taken over');
    await flushed(store.root);
    assert.equal(await exists(lock), false);

    await writeFile(path.join(store.journalsDir, 'cp-left-behind.lock'), String(DEAD_PID + 7));
    await writeFile(path.join(store.journalsDir, 'cp-in-use.lock'), String(process.pid));
    const recovery = await CheckpointStore.open({ stateDir: stateDir(), workspaceRoot: box.ws, isProcessAlive: (pid) => pid === process.pid });
    await recovery.recover();
    assert.equal(await exists(path.join(store.journalsDir, 'cp-left-behind.lock')), false);
    assert.equal(await exists(path.join(store.journalsDir, 'cp-in-use.lock')), true);
  });

  it('an undo’s lock is a second name of the owner file prepared ahead (no new file on the wait); a dead process’s owner file goes at the next start', async () => {
    const store = await CheckpointStore.open({ stateDir: stateDir(), workspaceRoot: box.ws, pid: DEAD_PID });
    await store.prepare();
    const owner = path.join(store.journalsDir, `owner-${DEAD_PID}`);
    assert.equal(await readFile(owner, 'utf8'), String(DEAD_PID), 'made ahead, naming its process');
    const overlay = await box.open({ pid: DEAD_PID });
    await speculate(overlay);
    const { summary } = await accept(store, overlay);
    await overlay.flushed();
    const lock = restoreLockPath(store, summary!.id);
    let during: { sameFile: boolean; says: string } | undefined;
    const watched = await CheckpointStore.open({
      stateDir: stateDir(),
      workspaceRoot: box.ws,
      pid: DEAD_PID,
      onRestoreStep: (event) => {
        if (event.phase !== 'staged' || during) return;
        const [lockInfo, ownerInfo] = [lstatSync(lock), lstatSync(owner)];
        during = { sameFile: lockInfo.ino === ownerInfo.ino && lockInfo.nlink === 2, says: readFileSync(lock, 'utf8') };
      },
    });
    assert.ok((await watched.undo(summary!.id)).ok);
    assert.deepEqual(during, { sameFile: true, says: String(DEAD_PID) }, 'the lock is the owner file under the checkpoint’s name');
    await flushed(watched.root);
    assert.equal(await exists(lock), false, 'released after the flush');
    assert.equal(await exists(owner), true, 'the owner file stays for the next undo');

    const recovery = await CheckpointStore.open({ stateDir: stateDir(), workspaceRoot: box.ws, isProcessAlive: (pid) => pid === process.pid });
    await recovery.prepare();
    await recovery.recover();
    assert.equal(await exists(owner), false, 'a dead process’s owner file is removed');
    assert.equal(await exists(path.join(store.journalsDir, `owner-${process.pid}`)), true, 'a live one’s stays');
  });

  it('an undo’s flush starts once it has returned, and sets the record it replaces aside until the new record is durable', async () => {
    const store = await CheckpointStore.open({ stateDir: stateDir(), workspaceRoot: box.ws, pid: DEAD_PID });
    await store.prepare();
    const overlay = await box.open({ pid: DEAD_PID });
    await speculate(overlay);
    const { summary } = await accept(store, overlay);
    await overlay.flushed();
    const recordFile = path.join(store.recordsDir, `${summary!.id}.json`);
    const aside = path.join(store.journalsDir, 'set-aside');
    const replacedRecord = lstatSync(recordFile).ino;
    let asideWhenFlushed: number[] = [];
    let returned = false;
    const flushedBeforeReturn: string[] = [];
    const watching: CheckpointFs = {
      ...nodeCheckpointFs,
      fsyncFile: async (file) => {
        if (!returned) flushedBeforeReturn.push(file);
        if (file === recordFile) asideWhenFlushed = readdirSync(aside).map((name) => lstatSync(path.join(aside, name)).ino);
        await nodeCheckpointFs.fsyncFile(file);
      },
    };
    const watched = await CheckpointStore.open({ stateDir: stateDir(), workspaceRoot: box.ws, pid: DEAD_PID, fs: watching });
    assert.ok((await watched.undo(summary!.id)).ok);
    returned = true;
    assert.deepEqual(flushedBeforeReturn, [], 'the flush starts after the undo has returned to its caller');
    await flushed(watched.root);
    assert.ok(asideWhenFlushed.includes(replacedRecord), 'the replaced record kept a second name until the new one was flushed');
    assert.deepEqual(await readdir(aside), [], 'and lost it after');
    assert.equal(JSON.parse(await readFile(recordFile, 'utf8')).state, 'undone', 'the new record is in place');
  });

  it('the files an accept replaces are set aside in the state folder until its flush, never in the workspace, and a dead process’s are removed at the next start', async () => {
    const store = await CheckpointStore.open({ stateDir: stateDir(), workspaceRoot: box.ws, pid: DEAD_PID });
    const overlay = await box.open({ pid: DEAD_PID });
    await speculate(overlay);
    const aside = path.join(store.journalsDir, 'set-aside');
    let during: string[] = [];
    const watching: ApplyFs = { ...nodeApplyFs, fsyncFile: async (file) => { during = await readdir(aside).catch(() => []); await nodeApplyFs.fsyncFile(file); } };
    await box.write('keep-me.txt', 'old\n');
    const second = await box.open({ pid: DEAD_PID, applyFs: watching });
    await second.writeFile('keep-me.txt', 'new\n');
    await accept(store, overlay);
    assert.deepEqual(Object.keys(await snapshot(box.ws)).filter((name) => name.includes('speculate')), [], 'nothing of it in the workspace');
    await overlay.flushed();
    assert.deepEqual(await readdir(aside), [], 'removed by the flush');
    // Its folder removed since (a cleaned storage): made again.
    await rm(aside, { recursive: true });
    const { result } = await accept(store, second);
    assert.deepEqual(result.applied, ['keep-me.txt']);
    assert.equal(during.length, 1, 'the replaced keep-me.txt waited there during the flush');
    await second.flushed();
    assert.deepEqual(await readdir(aside), []);

    // A process that died before its flush: its names are removed at the next start, a live one's stay.
    await writeFile(path.join(aside, `${DEAD_PID + 5}-abc1`), 'left by a crash');
    await writeFile(path.join(aside, `${process.pid}-abc2`), 'in flight');
    await (await CheckpointStore.open({ stateDir: stateDir(), workspaceRoot: box.ws })).recover();
    assert.deepEqual(await readdir(aside), [`${process.pid}-abc2`]);
  });
});
