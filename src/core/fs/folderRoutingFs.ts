// The workspace of a multi-root window as the chat's tools see it: paths are relative to the folder
// the chat works on, and a path that leads into another open folder (`../beta/src/x.ts`, or an
// absolute one) is that folder's path, placed by that folder's own rules. Anything else stays
// outside, exactly as with one folder. Only live turns use it: a speculation's overlay sits on the
// chat's folder alone, so a path into another folder stops it at a boundary (fail closed).
import * as path from 'node:path';
import { toAbsolute, toWorkspaceRelative } from './paths';
import { PathOutsideWorkspaceError, type DirEntry, type FileStat, type GlobOptions, type SearchMatch, type SearchOptions, type WorkspaceFs, type WriteOptions } from './workspaceFs';

interface Placed {
  fs: WorkspaceFs;
  /** The path inside `fs`. */
  inner: string;
}

export class FolderRoutingFs implements WorkspaceFs {
  /**
   * @param primary the folder the chat works on: relative paths start there
   * @param others the other folders open in the window
   */
  constructor(
    private readonly primary: WorkspaceFs,
    private readonly others: readonly WorkspaceFs[],
  ) {}

  get root(): string {
    return this.primary.root;
  }

  /** The name a path of another folder goes by here: relative to the chat's folder (`../beta/x`). */
  private nameOf(placed: Placed): string {
    if (placed.fs === this.primary) return placed.inner;
    return toWorkspaceRelative(this.primary.root, toAbsolute(placed.fs.root, placed.inner));
  }

  private async place(requested: string): Promise<Placed> {
    try {
      return { fs: this.primary, inner: await this.primary.resolve(requested) };
    } catch (error) {
      if (!(error instanceof PathOutsideWorkspaceError) || typeof requested !== 'string' || requested.includes('\0')) throw error;
      // Lexically outside the chat's folder: another open folder may hold it. A symlink inside the
      // chat's folder that points into another folder is not followed there (the lexical path is
      // still inside the chat's folder), so the refusal stands.
      const absolute = path.isAbsolute(requested) ? path.resolve(requested) : path.resolve(this.primary.root, requested);
      for (const other of this.others) {
        try {
          return { fs: other, inner: await other.resolve(absolute) };
        } catch (otherError) {
          if (!(otherError instanceof PathOutsideWorkspaceError)) throw otherError;
        }
      }
      throw error;
    }
  }

  async resolve(requested: string): Promise<string> {
    return this.nameOf(await this.place(requested));
  }

  async readFile(requested: string): Promise<Uint8Array> {
    const { fs, inner } = await this.place(requested);
    return fs.readFile(inner);
  }

  async writeFile(requested: string, data: Uint8Array | string, options?: WriteOptions): Promise<void> {
    const { fs, inner } = await this.place(requested);
    return fs.writeFile(inner, data, options);
  }

  async stat(requested: string): Promise<FileStat | undefined> {
    const { fs, inner } = await this.place(requested);
    return fs.stat(inner);
  }

  async list(requested: string): Promise<DirEntry[]> {
    const { fs, inner } = await this.place(requested);
    return fs.list(inner);
  }

  async glob(pattern: string, options: GlobOptions = {}): Promise<string[]> {
    if (options.cwd === undefined) return this.primary.glob(pattern, options);
    const placed = await this.place(options.cwd);
    const found = await placed.fs.glob(pattern, { ...options, cwd: placed.inner });
    return placed.fs === this.primary ? found : found.map((inner) => this.nameOf({ fs: placed.fs, inner }));
  }

  async search(pattern: string, options: SearchOptions = {}): Promise<SearchMatch[]> {
    if (options.path === undefined) return this.primary.search(pattern, options);
    const placed = await this.place(options.path);
    const found = await placed.fs.search(pattern, { ...options, path: placed.inner });
    return placed.fs === this.primary ? found : found.map((match) => ({ ...match, path: this.nameOf({ fs: placed.fs, inner: match.path }) }));
  }

  async rename(from: string, to: string): Promise<void> {
    const source = await this.place(from);
    const target = await this.place(to);
    if (source.fs !== target.fs) throw new PathOutsideWorkspaceError(to, 'is in another folder of the workspace than the file it moves; move files within one folder');
    return source.fs.rename(source.inner, target.inner);
  }

  async delete(requested: string): Promise<void> {
    const { fs, inner } = await this.place(requested);
    return fs.delete(inner);
  }
}
