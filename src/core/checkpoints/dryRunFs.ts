// A WorkspaceFs that lets a write tool run without writing: reads come from the workspace (or from
// what the tool "wrote" so far), writes are kept in memory. So an approval can show the exact file
// the tool call would produce — computed by the tool itself, not by a second copy of its logic.
import type { DirEntry, FileStat, GlobOptions, SearchMatch, SearchOptions, WorkspaceFs } from '../fs/workspaceFs';

/** Mode a file written only in the preview reports (like a new file). */
const PREVIEW_MODE = 0o644;

export class DryRunWorkspaceFs implements WorkspaceFs {
  readonly root: string;
  /** What the tool would have written, by workspace-relative path. */
  readonly writes = new Map<string, Uint8Array>();

  constructor(private readonly base: WorkspaceFs) {
    this.root = base.root;
  }

  resolve(requested: string): Promise<string> {
    return this.base.resolve(requested);
  }

  async readFile(requested: string): Promise<Uint8Array> {
    const file = await this.base.resolve(requested);
    return this.writes.get(file) ?? this.base.readFile(file);
  }

  async stat(requested: string): Promise<FileStat | undefined> {
    const file = await this.base.resolve(requested);
    const written = this.writes.get(file);
    if (written) return { type: 'file', size: written.length, mtimeMs: Date.now(), mode: (await this.base.stat(file))?.mode ?? PREVIEW_MODE };
    return this.base.stat(file);
  }

  async writeFile(...args: Parameters<WorkspaceFs['writeFile']>): Promise<void> {
    const [requested, data] = args;
    const file = await this.base.resolve(requested);
    this.writes.set(file, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
  }

  list(requested: string): Promise<DirEntry[]> {
    return this.base.list(requested);
  }

  glob(pattern: string, options?: GlobOptions): Promise<string[]> {
    return this.base.glob(pattern, options);
  }

  search(pattern: string, options?: SearchOptions): Promise<SearchMatch[]> {
    return this.base.search(pattern, options);
  }

  async rename(): Promise<void> {
    throw new Error('A preview of a tool call does not move files.');
  }

  async delete(): Promise<void> {
    throw new Error('A preview of a tool call does not delete files.');
  }
}
