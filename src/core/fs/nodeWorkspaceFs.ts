// The real workspace behind the WorkspaceFs port: node:fs under a realpath'd root, every path
// re-checked against the workspace boundary, with glob and content search that honour .gitignore.
import * as fs from 'node:fs/promises';
import { constants as fsConstants, type Dirent } from 'node:fs';
import * as path from 'node:path';
import { IGNORE_FILE_NAMES } from './gitignore';
import { globToRegExp, literalPrefix, maxGlobDepth } from './globMatch';
import { createHash } from 'node:crypto';
import { describeWriteFailure, folderRefusal, replaceFileAtomically } from './atomicWrite';
import { specialKindOf } from './fileKind';
import { assertCreatableNames, isWithin, placeInsideWorkspace, resolveInsideWorkspace, toAbsolute, toWorkspaceRelative, type Placement } from './paths';
import { findExecutable, ripgrepFiles, ripgrepTree } from './ripgrep';
import { compareMatches, compileSearchPattern, isBinary, matchLines, MAX_SEARCH_FILE_BYTES, searchGlobFilter } from './textSearch';
import { comparePaths, joinPath, walkFiles, type TreeEntry, type TreeSource } from './treeWalk';
import {
  FileNotFoundError,
  PathOutsideWorkspaceError,
  SpecialFileError,
  WriteRefusedError,
  type DirEntry,
  type FileStat,
  type GlobOptions,
  type SearchMatch,
  type SearchOptions,
  type WorkspaceFs,
  type WriteExpectation,
  type WriteOptions,
} from './workspaceFs';
import { processLock, type WorkspaceLock } from './workspaceLock';

export interface NodeWorkspaceFsOptions {
  /**
   * ripgrep binary for `search`: undefined = look for `rg` on PATH, null = always use the
   * JavaScript search, a string = that binary.
   */
  ripgrepPath?: string | null;
  /** Files larger than this are skipped by `search` (default MAX_SEARCH_FILE_BYTES). */
  maxSearchFileBytes?: number;
  /**
   * The workspace lock live writes take for their compare-and-replace (the same one accept holds);
   * by default one shared by this process's users of the folder.
   */
  lock?: WorkspaceLock;
}

/** Files handed to one search step (one ripgrep process); bounds argv size and lets a limit stop early. */
const SEARCH_CHUNK_FILES = 512;
const DEFAULT_SEARCH_LIMIT = 10_000;
const JS_READ_BATCH = 32;
const DEFAULT_GLOB_LIMIT = 100_000;

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

export class NodeWorkspaceFs implements WorkspaceFs {
  private readonly aliases: string[];
  private readonly ripgrepPath: string | undefined;
  private readonly maxSearchFileBytes: number;

  /** Held by every write here and by every accept into this folder. */
  readonly lock: WorkspaceLock;

  private constructor(readonly root: string, spelledRoot: string, options: NodeWorkspaceFsOptions) {
    this.aliases = spelledRoot !== root ? [spelledRoot] : [];
    this.lock = options.lock ?? processLock(root);
    this.ripgrepPath = options.ripgrepPath === undefined ? findExecutable('rg', [root]) : (options.ripgrepPath ?? undefined);
    this.maxSearchFileBytes = options.maxSearchFileBytes ?? MAX_SEARCH_FILE_BYTES;
  }

  /** Opens a workspace; the root is realpath'd and the given spelling kept as an alias for absolute paths. */
  static async open(rootPath: string, options: NodeWorkspaceFsOptions = {}): Promise<NodeWorkspaceFs> {
    const spelled = path.resolve(rootPath);
    let real: string;
    try {
      real = await fs.realpath(spelled);
    } catch {
      throw new Error(`Workspace folder ${spelled} does not exist or cannot be read; open an existing folder.`);
    }
    const info = await fs.stat(real);
    if (!info.isDirectory()) throw new Error(`Workspace ${spelled} is not a folder; open a folder.`);
    return new NodeWorkspaceFs(real, spelled, options);
  }

  /** Which search backend is in use, for diagnostics and tests. */
  get searchBackend(): 'ripgrep' | 'javascript' {
    return this.ripgrepPath ? 'ripgrep' : 'javascript';
  }

  resolve(requested: string): Promise<string> {
    return resolveInsideWorkspace(this.root, requested, this.aliases);
  }

