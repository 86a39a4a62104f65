// What a sandboxed command sees of the speculation (its writes as blobs to link, its deletions), and
// how the command's changes come back as ordinary overlay changes, all or nothing (SANDBOX.md).
import { readFile, unlink } from 'node:fs/promises';
import { PathOutsideWorkspaceError } from '../../fs/workspaceFs';
import type { SandboxChange, SandboxLayer } from '../../sandbox/shellSandbox';
import type { BlobBook } from './blobBook';
import { NEW_FILE_MODE, type MergedView } from './mergedView';
import { codeOf, OverlayStorageError } from './overlayErrors';

/** The overlay's writing side, as the exchange needs it (OverlayFs passes its own, under its lock). */
export interface OverlayWriter {
  view: MergedView;
  blobs: BlobBook;
  resolve(requested: string): Promise<string>;
  /** Throws ProtectedPathError for a protected path. */
  assertUnprotected(file: string): void;
  write(file: string, data: Uint8Array, mode: number | undefined, retired: string[]): Promise<void>;
  deleteFile(file: string, retired: string[]): Promise<void>;
}

export function sandboxLayerOf(view: MergedView): SandboxLayer {
  const files: { path: string; contentPath: string; mode: number }[] = [];
  const deletedFiles: string[] = [];
  for (const [file, entry] of view.entries) {
    if (entry.kind === 'written') files.push({ path: file, contentPath: view.blobPath(entry.blob), mode: (entry.mode ?? NEW_FILE_MODE) & 0o777 });
    else deletedFiles.push(file);
  }
  return { files, deletedFiles, deletedDirs: [...view.deletedDirs] };
}

/**
 * Takes a sandboxed command's changes (deletions first, then writes) as ordinary overlay changes.
 * Each path is held on accept against what the command found: the speculation's own earlier sight
 * of it, else the real file — unless that changed after `startedAt` (for a file that was absent,
 * its nearest folder), and then accept asks rather than overwrite. All or nothing: a path the
 * overlay cannot place as itself is refused before anything changes; a storage failure undoes
 * what this call did; so is a protected path (ProtectedPathError). Returns the paths changed.
 */
export async function takeSandboxChanges(writer: OverlayWriter, changes: readonly SandboxChange[], startedAt: number): Promise<string[]> {
  const { view, blobs } = writer;
  for (const change of changes) {
    if ((await writer.resolve(change.path)) !== change.path) {
      throw new PathOutsideWorkspaceError(change.path, 'was changed by the command through a symlink, which the speculation cannot carry over');
    }
    // A command may not slip a protected file (.vscode/tasks.json, .env, …) into the speculation either.
    writer.assertUnprotected(change.path);
  }
  const savedEntries = new Map(view.entries);
  const savedDirs = new Set(view.deletedDirs);
  const firstBlob = blobs.count + 1;
  const retired: string[] = [];
  const changed: string[] = [];
  try {
    for (const change of changes) {
      // Before any stat of ours: that would record the file as it is now, not as the command found it.
      if (change.kind === 'write' || change.type === 'file') await view.sawBeforeSandbox(change.path, startedAt);
      const info = await view.statMerged(change.path);
      if (change.kind === 'delete' && change.type === 'file') {
        if (info?.type !== 'file') continue;
        await writer.deleteFile(change.path, retired);
      } else if (change.kind === 'delete') {
        if (info?.type !== 'directory' || (await view.listMerged(change.path)).length > 0) continue;
        view.deletedDirs.add(change.path);
      } else {
        await writer.write(change.path, await readFile(change.contentPath), change.mode, retired);
      }
      changed.push(change.path);
    }
  } catch (error) {
    view.entries.clear();
    for (const [file, entry] of savedEntries) view.entries.set(file, entry);
    view.deletedDirs.clear();
    for (const dir of savedDirs) view.deletedDirs.add(dir);
    for (let blob = firstBlob; blob <= blobs.count; blob++) await unlink(view.blobPath(String(blob))).catch(() => undefined);
    throw error instanceof OverlayStorageError ? error : new OverlayStorageError(changes[0]?.path ?? '', 'store', codeOf(error));
  }
  for (const blob of retired) await unlink(view.blobPath(blob)).catch(() => undefined);
  return changed;
}
