// Keeps the store within the user's limits: checkpoints older than the age limit go, then the
// oldest while the store is over the size limit; the newest checkpoint always stays. Blobs no
// record refers to are collected after a grace period (another process may be writing its record).
import * as path from 'node:path';
import { blobsOf, type CheckpointRecord } from './record';
import type { StoreFiles } from './storeFiles';

export interface PruneLimits {
  /** Checkpoints older than this go (0 or less: no age limit). */
  maxAgeMs: number;
  /** The store's size on disk above which the oldest checkpoints go (0 or less: no size limit). */
  maxBytes: number;
}

export interface PruneReport {
  removed: string[];
  blobsRemoved: number;
  bytesBefore: number;
  bytesAfter: number;
}

/** The defaults of the speculate.checkpoints.* settings, and what the CLI uses. */
export const DEFAULT_PRUNE_LIMITS: PruneLimits = { maxAgeMs: 30 * 24 * 60 * 60 * 1000, maxBytes: 256 * 1024 * 1024 };

/** A blob or temp younger than this is never collected: its record may still be on its way. */
export const COLLECT_GRACE_MS = 60 * 60 * 1000;

async function journaled(store: StoreFiles): Promise<Set<string>> {
  const names = await store.fs.readdir(store.journalsDir);
  return new Set(names.filter((n) => n.endsWith('.json')).map((n) => n.slice(0, -'.json'.length)));
}

export async function pruneCheckpoints(store: StoreFiles, limits: PruneLimits): Promise<PruneReport> {
  const now = store.now();
  const bytesBefore = await store.sizeOnDisk();
  const records = await store.records();
  const busy = await journaled(store);
  // Never pruned: a recording still going on, an undo in flight, and the newest checkpoint.
  const isProtected = (record: CheckpointRecord) =>
    record === records[0] || busy.has(record.id) || (record.state === 'recording' && store.processAlive(record.pid));
  const blobSizes = new Map((await store.blobs.list()).filter((b) => b.hash).map((b) => [b.hash as string, b.size]));
  const recordSize = new Map<string, number>();
  for (const record of records) recordSize.set(record.id, (await store.fs.lstat(path.join(store.recordsDir, `${record.id}.json`)))?.size ?? 0);

  const kept: CheckpointRecord[] = [];
  const removed: CheckpointRecord[] = [];
  for (const record of records) {
    const tooOld = limits.maxAgeMs > 0 && now - record.createdAt > limits.maxAgeMs;
    (tooOld && !isProtected(record) ? removed : kept).push(record);
  }
  const sizeOf = (set: CheckpointRecord[]) => {
    const hashes = new Set(set.flatMap(blobsOf));
    let total = 0;
    for (const record of set) total += recordSize.get(record.id) ?? 0;
    for (const hash of hashes) total += blobSizes.get(hash) ?? 0;
    return total;
  };
  if (limits.maxBytes > 0) {
    // Oldest first out, until the rest fits.
    while (sizeOf(kept) > limits.maxBytes) {
      const oldest = [...kept].reverse().find((record) => !isProtected(record));
      if (!oldest) break;
      kept.splice(kept.indexOf(oldest), 1);
      removed.push(oldest);
    }
  }
  for (const record of removed) await store.remove(record.id);

  const referenced = new Set(kept.flatMap(blobsOf));
  let blobsRemoved = 0;
  for (const blob of await store.blobs.list()) {
    if (now - blob.mtimeMs < COLLECT_GRACE_MS) continue;
    if (blob.hash && referenced.has(blob.hash)) continue;
    await store.blobs.remove(blob.name);
    blobsRemoved++;
  }
  // Temps left by a crash between writing and renaming a record or a journal.
  for (const dir of [store.recordsDir, store.journalsDir]) {
    for (const name of await store.fs.readdir(dir)) {
      if (!name.startsWith('.') || !name.endsWith('.tmp')) continue;
      const info = await store.fs.lstat(path.join(dir, name));
      if (info?.type === 'file' && now - info.mtimeMs >= COLLECT_GRACE_MS) await store.fs.unlink(path.join(dir, name));
    }
  }
  return { removed: removed.map((r) => r.id), blobsRemoved, bytesBefore, bytesAfter: await store.sizeOnDisk() };
}
