// The file-system port every tool works through. The real workspace and the speculation overlay
// both implement it, so a tool never knows (and never rewrites paths for) which one it runs on.

/** What a path is; symlinks are reported after resolution, so callers never see 'symlink'. */
export type EntryType = 'file' | 'directory';

/** What stat reports: also 'special' for FIFOs, sockets and devices, which no tool opens. */
export type StatType = EntryType | 'special';

export interface FileStat {
  type: StatType;
  size: number;
  mtimeMs: number;
  /** POSIX permission bits, kept so an applied file keeps the original's mode. */
  mode: number;
}

export interface DirEntry {
  name: string;
  type: EntryType;
}

export interface SearchMatch {
  /** Workspace-relative POSIX path. */
  path: string;
  /** 1-based line number. */
  line: number;
  text: string;
}

export interface GlobOptions {
  /** Workspace-relative directory to search below; defaults to the workspace root. */
  cwd?: string;
  /** Skip files ignored by .gitignore (default true). */
  respectGitignore?: boolean;
  /** Stop after this many results. */
  limit?: number;
}

export interface WriteOptions {
  /** Checked right before anything is replaced: a call stopped (cancelled, timed out) writes nothing. */
  signal?: AbortSignal;
  /**
   * Compare-and-replace: the file must still be as the caller read it (or still absent), checked
   * under the workspace lock; otherwise WriteRefusedError('changed') and nothing is written.
   */
  expect?: WriteExpectation;
}

export interface SearchOptions {
  /** Workspace-relative file or directory to search; defaults to the workspace root. */
  path?: string;
  /** Only files whose workspace-relative path matches this glob. */
  glob?: string;
  /** Stop after this many matches. */
  limit?: number;
  signal?: AbortSignal;
}

/**
 * A workspace seen through workspace-relative POSIX paths ('' is the root).
 * Every method takes paths that `resolve` produced; implementations re-check them anyway.
 */
export interface WorkspaceFs {
  /** Absolute, symlink-resolved path of the workspace root. */
  readonly root: string;
  /**
   * Turns a tool's path argument (absolute or workspace-relative) into a workspace-relative POSIX
   * path, following symlinks. Throws PathOutsideWorkspaceError when it would leave the workspace.
   */
  resolve(path: string): Promise<string>;
  readFile(path: string): Promise<Uint8Array>;
  writeFile(path: string, data: Uint8Array | string, options?: WriteOptions): Promise<void>;
  /** Undefined when nothing exists at the path. */
  stat(path: string): Promise<FileStat | undefined>;
  list(path: string): Promise<DirEntry[]>;
  /** Workspace-relative paths of files matching a glob pattern, sorted. */
  glob(pattern: string, options?: GlobOptions): Promise<string[]>;
  /** Lines matching a regular expression (JavaScript/ripgrep syntax). */
  search(pattern: string, options?: SearchOptions): Promise<SearchMatch[]>;
  rename(from: string, to: string): Promise<void>;
  delete(path: string): Promise<void>;
}

/** A path that resolves outside the workspace; the speculation engine turns it into a boundary. */
export class PathOutsideWorkspaceError extends Error {
  constructor(readonly requested: string, detail = 'resolves outside the workspace') {
    super(`Path "${requested}" ${detail}; only files inside the workspace can be used.`);
    this.name = 'PathOutsideWorkspaceError';
  }
}

/** Nothing exists at a path a caller needed to exist. */
export class FileNotFoundError extends Error {
  constructor(readonly path: string) {
    super(`File not found: ${path}`);
    this.name = 'FileNotFoundError';
  }
}

/**
 * A failure of the engine's own machinery, not of the tool call: a tool lets it through instead of
 * reporting it to the model, and its caller decides (a speculation stops at a boundary or fails).
 */
export class EngineFault extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EngineFault';
  }
}

export type SpecialKind = 'fifo' | 'socket' | 'character device' | 'block device' | 'special file';

/** A FIFO, socket or device: refused without being opened (opening a FIFO can block for ever). */
export class SpecialFileError extends Error {
  constructor(readonly path: string, readonly kind: SpecialKind) {
    super(`${path || '.'} is a ${kind === 'fifo' ? 'named pipe (FIFO)' : kind}, not a regular file; only regular files can be read or written.`);
    this.name = 'SpecialFileError';
  }
}

/** A new file or folder name that is almost surely a typo (see paths.unsafeNewName); nothing was written. */
export class UnsafeNameError extends Error {
  constructor(readonly path: string, readonly component: string, why: string) {
    super(`Refusing to create ${JSON.stringify(component)}: the name ${why}. Paths are used exactly as given; send the name without it.`);
    this.name = 'UnsafeNameError';
  }
}

export type WriteRefusal =
  /** The file changed since the caller read it (compare-and-replace). */
  | 'changed'
  /** The file, or the folder it would be created in, was made read-only (no owner write bit). */
  | 'read-only'
  /** Replacing it would change its owner or group, which this process cannot keep. */
  | 'foreign-owner'
  /** The disk (or the quota) has no room for the new content. */
  | 'no-space'
  /** The disk is mounted read-only. */
  | 'read-only-disk'
  /** The operating system refused to create the file there (permissions). */
  | 'not-permitted';

/** A write that was not done, for a reason the user can act on; the old file is untouched. */
export class WriteRefusedError extends Error {
  constructor(
    readonly path: string,
    readonly reason: WriteRefusal,
    message: string,
  ) {
    super(message);
    this.name = 'WriteRefusedError';
  }
}

/**
 * What a caller saw of a file before writing it: the write happens only if the file still holds
 * that — the bytes it read (their hash), or for a caller that only looked (write_file), its size
 * and modification time.
 */
export type WriteExpectation = { exists: false } | { exists: true; sha256: string } | { exists: true; size: number; mtimeMs: number };
