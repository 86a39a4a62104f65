// Read-only documents for diffs: `speculate-checkpoint://<id>/<before|after>/<path>` serves a
// checkpoint's saved copy of a file, `speculate-proposed://<key>/<path>` what an approval would write.
import * as vscode from 'vscode';
import type { CheckpointStore, FileState } from '../../core/checkpoints';

export const CHECKPOINT_SCHEME = 'speculate-checkpoint';
export const PROPOSED_SCHEME = 'speculate-proposed';

export type CheckpointSide = 'before' | 'after';

export function checkpointUri(checkpointId: string, side: CheckpointSide, relativePath: string): vscode.Uri {
  return vscode.Uri.from({ scheme: CHECKPOINT_SCHEME, authority: checkpointId, path: `/${side}/${relativePath}` });
}

export function proposedUri(key: string, relativePath: string): vscode.Uri {
  return vscode.Uri.from({ scheme: PROPOSED_SCHEME, authority: key, path: `/${relativePath}` });
}

/** The saved state of a path on one side of a checkpoint (after = what its undo replaced). */
export async function checkpointState(store: CheckpointStore, checkpointId: string, side: CheckpointSide, relativePath: string): Promise<FileState | undefined> {
  const read = await store.read(checkpointId);
  if (!read.ok) return undefined;
  const file = read.record.files.find((f) => f.path === relativePath);
  if (!file) return undefined;
  if (side === 'before') return file.before;
  return read.record.undo?.paths.find((p) => p.path === relativePath)?.replaced ?? file.after ?? undefined;
}

export class CheckpointDocumentProvider implements vscode.FileSystemProvider {
  private readonly proposals = new Map<string, Map<string, Uint8Array>>();
  /** Bumped on each update, as the proposed document's mtime: VS Code reloads a document whose stat changed. */
  private readonly versions = new Map<string, number>();
  private readonly changeEmitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changeEmitter.event;

  constructor(private readonly store: () => CheckpointStore | undefined) {}

  /** Holds what an approval would write until `forget`. */
  propose(key: string, files: Map<string, Uint8Array>): void {
    this.proposals.set(key, files);
  }

  forget(key: string): void {
    this.proposals.delete(key);
    this.versions.delete(key);
  }

  /** Replaces what an approval would write (a change was dropped): open diffs of it reload. */
  update(key: string, files: Map<string, Uint8Array>): void {
    if (!this.proposals.has(key)) return;
    this.proposals.set(key, files);
    this.versions.set(key, (this.versions.get(key) ?? 0) + 1);
    this.changeEmitter.fire([...files.keys()].map((path) => ({ type: vscode.FileChangeType.Changed, uri: proposedUri(key, path) })));
  }

  private async bytes(uri: vscode.Uri): Promise<Uint8Array> {
    if (uri.scheme === PROPOSED_SCHEME) {
      const data = this.proposals.get(uri.authority)?.get(uri.path.replace(/^\/+/, ''));
      if (!data) throw vscode.FileSystemError.FileNotFound(uri);
      return data;
    }
    const store = this.store();
    const match = /^\/(before|after)\/(.+)$/.exec(uri.path);
    if (!store || !match) throw vscode.FileSystemError.FileNotFound(uri);
    const state = await checkpointState(store, uri.authority, match[1] as CheckpointSide, match[2]);
    if (!state?.exists) throw vscode.FileSystemError.FileNotFound(uri);
    try {
      return await store.blobs.read(state.sha256);
    } catch {
      throw vscode.FileSystemError.FileNotFound(uri);
    }
  }

  async stat(uri: vscode.Uri): Promise<vscode.FileStat> {
    const data = await this.bytes(uri);
    const mtime = uri.scheme === PROPOSED_SCHEME ? (this.versions.get(uri.authority) ?? 0) : 0;
    return { type: vscode.FileType.File, ctime: 0, mtime, size: data.length, permissions: vscode.FilePermission.Readonly };
  }

  readFile(uri: vscode.Uri): Promise<Uint8Array> {
    return this.bytes(uri);
  }

  readDirectory(): [string, vscode.FileType][] {
    return [];
  }

  watch(): vscode.Disposable {
    // Saved copies never change: nothing to watch.
    return new vscode.Disposable(() => undefined);
  }

  private readOnly(uri: vscode.Uri): never {
    throw vscode.FileSystemError.NoPermissions(`${uri.toString()} is a saved copy kept by Speculate and is read-only.`);
  }

  createDirectory(uri: vscode.Uri): void {
    this.readOnly(uri);
  }
  writeFile(uri: vscode.Uri): void {
    this.readOnly(uri);
  }
  delete(uri: vscode.Uri): void {
    this.readOnly(uri);
  }
  rename(uri: vscode.Uri): void {
    this.readOnly(uri);
  }

  dispose(): void {
    this.proposals.clear();
    this.changeEmitter.dispose();
  }
}
