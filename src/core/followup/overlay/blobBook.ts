// The overlay's blob files, one per stored write: numbered in order, stored with their file's mode
// (so the sandbox can hard-link them), and dropped once nothing refers to them.
import { unlink } from 'node:fs/promises';
import { startBlob, type PendingBlob } from './blobs';
import type { OverlayEntry, WrittenEntry } from './entries';
import { NEW_FILE_MODE } from './mergedView';

/** How much replaced content the overlay folder may keep until cleanup() removes it in one go. */
const UNREFERENCED_BYTES = 32 * 1024 * 1024;

export class BlobBook {
  /** The last blob number handed out. */
  count = 0;
  /** Blobs nothing refers to any more, oldest first: left for cleanup() to remove with the folder, up to UNREFERENCED_BYTES. */
  private readonly unreferenced: { blob: string; size: number }[] = [];
  private unreferencedBytes = 0;

  constructor(private readonly pathOf: (blob: string) => string) {}

  /**
   * Starts storing a blob for new content. It gets its file's mode (the overlay folder is private
   * either way), so the sandbox can show it to a command through a hard link instead of a copy;
   * the mode is guessed from what is known before the path is placed, and corrected if need be.
   */
  start(data: Uint8Array, previous: OverlayEntry | undefined): PendingBlob {
    const blob = String(++this.count);
    const guess = previous?.kind === 'written' ? (previous.mode ?? NEW_FILE_MODE) : previous?.base.exists ? previous.base.mode : NEW_FILE_MODE;
    return startBlob(this.pathOf(blob), blob, data, guess & 0o777);
  }

  /** A replaced blob: removed now, or handed to `retired` when the caller may still undo. */
  retire(previous: WrittenEntry, retired: string[] | undefined): void {
    if (retired) retired.push(previous.blob);
    else this.drop(previous);
  }

  /**
   * A blob nothing refers to any more (replaced, applied, discarded). cleanup() removes the whole
   * folder anyway, so it stays until then — one removal instead of one per write — unless the
   * folder would keep more than UNREFERENCED_BYTES that way; the oldest go first, not waited for.
   */
  drop(entry: Pick<WrittenEntry, 'blob' | 'size'>): void {
    this.unreferenced.push({ blob: entry.blob, size: entry.size });
    this.unreferencedBytes += entry.size;
    while (this.unreferencedBytes > UNREFERENCED_BYTES) {
      const oldest = this.unreferenced.shift();
      if (!oldest) break;
      this.unreferencedBytes -= oldest.size;
      unlink(this.pathOf(oldest.blob)).catch(() => undefined);
    }
  }
}
