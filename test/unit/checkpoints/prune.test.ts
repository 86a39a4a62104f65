// Pruning by age and by size: old checkpoints go, then the oldest while over the limit; the newest
// always stays; saved contents nothing refers to are collected only after a grace period.
import * as assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { COLLECT_GRACE_MS } from '../../../src/core/checkpoints/prune';
import type { CheckpointStore } from '../../../src/core/checkpoints';
import { makeCheckpointBox, type CheckpointBox } from './checkpointKit';

const DAY = 24 * 60 * 60 * 1000;

describe('checkpoints: pruning', () => {
  let box: CheckpointBox;
  let clock: number;
  let store: CheckpointStore;
  beforeEach(async () => {
    box = await makeCheckpointBox({ 'a.txt': 'a'.repeat(10_000), 'b.txt': 'b'.repeat(10_000), 'c.txt': 'c'.repeat(10_000) });
    clock = Date.now() - 10 * DAY;
    store = await box.reopen({ now: () => clock, isProcessAlive: () => true });
  });
  afterEach(() => box.dispose());

  async function turnAt(daysAgo: number, file: string): Promise<string> {
    clock = Date.now() - daysAgo * DAY;
    const fs = box.recorder(store);
    fs.begin({ kind: 'turn', prompt: `edit ${file}` });
    await fs.writeFile(file, `${file} changed ${daysAgo}\n`);
    return (await fs.seal())!.id;
  }

  it('removes checkpoints older than the age limit but always keeps the newest', async () => {
    const old = await turnAt(9, 'a.txt');
    const middle = await turnAt(5, 'b.txt');
    const newest = await turnAt(4, 'c.txt');
    clock = Date.now();
    const report = await store.prune({ maxAgeMs: 6 * DAY, maxBytes: 0 });
    assert.deepEqual(report.removed, [old]);
    assert.deepEqual((await store.list()).map((c) => c.id), [newest, middle]);
    const onlyNewest = await store.prune({ maxAgeMs: DAY, maxBytes: 0 });
    assert.deepEqual(onlyNewest.removed, [middle]);
    assert.deepEqual((await store.list()).map((c) => c.id), [newest]);
  });

  it('removes the oldest until the store fits the size limit, and collects their contents after the grace period', async () => {
    await turnAt(3, 'a.txt');
    const second = await turnAt(2, 'b.txt');
    const newest = await turnAt(1, 'c.txt');
    clock = Date.now();
    const size = await store.sizeOnDisk();
    assert.ok(size > 30_000, `three 10 KB files are saved (${size} bytes)`);
    const report = await store.prune({ maxAgeMs: 0, maxBytes: 25_000 });
    assert.equal(report.removed.length, 1);
    assert.deepEqual((await store.list()).map((c) => c.id), [newest, second]);
    assert.equal(report.blobsRemoved, 0, 'a fresh blob is kept through the grace period');
    assert.equal((await readdir(store.blobs.dir)).length, 3);

    clock = Date.now() + COLLECT_GRACE_MS + 1000;
    const later = await store.prune({ maxAgeMs: 0, maxBytes: 25_000 });
    assert.equal(later.blobsRemoved, 1);
    assert.ok(later.bytesAfter <= 25_000, `${later.bytesAfter} bytes left`);
    assert.ok((await store.undo(second)).ok, 'what is kept still undoes');
    assert.equal(await box.read('b.txt'), 'b'.repeat(10_000));
  });

  it('keeps the newest checkpoint even when it alone is over the limit', async () => {
    const only = await turnAt(1, 'a.txt');
    clock = Date.now();
    assert.deepEqual((await store.prune({ maxAgeMs: 1, maxBytes: 1 })).removed, []);
    assert.deepEqual((await store.list()).map((c) => c.id), [only]);
  });
});
