// The middle lower layer of a kept sandbox (one per speculation), brought up to date before each
// command by what changed in the speculation since the last one, instead of built anew every time.
//
// Why this is safe: each command mounts its own overlay over the layer and that mount is gone when
// the command's namespace ends, so between commands nothing has the layer mounted (overlayfs forbids
// changing a lower layer under a live mount). The speculation's overlay stays the one truth: what the
// layer holds is compared with it, so a command's changes (taken into the overlay), the engine's own
// edits between commands and its reverts all arrive the same way. Updates that are more than adding or
// replacing files and file deletions (a revert, a deleted folder, a file where a folder was) rebuild
// the layer whole, with layerBuilder.ts, into a fresh folder.
import { lstatSync, mkdirSync, chmodSync, linkSync, unlinkSync } from 'node:fs';
import * as path from 'node:path';
import { buildLayer, placeFile } from './layerBuilder';
import { removeTree } from './scratch';
import type { SandboxLayer } from './shellSandbox';

type Held = { kind: 'file'; contentPath: string; mode: number } | { kind: 'deleted' };

export interface SessionLayerOptions {
  /** The session's folder; layers are made in it as layer-1, layer-2, … */
  dir: string;
  realRoot: string;
  /** A whiteout (character device 0/0) on the same disk, made once when first needed. */
  whiteout: () => Promise<string>;
}

export interface LayerUpdate {
  /** The folder to stack, or undefined when the speculation changed nothing (the real workspace is the view). */
  dir: string | undefined;
  /** How the layer was brought up to date: for the bench and the tests. */
  how: 'unchanged' | 'incremental' | 'rebuilt' | 'empty';
  /** Entries added or replaced by an incremental update. */
  placed: number;
}

function sameHeld(a: Held | undefined, b: Held): boolean {
  if (!a || a.kind !== b.kind) return false;
  return a.kind === 'deleted' || (b.kind === 'file' && a.contentPath === b.contentPath && a.mode === b.mode);
}

function ancestorsOf(file: string): string[] {
  const parts = file.split('/');
  return parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join('/'));
}

export class SessionLayer {
  private generation = 0;
  private current: string | undefined;
  /** What `current` holds, by workspace path. */
  private held = new Map<string, Held>();
  private heldDeletedDirs: string[] = [];

  constructor(private readonly options: SessionLayerOptions) {}

  /** Makes the layer show `layer`; call only while no command of the session runs. */
  async update(layer: SandboxLayer | undefined): Promise<LayerUpdate> {
    const wanted = new Map<string, Held>();
    for (const file of layer?.deletedFiles ?? []) wanted.set(file, { kind: 'deleted' });
    // A path both written and deleted is written (the layer builder's rule).
    for (const file of layer?.files ?? []) wanted.set(file.path, { kind: 'file', contentPath: file.contentPath, mode: file.mode });
    const deletedDirs = [...(layer?.deletedDirs ?? [])].sort();
    if (wanted.size === 0 && deletedDirs.length === 0) return { dir: undefined, how: 'empty', placed: 0 };
    if (this.current === undefined || !this.canUpdate(wanted, deletedDirs)) return this.rebuild(layer!, wanted, deletedDirs);
    let placed = 0;
    for (const [file, entry] of wanted) {
      if (sameHeld(this.held.get(file), entry)) continue;
      await this.place(file, entry);
      this.held.set(file, entry);
      placed++;
    }
    return { dir: this.current, how: placed === 0 ? 'unchanged' : 'incremental', placed };
  }

  /** Whether only files and file deletions were added or replaced, at paths whose folders are plain folders in the layer. */
  private canUpdate(wanted: Map<string, Held>, deletedDirs: string[]): boolean {
    if (deletedDirs.length > 0 || this.heldDeletedDirs.length > 0) return false;
    for (const file of this.held.keys()) if (!wanted.has(file)) return false;
    const folders = new Set<string>();
    for (const [file, entry] of wanted) if (entry.kind === 'file') for (const folder of ancestorsOf(file)) folders.add(folder);
    for (const [file, entry] of wanted) {
      if (sameHeld(this.held.get(file), entry)) continue;
      // A deletion that is also a folder of a written file is left out by the builder; a path held as one kind of entry whose folder must now exist is a shape change.
      if (folders.has(file)) return false;
      if (ancestorsOf(file).some((folder) => this.held.has(folder))) return false;
    }
    return true;
  }

  private async place(file: string, entry: Held): Promise<void> {
    const target = path.join(this.current!, ...file.split('/'));
    this.makeParents(file);
    if (this.held.has(file)) unlinkSync(target);
    if (entry.kind === 'file') placeFile(entry.contentPath, target, entry.mode);
    else linkSync(await this.options.whiteout(), target);
  }

  /** The folders above a file, each with the mode of the real folder it covers (the top layer's folder is what the command sees). */
  private makeParents(file: string): void {
    for (const folder of ancestorsOf(file)) {
      const at = path.join(this.current!, ...folder.split('/'));
      try {
        lstatSync(at);
        continue;
      } catch {
        // Not made yet.
      }
      let mode = 0o755;
      try {
        const real = lstatSync(path.join(this.options.realRoot, ...folder.split('/')));
        if (real.isDirectory()) mode = real.mode & 0o7777;
      } catch {
        // A folder that exists only in the speculation.
      }
      mkdirSync(at, { mode });
      chmodSync(at, mode);
    }
  }

  private async rebuild(layer: SandboxLayer, wanted: Map<string, Held>, deletedDirs: string[]): Promise<LayerUpdate> {
    const old = this.current;
    this.current = undefined;
    this.held = new Map();
    this.heldDeletedDirs = [];
    if (old) await removeTree(old);
    const dir = path.join(this.options.dir, `layer-${++this.generation}`);
    mkdirSync(dir, { mode: 0o755 });
    await buildLayer({ layer, realRoot: this.options.realRoot, dir, whiteout: this.options.whiteout });
    this.current = dir;
    this.held = wanted;
    this.heldDeletedDirs = deletedDirs;
    return { dir, how: 'rebuilt', placed: wanted.size };
  }
}
