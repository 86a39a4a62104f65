// The speculation's private git layer: what its sandboxed git commands wrote under .git, kept in
// overlayfs's lower-layer format (files at their paths) so the next command sees it over the real
// .git. A command's own writes arrive in a fresh folder and join the layer only if every path is
// one commit-ahead knows how to carry over; a command that failed adds nothing.
import { existsSync } from 'node:fs';
import { copyFile, lstat, mkdir, readdir, readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { parseHead, type HeadState } from './gitBase';
import { verifyLooseObject } from './objectCopy';

/** What a layer changes, read from its files; the accept turns it into compare-and-swaps. */
export interface LayerEffects {
  /** Loose objects, as paths relative to .git (objects/ab/cdef…). */
  objects: string[];
  /** Branches and tags written, with the value they hold in the layer. */
  refs: { name: string; oid: string }[];
  /** HEAD as the layer left it, when it wrote HEAD. */
  head?: HeadState;
  /** Absolute path of the layer's index, when a command wrote it. */
  index?: string;
}

/** One command's .git writes as the checks see them: object folders top first, its index, the ref values it wrote. */
export interface WrittenGit {
  objectDirs: string[];
  index?: string;
  tips: string[];
}

export type AbsorbResult = { ok: true; paths: string[] } | { ok: false; detail: string };

/** Paths under .git a speculated add/commit/branch/tag/restore --staged may write, and nothing else. */
function allowedPath(relative: string, oidLength: number): boolean {
  if (new RegExp(`^objects/[0-9a-f]{2}/[0-9a-f]{${oidLength - 2}}$`).test(relative)) return true;
  if (/^(refs|logs\/refs)\/(heads|tags)\/./.test(relative)) return !relative.split('/').some((part) => part === '' || part === '.' || part === '..' || part.endsWith('.lock'));
  return ['index', 'HEAD', 'COMMIT_EDITMSG', 'logs/HEAD'].includes(relative);
}

interface Walked {
  files: string[];
  problem?: string;
}

/** Every regular file below `dir` (relative paths); the first entry that is not a file or folder is a problem. */
async function walkFiles(dir: string, prefix = ''): Promise<Walked> {
  const files: string[] = [];
  let entries;
  try {
    entries = await readdir(path.join(dir, prefix), { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { files };
    throw error;
  }
  for (const entry of entries) {
    const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isDirectory()) {
      const below = await walkFiles(dir, relative);
      files.push(...below.files);
      if (below.problem) return { files, problem: below.problem };
    } else if (entry.isFile()) {
      files.push(relative);
    } else {
      // A whiteout (git removed something of the real .git), a symlink or a device: nothing the accept can carry.
      return { files, problem: entry.isCharacterDevice() ? `it removed .git/${relative}` : `it created .git/${relative}, which is not a plain file` };
    }
  }
  return { files };
}

export class GitLayer {
  constructor(
    /** The layer folder: mounted as the middle lower of .git in the next command's sandbox. */
    readonly dir: string,
    private readonly oidLength: 40 | 64,
  ) {}

  /**
   * Takes one command's .git writes (its overlay upper folder) into the layer, or refuses them all
   * with the first path it cannot carry over (packed refs, config, a branch deleted …).
   */
  async absorb(upper: string, check?: (written: WrittenGit) => Promise<string | undefined>): Promise<AbsorbResult> {
    const walked = await walkFiles(upper);
    if (walked.problem) return { ok: false, detail: walked.problem };
    const refused = walked.files.find((file) => !allowedPath(file, this.oidLength));
    if (refused) return { ok: false, detail: `it wrote .git/${refused}, which a speculated commit cannot carry over` };
    for (const file of walked.files) {
      const info = await lstat(path.join(upper, file));
      if (!info.isFile()) return { ok: false, detail: `.git/${file} is not a plain file` };
    }
    for (const file of walked.files.filter((f) => f.startsWith('objects/'))) {
      try {
        verifyLooseObject(file, await readFile(path.join(upper, file)), this.oidLength);
      } catch (error) {
        return { ok: false, detail: `it left a damaged object: ${error instanceof Error ? error.message : String(error)}` };
      }
    }
    // Checked over the layer as it would be, before anything joins it: a refused command leaves the layer as it was.
    const oid = new RegExp(`^[0-9a-f]{${this.oidLength}}$`);
    const tips: string[] = [];
    for (const file of walked.files.filter((f) => f.startsWith('refs/') || f === 'HEAD')) {
      const value = (await readFile(path.join(upper, file), 'utf8')).trim();
      if (oid.test(value)) tips.push(value);
      else if (file !== 'HEAD' || !/^ref: refs\/heads\/[^\s]+$/.test(value)) return { ok: false, detail: `it left .git/${file} holding neither an object id nor a branch` };
    }
    const objectDirs = [path.join(upper, 'objects'), path.join(this.dir, 'objects')].filter((dir) => existsSync(dir));
    const problem = await check?.({ objectDirs, ...(walked.files.includes('index') ? { index: path.join(upper, 'index') } : {}), tips });
    if (problem) return { ok: false, detail: problem };
    for (const file of walked.files) {
      await mkdir(path.dirname(path.join(this.dir, file)), { recursive: true, mode: 0o755 });
      await copyFile(path.join(upper, file), path.join(this.dir, file));
    }
    return { ok: true, paths: walked.files.filter((file) => !file.startsWith('logs/') && !file.startsWith('objects/') && file !== 'COMMIT_EDITMSG') };
  }

  async effects(): Promise<LayerEffects> {
    const { files } = await walkFiles(this.dir);
    const refs: { name: string; oid: string }[] = [];
    const oid = new RegExp(`^[0-9a-f]{${this.oidLength}}$`);
    for (const file of files.filter((f) => f.startsWith('refs/'))) {
      const value = (await readFile(path.join(this.dir, file), 'utf8')).trim();
      if (!oid.test(value)) throw new Error(`the speculated ${file} holds no object id`);
      refs.push({ name: file, oid: value });
    }
    const effects: LayerEffects = { objects: files.filter((f) => f.startsWith('objects/')).sort(), refs: refs.sort((a, b) => a.name.localeCompare(b.name)) };
    if (files.includes('HEAD')) {
      const head = parseHead(await readFile(path.join(this.dir, 'HEAD'), 'utf8'));
      if (!head) throw new Error('the speculated HEAD is neither a branch nor a commit');
      effects.head = head;
    }
    if (files.includes('index')) effects.index = path.join(this.dir, 'index');
    return effects;
  }

  /** The reflog message git wrote for the layer's last update of `ref` to `oid`, if it wrote one. */
  async reflogMessage(ref: string, oid: string): Promise<string | undefined> {
    let text: string;
    try {
      text = await readFile(path.join(this.dir, 'logs', ref), 'utf8');
    } catch {
      return undefined;
    }
    const last = text.trimEnd().split('\n').pop() ?? '';
    const [ids, message] = last.split('\t');
    return ids?.split(' ')[1] === oid && message ? message : undefined;
  }
}