  /** resolve() with what the walk found on disk, so a caller (the overlay) need not ask again. */
  place(requested: string): Promise<Placement> {
    return placeInsideWorkspace(this.root, requested, this.aliases);
  }

  private async absolute(requested: string): Promise<{ relative: string; absolute: string }> {
    const relative = await this.resolve(requested);
    return { relative, absolute: toAbsolute(this.root, relative) };
  }

  async readFile(requested: string): Promise<Uint8Array> {
    const { relative, absolute } = await this.absolute(requested);
    // A FIFO would block the read for ever and a device may never end: refused before opening.
    await this.assertNotSpecial(relative, absolute);
    let handle: fs.FileHandle;
    try {
      // O_NONBLOCK: should a FIFO be swapped in after the check, opening it still returns at once.
      handle = await fs.open(absolute, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK | fsConstants.O_NOCTTY);
    } catch (error) {
      if (errorCode(error) === 'ENOENT' || errorCode(error) === 'ENOTDIR') throw new FileNotFoundError(relative);
      if (errorCode(error) === 'EISDIR') throw new Error(`${relative || '.'} is a directory, not a file.`);
      throw error;
    }
    try {
      const info = await handle.stat();
      if (info.isDirectory()) throw new Error(`${relative || '.'} is a directory, not a file.`);
      const special = specialKindOf(info);
      if (special) throw new SpecialFileError(relative, special);
      return await handle.readFile();
    } catch (error) {
      if (errorCode(error) === 'EISDIR') throw new Error(`${relative || '.'} is a directory, not a file.`);
      throw error;
    } finally {
      await handle.close();
    }
  }

  /** Throws SpecialFileError when the path (symlinks followed) is a FIFO, socket or device; never opens it. */
  private async assertNotSpecial(relative: string, absolute: string): Promise<void> {
    const info = await fs.stat(absolute).catch(() => undefined);
    const special = info && specialKindOf(info);
    if (special) throw new SpecialFileError(relative, special);
  }

  /** Index of the first component of `relative` that does not exist yet (parts.length when all do). */
  private async firstMissingComponent(relative: string): Promise<number> {
    const parts = relative.split('/');
    for (let index = parts.length; index > 0; index--) {
      const exists = await fs.lstat(toAbsolute(this.root, parts.slice(0, index).join('/'))).then(() => true, () => false);
      if (exists) return index;
    }
    return 0;
  }

  async writeFile(requested: string, data: Uint8Array | string, options: WriteOptions = {}): Promise<void> {
    const { relative, absolute } = await this.absolute(requested);
    if (relative === '') throw new Error('Cannot write to the workspace folder itself; give a file path.');
    await this.assertNotSpecial(relative, absolute);
    assertCreatableNames(relative, await this.firstMissingComponent(relative));
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    await this.lock.hold(async () => {
      if (options.expect) await this.assertAsExpected(relative, absolute, options.expect);
      const createdDirs = await this.makeParents(relative, absolute, bytes.length);
      try {
        await replaceFileAtomically(relative, absolute, bytes, { signal: options.signal });
      } catch (error) {
        // Nothing of a failed write stays behind, not even the folders made for it.
        for (const dir of createdDirs.reverse()) await fs.rmdir(dir).catch(() => undefined);
        throw error;
      }
    });
  }

  /** Compare-and-replace: the file must still hold what the caller read (or still be missing). */
  private async assertAsExpected(relative: string, absolute: string, expect: WriteExpectation): Promise<void> {
    const info = await fs.stat(absolute).catch((error: unknown) => {
      if (errorCode(error) === 'ENOENT' || errorCode(error) === 'ENOTDIR') return undefined;
      throw error;
    });
    let unchanged: boolean;
    if (!expect.exists) unchanged = info === undefined;
    else if (!info) unchanged = false;
    else if ('sha256' in expect) unchanged = createHash('sha256').update(await fs.readFile(absolute)).digest('hex') === expect.sha256;
    else unchanged = info.size === expect.size && info.mtimeMs === expect.mtimeMs;
    if (!unchanged) {
      throw new WriteRefusedError(relative, 'changed', `${relative} was changed on disk after it was read (in the editor, another window or by a program); it was not written. Read it again and redo the change.`);
    }
  }

