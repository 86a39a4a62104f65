// Shared fixtures for the overlay tests: a temp workspace with a sibling "outside" folder, full
// tree snapshots (bytes, modes, symlink targets) to prove nothing else changed, and a helper that
// opens an overlay over the real NodeWorkspaceFs.
import { createHash } from 'node:crypto';
import { chmod, lstat, mkdir, mkdtemp, readFile, readlink, readdir, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { NodeWorkspaceFs } from '../../../src/core/fs/nodeWorkspaceFs';
import { OverlayFs, type OverlayFsOptions } from '../../../src/core/followup/overlayFs';

export interface FileSpec {
  content: string;
  mode?: number;
}

export interface Sandbox {
  /** The mkdtemp folder holding everything below; removed by dispose. */
  parent: string;
  /** Realpath of the workspace. */
  ws: string;
  /** A sibling folder that must never change. */
  outside: string;
  /** The temp root overlays are created under. */
  tmpRoot: string;
  base: NodeWorkspaceFs;
  overlays: OverlayFs[];
  open(options?: Partial<OverlayFsOptions>): Promise<OverlayFs>;
  write(relative: string, content: string, mode?: number): Promise<void>;
  read(relative: string): Promise<string>;
  dispose(): Promise<string[]>;
}

export async function makeSandbox(files: Record<string, string | FileSpec>, outsideFiles: Record<string, string> = { 'secret.txt': 'outside secret\n' }): Promise<Sandbox> {
  const parent = await realpath(await mkdtemp(path.join(os.tmpdir(), 'speculate-overlay-test-')));
  const ws = path.join(parent, 'ws');
  const outside = path.join(parent, 'outside');
  const tmpRoot = path.join(parent, 'tmp');
  await mkdir(ws);
  await mkdir(outside);
  await mkdir(tmpRoot);
  const put = async (root: string, relative: string, content: string, mode?: number) => {
    const file = path.join(root, relative);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content);
    if (mode !== undefined) await chmod(file, mode);
  };
  for (const [relative, spec] of Object.entries(files)) {
    if (typeof spec === 'string') await put(ws, relative, spec);
    else await put(ws, relative, spec.content, spec.mode);
  }
  for (const [relative, content] of Object.entries(outsideFiles)) await put(outside, relative, content);
  const base = await NodeWorkspaceFs.open(ws);
  const overlays: OverlayFs[] = [];
  return {
    parent,
    ws,
    outside,
    tmpRoot,
    base,
    overlays,
    async open(options = {}) {
      const overlay = await OverlayFs.create({ base, tmpRoot, ...options });
      overlays.push(overlay);
      return overlay;
    },
    write: (relative, content, mode) => put(ws, relative, content, mode),
    read: (relative) => readFile(path.join(ws, relative), 'utf8'),
    /** Cleans every overlay up and returns the overlay folders that were still there afterwards. */
    async dispose() {
      const left: string[] = [];
      for (const overlay of overlays) {
        await overlay.cleanup();
        if (await exists(overlay.dir)) left.push(overlay.dir);
      }
      await rm(parent, { recursive: true, force: true });
      return left;
    },
  };
}

export async function exists(target: string): Promise<boolean> {
  try {
    await lstat(target);
    return true;
  } catch {
    return false;
  }
}

/** Every entry below `root` with its type, mode and content hash (or link target), for exact comparison. */
export async function snapshot(root: string): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  const visit = async (dir: string) => {
    for (const name of (await readdir(dir)).sort()) {
      const full = path.join(dir, name);
      const relative = path.relative(root, full);
      const info = await lstat(full);
      const mode = (info.mode & 0o7777).toString(8);
      if (info.isSymbolicLink()) {
        result[relative] = `link ${await readlink(full)}`;
      } else if (info.isDirectory()) {
        result[relative] = `dir ${mode}`;
        await visit(full);
      } else {
        result[relative] = `file ${mode} ${createHash('sha256').update(await readFile(full)).digest('hex')}`;
      }
    }
  };
  await visit(root);
  return result;
}

/** Names of leftover accept temps below `root`. */
export async function tempFiles(root: string): Promise<string[]> {
  const snap = await snapshot(root);
  return Object.keys(snap).filter((file) => /\.speculate-[0-9a-f]+\.tmp$/.test(file));
}

export async function makeSymlink(target: string, linkPath: string): Promise<void> {
  await mkdir(path.dirname(linkPath), { recursive: true });
  await symlink(target, linkPath);
}

export function text(data: Uint8Array): string {
  return Buffer.from(data).toString('utf8');
}

/** Runs `work` and returns the error it threw (fails when it does not throw). */
export async function thrown(work: () => Promise<unknown>): Promise<Error> {
  try {
    await work();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the call to throw');
}
