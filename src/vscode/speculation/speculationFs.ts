// The read-only `speculation:` file system: speculation://<run id>/<folder>/<folder-relative path>
// shows a running speculation's overlay merged over the folder it runs on (the folder's name in the
// path, so a multi-root window's tabs and breadcrumbs say which folder). A finished or aborted run
// answers FileNotFound, so a stale editor tab can never show a result that no longer exists.
import * as vscode from 'vscode';
import type { WorkspaceFs } from '../../core/fs/workspaceFs';

export const SPECULATION_SCHEME = 'speculation';

/** A live run as the file system sees it. */
export interface SpeculationFsSource {
  fs: WorkspaceFs;
  /** The name of the workspace folder the run works on: the URI's first path segment. */
  folder: string;
  /** Fires with workspace-relative paths after each overlay write. */
  onDidChange?(listener: (paths: string[]) => void): { dispose(): void };
}

export function speculationUri(runId: string, folder: string, relativePath: string): vscode.Uri {
  const inFolder = relativePath === '' ? '' : `/${relativePath}`;
  return vscode.Uri.from({ scheme: SPECULATION_SCHEME, authority: runId, path: `/${folder}${inFolder}` });
}

export class SpeculationFileSystemProvider implements vscode.FileSystemProvider {
  private readonly runs = new Map<string, { source: SpeculationFsSource; subscription?: { dispose(): void } }>();
  private readonly changeEmitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changeEmitter.event;

  /** Makes a run's overlay visible under speculation://<runId>/. */
  addRun(runId: string, source: SpeculationFsSource): void {
    this.removeRun(runId);
    const subscription = source.onDidChange?.((paths) => {
      this.changeEmitter.fire(paths.map((path) => ({ type: vscode.FileChangeType.Changed, uri: speculationUri(runId, source.folder, path) })));
    });
    this.runs.set(runId, { source, subscription });
  }

  /** The run finished or was aborted: its URIs answer FileNotFound from now on. */
  removeRun(runId: string): void {
    const entry = this.runs.get(runId);
    if (!entry) return;
    entry.subscription?.dispose();
    this.runs.delete(runId);
    this.changeEmitter.fire([{ type: vscode.FileChangeType.Deleted, uri: speculationUri(runId, entry.source.folder, '') }]);
  }

  hasRun(runId: string): boolean {
    return this.runs.has(runId);
  }

  private async locate(uri: vscode.Uri): Promise<{ fs: WorkspaceFs; path: string }> {
    const entry = this.runs.get(uri.authority);
    if (!entry) throw vscode.FileSystemError.FileNotFound(uri);
    // The first segment names the run's folder; any other folder has nothing of this run.
    const [folder, ...rest] = uri.path.replace(/^\/+/, '').split('/');
    if (folder !== entry.source.folder) throw vscode.FileSystemError.FileNotFound(uri);
    try {
      const path = await entry.source.fs.resolve(rest.join('/'));
      return { fs: entry.source.fs, path };
    } catch {
      throw vscode.FileSystemError.FileNotFound(uri);
    }
  }

  async stat(uri: vscode.Uri): Promise<vscode.FileStat> {
    const { fs, path } = await this.locate(uri);
    const info = await fs.stat(path);
    if (!info) throw vscode.FileSystemError.FileNotFound(uri);
    return {
      type: info.type === 'directory' ? vscode.FileType.Directory : vscode.FileType.File,
      ctime: info.mtimeMs,
      mtime: info.mtimeMs,
      size: info.size,
      permissions: vscode.FilePermission.Readonly,
    };
  }

  async readDirectory(uri: vscode.Uri): Promise<[string, vscode.FileType][]> {
    const { fs, path } = await this.locate(uri);
    const entries = await fs.list(path).catch(() => {
      throw vscode.FileSystemError.FileNotFound(uri);
    });
    return entries.map((entry) => [entry.name, entry.type === 'directory' ? vscode.FileType.Directory : vscode.FileType.File]);
  }

  async readFile(uri: vscode.Uri): Promise<Uint8Array> {
    const { fs, path } = await this.locate(uri);
    try {
      return await fs.readFile(path);
    } catch {
      throw vscode.FileSystemError.FileNotFound(uri);
    }
  }

  watch(): vscode.Disposable {
    // Change events are pushed from the overlay for every run; nothing to set up per watcher.
    return new vscode.Disposable(() => undefined);
  }

  private readOnly(uri: vscode.Uri): never {
    throw vscode.FileSystemError.NoPermissions(`${uri.toString()} is a speculation preview and is read-only. Accept the speculation to apply it.`);
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
    for (const runId of [...this.runs.keys()]) this.removeRun(runId);
    this.changeEmitter.dispose();
  }
}