  /** Creates the missing folders above a file (parents first) and returns them, for cleanup on failure. */
  private async makeParents(relative: string, absolute: string, neededBytes: number): Promise<string[]> {
    const missing: string[] = [];
    for (let dir = path.dirname(absolute); dir !== this.root && !(await fs.lstat(dir).then(() => true, () => false)); dir = path.dirname(dir)) missing.unshift(dir);
    const created: string[] = [];
    if (missing.length > 0) {
      const above = path.dirname(missing[0]);
      const refusal = folderRefusal(toWorkspaceRelative(this.root, above), relative, await fs.stat(above));
      if (refusal) throw refusal;
    }
    for (const dir of missing) {
      try {
        await fs.mkdir(dir);
        created.push(dir);
      } catch (error) {
        if (errorCode(error) === 'EEXIST') continue;
        for (const made of created.reverse()) await fs.rmdir(made).catch(() => undefined);
        throw await describeWriteFailure(relative, absolute, error, neededBytes);
      }
    }
    return created;
  }

  async stat(requested: string): Promise<FileStat | undefined> {
    const { absolute } = await this.absolute(requested);
    try {
      const info = await fs.stat(absolute);
      const type = info.isDirectory() ? 'directory' : info.isFile() ? 'file' : 'special';
      return { type, size: info.size, mtimeMs: info.mtimeMs, mode: info.mode & 0o7777 };
    } catch (error) {
      if (errorCode(error) === 'ENOENT' || errorCode(error) === 'ENOTDIR') return undefined;
      throw error;
    }
  }

  async list(requested: string): Promise<DirEntry[]> {
    const { relative, absolute } = await this.absolute(requested);
    let dirents: Dirent[];
    try {
      dirents = await fs.readdir(absolute, { withFileTypes: true });
    } catch (error) {
      if (errorCode(error) === 'ENOENT') throw new FileNotFoundError(relative);
      if (errorCode(error) === 'ENOTDIR') throw new Error(`${relative} is a file, not a directory.`);
      throw error;
    }
    const entries = await Promise.all(dirents.map((dirent) => this.placeEntry(absolute, dirent, true)));
    return entries.filter((entry): entry is DirEntry => entry !== undefined).sort((a, b) => comparePaths(a.name, b.name));
  }

