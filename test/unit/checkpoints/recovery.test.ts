// Crashes in the middle of an undo are finished or rolled back at the next start; a recording whose
// process died is completed from the disk; a failing disk while staging changes nothing.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { RestoreError } from '../../../src/core/checkpoints';
import { snapshot } from '../followup/overlayKit';
import { crashAt, faultyFs, makeCheckpointBox, type CheckpointBox } from './checkpointKit';

const FILES: Record<string, string> = { 'a.txt': 'a0\n', 'b.txt': 'b0\n', 'c.txt': 'c0\n', 'd/e.txt': 'e0\n' };

async function change(box: CheckpointBox): Promise<string> {
  const fs = box.recorder();
  fs.begin({ kind: 'turn', prompt: 'change everything' });
  await fs.writeFile('a.txt', 'a1\n');
  await fs.writeFile('b.txt', 'b1\n');
  await fs.writeFile('c.txt', 'c1\n');
  await fs.delete('d/e.txt');
  await fs.writeFile('n/new.txt', 'new\n');
  return (await fs.seal())!.id;
}

async function undoTemps(root: string): Promise<string[]> {
  return Object.keys(await snapshot(root)).filter((f) => /\.speculate-undo-[0-9a-f]{16}\.tmp$/.test(f));
}

describe('checkpoints: crash recovery', () => {
  let box: CheckpointBox;
  let original: Record<string, string>;
  beforeEach(async () => {
    box = await makeCheckpointBox(FILES);
    original = await snapshot(box.ws);
  });
  afterEach(() => box.dispose());

  it('a crash while staging the undo is rolled back at the next start; undo then works', async () => {
    const id = await change(box);
    const changed = await snapshot(box.ws);
    const dying = await box.reopen({ pid: 4_000_001, isProcessAlive: () => true, onRestoreStep: crashAt('staged', 2), commitWith: 'journal' });
    await assert.rejects(dying.undo(id), /simulated crash/);
    assert.ok((await undoTemps(box.ws)).length >= 2, 'the crash leaves its temps (those staged at once with it too)');
    const next = await box.reopen();
    const report = await next.recover();
    assert.deepEqual(report.journals.map((j) => j.outcome), ['rolled-back']);
    assert.deepEqual(await snapshot(box.ws), changed, 'nothing the user sees changed');
    const undone = await next.undo(id);
    assert.ok(undone.ok);
    assert.deepEqual(await snapshot(box.ws), original);
  });

  it('a crash while committing the undo is rolled forward at the next start', async () => {
    const id = await change(box);
    const dying = await box.reopen({ pid: 4_000_002, isProcessAlive: () => true, onRestoreStep: crashAt('committed', 2) });
    await assert.rejects(dying.undo(id), /simulated crash/);
    assert.notDeepEqual(await snapshot(box.ws), original, 'half done when it died');
    const next = await box.reopen();
    const report = await next.recover();
    assert.deepEqual(report.journals.map((j) => [j.outcome, j.restored.length]), [['rolled-forward', 5]]);
    assert.deepEqual(await snapshot(box.ws), original);
    const again = await next.undo(id);
    assert.equal(again.ok === false && again.reason, 'already-undone');
  });

  it('recovery keeps a file the user changed after the crash', async () => {
    const id = await change(box);
    const dying = await box.reopen({ pid: 4_000_003, isProcessAlive: () => true, onRestoreStep: crashAt('committed', 1) });
    await assert.rejects(dying.undo(id), /simulated crash/);
    await box.write('c.txt', 'typed after the crash\n');
    const next = await box.reopen();
    await next.recover();
    assert.deepEqual(await undoTemps(box.ws), []);
    assert.equal(await box.read('c.txt'), 'typed after the crash\n');
    assert.equal(await box.read('a.txt'), 'a0\n');
    const record = await next.read(id);
    assert.ok(record.ok);
    assert.deepEqual(record.record.undo?.kept, ['c.txt']);
  });

  it('an undo in flight in a live process makes a second one wait; a dead one is recovered first', async () => {
    const id = await change(box);
    const dying = await box.reopen({ pid: 4_000_004, isProcessAlive: () => true, onRestoreStep: crashAt('staged', 1), commitWith: 'journal' });
    await assert.rejects(dying.undo(id), /simulated crash/);
    const sameMachine = await box.reopen({ isProcessAlive: (pid) => pid === 4_000_004 });
    const busy = await sameMachine.undo(id);
    assert.equal(busy.ok === false && busy.reason, 'busy');
    const afterDeath = await box.reopen();
    assert.ok((await afterDeath.undo(id)).ok);
    assert.deepEqual(await snapshot(box.ws), original);
  });

  it('a disk that refuses a temp while staging leaves the workspace exactly as it was', async () => {
    const id = await change(box);
    const changed = await snapshot(box.ws);
    const full = await box.reopen({ fs: faultyFs('writeDurable', /\/\.b\.txt\.speculate-undo-/, 'ENOSPC'), isProcessAlive: () => true, commitWith: 'journal' });
    await assert.rejects(full.undo(id), (error: unknown) => error instanceof RestoreError && /preparing "b\.txt" \(ENOSPC\); no file in the workspace was changed/.test(error.message));
    assert.deepEqual(await snapshot(box.ws), changed);
    assert.deepEqual(await undoTemps(box.ws), []);
    const record = await box.store.read(id);
    assert.ok(record.ok && record.record.state === 'applied');
  });

  it('a recording whose process died mid-turn is completed from the disk and can be undone', async () => {
    const dead = await box.reopen({ pid: 4_000_005, isProcessAlive: () => true });
    const fs = box.recorder(dead);
    fs.begin({ kind: 'turn', prompt: 'dies half way' });
    await fs.writeFile('a.txt', 'a1\n');
    await fs.writeFile('fresh/new.txt', 'new\n');
    // The process dies here: the recording is never sealed.
    const next = await box.reopen();
    assert.deepEqual(await next.list(), [], 'an unfinished recording is not offered');
    const report = await next.recover();
    assert.deepEqual(report.recordings.map((r) => r.outcome), ['completed']);
    const [summary] = await next.list();
    assert.deepEqual(summary.files.map((f) => f.path), ['a.txt', 'fresh/new.txt']);
    assert.ok((await next.undo(summary.id)).ok);
    assert.deepEqual(await snapshot(box.ws), original);
  });

  it('a recording of a live process is left alone by recovery', async () => {
    const fs = box.recorder();
    fs.begin({ kind: 'turn', prompt: 'still going' });
    await fs.writeFile('a.txt', 'a1\n');
    const other = await box.reopen({ isProcessAlive: (pid) => pid === process.pid });
    assert.deepEqual((await other.recover()).recordings, []);
    assert.ok(await fs.seal());
    assert.equal(path.basename(box.store.dir).startsWith('ws-'), true, 'the store is named after the workspace');
  });
});