  /**
   * The type of a directory entry as callers see it. Symlinks are followed when they stay inside
   * the workspace; those leading out, dangling ones, and sockets or devices are left out.
   */
  private async placeEntry(dirAbsolute: string, dirent: Dirent, followDirLinks: boolean): Promise<DirEntry | undefined> {
    if (dirent.isFile()) return { name: dirent.name, type: 'file' };
    if (dirent.isDirectory()) return { name: dirent.name, type: 'directory' };
    if (!dirent.isSymbolicLink()) return undefined;
    try {
      const target = await fs.realpath(path.join(dirAbsolute, dirent.name));
      if (!isWithin(this.root, target)) return undefined;
      const info = await fs.stat(target);
      if (info.isFile()) return { name: dirent.name, type: 'file' };
      if (info.isDirectory() && followDirLinks) return { name: dirent.name, type: 'directory' };
      return undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * The walk's view of this workspace. Symlinked directories are never entered (no cycles, no
   * escapes); symlinked files are listed when they stay inside, unless `skipLinks` (search skips
   * every symlink, as ripgrep does).
   */
  private treeSource(skipLinks = false): TreeSource {
    return {
      entries: async (dir: string): Promise<TreeEntry[]> => {
        const absolute = toAbsolute(this.root, dir);
        let dirents: Dirent[];
        try {
          dirents = await fs.readdir(absolute, { withFileTypes: true });
        } catch {
          return [];
        }
        const kept = skipLinks ? dirents.filter((dirent) => !dirent.isSymbolicLink()) : dirents;
        const entries = await Promise.all(kept.map((dirent) => this.placeEntry(absolute, dirent, false)));
        return entries.filter((entry): entry is TreeEntry => entry !== undefined);
      },
      // Only for ignore files: a symlinked one is not followed (it could point anywhere).
      readText: async (file: string): Promise<string | undefined> => {
        try {
          const absolute = toAbsolute(this.root, file);
          if (!(await fs.lstat(absolute)).isFile()) return undefined;
          return await fs.readFile(absolute, 'utf8');
        } catch {
          return undefined;
        }
      },
    };
  }

  async glob(pattern: string, options: GlobOptions = {}): Promise<string[]> {
    const cwd = await this.resolve(options.cwd ?? '');
    const cwdInfo = await this.stat(cwd);
    if (!cwdInfo) throw new FileNotFoundError(cwd || '.');
    if (cwdInfo.type !== 'directory') throw new Error(`${cwd} is a file, not a directory to search in.`);
    const limit = options.limit ?? DEFAULT_GLOB_LIMIT;
    const { text: normalised, absolute } = this.relativePattern(pattern);
    if (normalised === '') return [];
    // An absolute pattern names paths from the root, whatever cwd says.
    const base = absolute ? '' : cwd;

    // Walk only below the literal part of the pattern, and no deeper than it can match.
    const { prefix, rest } = literalPrefix(normalised);
    let start = base;
    if (prefix !== '') {
      try {
        start = await this.resolve(joinPath(base, prefix));
      } catch (error) {
        if (error instanceof PathOutsideWorkspaceError) throw new PathOutsideWorkspaceError(pattern, 'reaches outside the workspace');
        throw error;
      }
      const startInfo = await this.stat(start);
      if (!startInfo) return [];
      if (startInfo.type === 'file') return [];
    }
    const regex = globToRegExp(rest);
    const startPrefix = start === '' ? '' : `${start}/`;
    const found: string[] = [];
    for await (const file of walkFiles(this.treeSource(), { start, respectGitignore: options.respectGitignore ?? true, maxDepth: maxGlobDepth(rest) })) {
      if (regex.test(file.slice(startPrefix.length))) {
        found.push(file);
        if (found.length >= limit) break;
      }
    }
    return found.sort(comparePaths);
  }

  /** A glob pattern relative to the workspace, or an error when it would reach outside it. */
  private relativePattern(pattern: string): { text: string; absolute: boolean } {
    let text = pattern;
    const absolute = path.isAbsolute(text);
    if (absolute) {
      const root = [this.root, ...this.aliases].find((candidate) => text === candidate || text.startsWith(candidate + '/'));
      if (!root) throw new PathOutsideWorkspaceError(pattern, 'is an absolute pattern outside the workspace');
      text = text.slice(root.length).replace(/^\/+/, '');
    }
    text = text.replace(/^(\.\/)+/, '');
    if (text.split('/').includes('..')) throw new PathOutsideWorkspaceError(pattern, 'uses ".." to leave the searched folder');
    return { text, absolute };
  }

  /**
   * Lines matching `pattern`, in path then line order. With ripgrep, it walks the folder itself
   * when its ignore flags can express our rules (no .gitignore between the root and the searched
   * folder), else it searches the files our own walk lists; without ripgrep, JavaScript does.
   */
  async search(pattern: string, options: SearchOptions = {}): Promise<SearchMatch[]> {
    const { signal } = options;
    const limit = options.limit ?? DEFAULT_SEARCH_LIMIT;
    const regex = this.ripgrepPath ? undefined : compileSearchPattern(pattern);
    const start = await this.resolve(options.path ?? '');
    const startInfo = await this.stat(start);
    if (!startInfo) throw new FileNotFoundError(start || '.');
    const glob = options.glob === '' ? undefined : options.glob;
    const wanted = searchGlobFilter(glob, startInfo.type === 'directory' ? start : '');

    if (this.ripgrepPath && startInfo.type === 'directory') {
      const ignoreFiles = await this.rootIgnoreFileFor(start);
      if (ignoreFiles) {
        const nameGlob = glob && !glob.includes('/') ? glob : undefined;
        return ripgrepTree(this.ripgrepPath, this.root, pattern, { start, ignoreFiles, nameGlob, keep: wanted, maxFileBytes: this.maxSearchFileBytes, limit, signal });
      }
    }

    const results: SearchMatch[] = [];
    let chunk: string[] = [];
    const flush = async () => {
      const files = await this.searchableFiles(chunk);
      chunk = [];
      const remaining = limit - results.length;
      const found = this.ripgrepPath
        ? await ripgrepFiles(this.ripgrepPath, this.root, pattern, files, remaining, signal)
        : await this.searchWithJavaScript(files, regex as RegExp, remaining, signal);
      results.push(...found);
    };

    const candidates = startInfo.type === 'file' ? singleFile(start) : walkFiles(this.treeSource(true), { start, signal });
    for await (const file of candidates) {
      if (!wanted(file)) continue;
      chunk.push(file);
      if (chunk.length >= SEARCH_CHUNK_FILES) {
        await flush();
        if (results.length >= limit) break;
      }
    }
    if (results.length < limit && chunk.length > 0) await flush();
    return results.sort(compareMatches).slice(0, limit);
  }

  /**
   * The --ignore-file list that makes ripgrep, walking `start`, apply the rules of the ignore files
   * above it. ripgrep takes them relative to the root and below every other ignore file, which is
   * right only for the root's own .gitignore. Undefined when another ignore file sits above
   * `start` (then our own walk decides).
   */
  private async rootIgnoreFileFor(start: string): Promise<string[] | undefined> {
    if (start === '') return [];
    const segments = start.split('/');
    for (let depth = 0; depth < segments.length; depth++) {
      const dir = segments.slice(0, depth).join('/');
      for (const name of IGNORE_FILE_NAMES) {
        if (depth === 0 && name === '.gitignore') continue;
        if (await this.exists(dir === '' ? name : `${dir}/${name}`)) return undefined;
      }
    }
    return (await this.exists('.gitignore')) ? ['.gitignore'] : [];
  }

  private async exists(relative: string): Promise<boolean> {
    try {
      await fs.access(toAbsolute(this.root, relative));
      return true;
    } catch {
      return false;
    }
  }

  /** Drops files too large to search; names stay workspace-relative. */
  private async searchableFiles(files: string[]): Promise<string[]> {
    const sizes = await Promise.all(
      files.map(async (file) => {
        try {
          return (await fs.stat(toAbsolute(this.root, file))).size;
        } catch {
          return Infinity;
        }
      }),
    );
    return files.filter((_, index) => sizes[index] <= this.maxSearchFileBytes);
  }

  private async searchWithJavaScript(files: string[], regex: RegExp, limit: number, signal?: AbortSignal): Promise<SearchMatch[]> {
    const found: SearchMatch[] = [];
    // Reads go out a batch at a time (one at a time is bound by round trips), results stay in order.
    for (let at = 0; at < files.length && found.length < limit; at += JS_READ_BATCH) {
      signal?.throwIfAborted();
      const batch = files.slice(at, at + JS_READ_BATCH);
      const contents = await Promise.all(batch.map((file) => fs.readFile(toAbsolute(this.root, file)).catch(() => undefined)));
      for (let index = 0; index < batch.length && found.length < limit; index++) {
        const data = contents[index];
        if (!data || isBinary(data)) continue;
        found.push(...matchLines(batch[index], data.toString('utf8'), regex, limit - found.length));
      }
    }
    return found;
  }

  async rename(from: string, to: string): Promise<void> {
    const source = await this.absolute(from);
    const target = await this.absolute(to);
    if (source.relative === '' || target.relative === '') throw new Error('Cannot rename the workspace folder itself.');
    assertCreatableNames(target.relative, await this.firstMissingComponent(target.relative));
    await this.lock.hold(async () => {
      await fs.mkdir(path.dirname(target.absolute), { recursive: true });
      try {
        await fs.rename(source.absolute, target.absolute);
      } catch (error) {
        if (errorCode(error) === 'ENOENT') throw new FileNotFoundError(source.relative);
        throw error;
      }
    });
  }

  /** Deletes a file, or a directory only when it is empty (nothing is ever removed recursively). */
  async delete(requested: string): Promise<void> {
    const { relative, absolute } = await this.absolute(requested);
    if (relative === '') throw new Error('Cannot delete the workspace folder itself.');
    const info = await this.stat(relative);
    if (!info) throw new FileNotFoundError(relative);
    await this.lock.hold(async () => {
      if (info.type !== 'directory') {
        await fs.unlink(absolute);
        return;
      }
      try {
        await fs.rmdir(absolute);
      } catch (error) {
        if (errorCode(error) === 'ENOTEMPTY' || errorCode(error) === 'EEXIST') {
          throw new Error(`Directory ${relative} is not empty; delete the files inside it first.`);
        }
        throw error;
      }
    });
  }
}

async function* singleFile(file: string): AsyncGenerator<string> {
  yield file;
}
