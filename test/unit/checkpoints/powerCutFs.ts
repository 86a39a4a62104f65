// A fault-injection port for power cuts: the accept's and the checkpoints' disk operations pass
// through to the real disk and are recorded; any prefix of the record can then be replayed in a model
// that keeps only what was fsync'd (file data by fsync of the file, names by fsync of their folder)
// and written back to disk as the machine would find it after the power came back.
import { chmod, mkdir, readdir, readFile, rm, writeFile, lstat } from 'node:fs/promises';
import * as path from 'node:path';
import { nodeApplyFs, type ApplyFs } from '../../../src/core/followup/overlay/applyFs';
import { nodeCheckpointFs, type CheckpointFs } from '../../../src/core/checkpoints/checkpointFs';

type Op =
  | { op: 'create'; path: string; data: Buffer; mode: number | undefined }
  | { op: 'fsync'; path: string }
  /** Bytes written over the start of an existing file (a redo log into its slot): not durable until its fsync. */
  | { op: 'overwrite'; path: string; data: Buffer }
  | { op: 'rename'; from: string; to: string }
  /** A second name of an existing file (a replaced file set aside). */
  | { op: 'link'; from: string; to: string }
  | { op: 'unlink'; path: string }
  | { op: 'mkdir'; path: string }
  | { op: 'rmdir'; path: string }
  | { op: 'fsyncDir'; path: string };

type Node = { kind: 'file'; ino: number } | { kind: 'dir'; mode?: number };

interface Inode {
  data: Buffer;
  /** What a power cut leaves of it: the bytes at its last fsync (none: an empty file). */
  durable: Buffer;
  mode: number | undefined;
  /**
   * What a torn power cut leaves of an overwrite not yet flushed: its first sector new, the rest as
   * last flushed (a disk writes sectors, not files). Undefined when nothing is pending.
   */
  torn?: Buffer;
}

/** The sector a torn overwrite gets onto the disk. */
const SECTOR = 512;

/** A file system state: every path under the watched roots, and the inodes the files point at. */
class Model {
  readonly live = new Map<string, Node>();
  readonly durable = new Map<string, Node>();
  readonly inodes = new Map<number, Inode>();
  private next = 1;

  addInitial(file: string, node: { kind: 'dir'; mode?: number } | { kind: 'file'; data: Buffer; mode: number }): void {
    if (node.kind === 'dir') {
      this.live.set(file, node);
      this.durable.set(file, node);
      return;
    }
    const ino = this.next++;
    this.inodes.set(ino, { data: node.data, durable: node.data, mode: node.mode });
    this.live.set(file, { kind: 'file', ino });
    this.durable.set(file, { kind: 'file', ino });
  }

  apply(op: Op): void {
    switch (op.op) {
      case 'create': {
        const ino = this.next++;
        this.inodes.set(ino, { data: op.data, durable: Buffer.alloc(0), mode: op.mode });
        this.live.set(op.path, { kind: 'file', ino });
        return;
      }
      case 'fsync': {
        const node = this.live.get(op.path);
        if (node?.kind === 'file') {
          const inode = this.inodes.get(node.ino)!;
          inode.durable = inode.data;
          inode.torn = undefined;
        }
        return;
      }
      case 'overwrite': {
        const node = this.live.get(op.path);
        if (node?.kind !== 'file') return;
        const inode = this.inodes.get(node.ino)!;
        inode.data = Buffer.concat([op.data, inode.data.subarray(op.data.length)]);
        inode.torn = Buffer.concat([op.data.subarray(0, SECTOR), inode.durable.subarray(Math.min(SECTOR, op.data.length))]);
        return;
      }
      case 'link': {
        const node = this.live.get(op.from);
        if (node) this.live.set(op.to, node);
        return;
      }
      case 'rename': {
        const node = this.live.get(op.from);
        if (!node) return;
        this.live.delete(op.from);
        this.live.set(op.to, node);
        return;
      }
      case 'unlink':
      case 'rmdir':
        this.live.delete(op.path);
        return;
      case 'mkdir':
        if (!this.live.has(op.path)) this.live.set(op.path, { kind: 'dir' });
        return;
      case 'fsyncDir': {
        // The folder's entries as they are now become what survives; nothing else does.
        const names = new Set([...this.live.keys(), ...this.durable.keys()].filter((p) => path.dirname(p) === op.path));
        for (const name of names) {
          const node = this.live.get(name);
          if (node) this.durable.set(name, node);
          else this.durable.delete(name);
        }
        return;
      }
    }
  }
}

export class PowerCutFs {
  readonly ops: Op[] = [];
  private initial = new Map<string, { kind: 'dir'; mode?: number } | { kind: 'file'; data: Buffer; mode: number }>();
  private roots: string[] = [];
  /** Index into `ops` right after each call of `mark` (e.g. the commit point). */
  readonly marks = new Map<string, number>();

  /** Snapshots the watched folders as durable (the state before the change) and starts recording. */
  async watch(roots: string[]): Promise<void> {
    this.roots = roots;
    this.initial = new Map();
    this.ops.length = 0;
    const walk = async (dir: string): Promise<void> => {
      for (const entry of await readdir(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        if (entry.isDirectory()) {
          this.initial.set(file, { kind: 'dir', mode: (await lstat(file)).mode & 0o7777 });
          await walk(file);
        } else if (entry.isFile()) {
          this.initial.set(file, { kind: 'file', data: await readFile(file), mode: (await lstat(file)).mode & 0o7777 });
        }
      }
    };
    for (const root of roots) await walk(root);
  }

  mark(name: string): void {
    this.marks.set(name, this.ops.length);
  }

  private watched(file: string): boolean {
    return this.roots.some((root) => file === root || file.startsWith(`${root}${path.sep}`));
  }

  private record(op: Op): void {
    const paths = op.op === 'rename' || op.op === 'link' ? [op.from, op.to] : [op.path];
    if (paths.some((p) => this.watched(p))) this.ops.push(op);
  }

  /** What survives a power cut after the first `count` operations: path → bytes (or a folder). */
  survivors(count: number, torn = false): Map<string, { kind: 'dir'; mode?: number } | { kind: 'file'; data: Buffer; mode: number | undefined }> {
    const model = new Model();
    for (const [file, node] of this.initial) model.addInitial(file, node);
    for (const op of this.ops.slice(0, count)) model.apply(op);
    const reachable = (file: string): boolean => {
      for (let dir = path.dirname(file); !this.roots.includes(dir) && this.watched(dir); dir = path.dirname(dir)) {
        if (model.durable.get(dir)?.kind !== 'dir') return false;
      }
      return true;
    };
    const out = new Map<string, { kind: 'dir'; mode?: number } | { kind: 'file'; data: Buffer; mode: number | undefined }>();
    for (const [file, node] of model.durable) {
      if (!reachable(file)) continue;
      if (node.kind === 'dir') out.set(file, node);
      else {
        const inode = model.inodes.get(node.ino)!;
        out.set(file, { kind: 'file', data: torn && inode.torn ? inode.torn : inode.durable, mode: inode.mode });
      }
    }
    return out;
  }

  /**
   * Writes the survivors of a power cut after `count` operations onto the disk, in place of the
   * watched folders. `torn`: an overwrite not yet flushed got its first sector onto the disk.
   */
  async cutAfter(count: number, torn = false): Promise<void> {
    const survivors = this.survivors(count, torn);
    for (const root of this.roots) {
      const mode = (await lstat(root)).mode & 0o7777;
      await rm(root, { recursive: true, force: true });
      await mkdir(root, { recursive: true });
      await chmod(root, mode);
    }
    const sorted = [...survivors].sort(([a], [b]) => a.split(path.sep).length - b.split(path.sep).length);
    for (const [file, node] of sorted) {
      if (node.kind === 'dir') {
        await mkdir(file).catch(() => undefined);
        await chmod(file, node.mode ?? 0o755);
      } else {
        await writeFile(file, node.data);
        await chmod(file, node.mode ?? 0o644);
      }
    }
  }

  /** A key of the durable state: two prefixes with the same key leave the same disk. */
  stateKey(count: number, torn = false): string {
    return JSON.stringify([...this.survivors(count, torn)].sort(([a], [b]) => (a < b ? -1 : 1)).map(([file, node]) => [file, node.kind === 'dir' ? 'd' : node.data.toString('base64')]));
  }

  readonly applyFs: ApplyFs = {
    ...nodeApplyFs,
    writeDurable: async (destination, data, options = {}) => {
      await nodeApplyFs.writeDurable(destination, data, options);
      this.record({ op: 'create', path: destination, data: Buffer.from(typeof data === 'string' ? Buffer.from(data) : data), mode: options.mode });
      this.record({ op: 'fsync', path: destination });
    },
    createFile: async (destination, data, options) => {
      await nodeApplyFs.createFile(destination, data, options);
      this.record({ op: 'create', path: destination, data: Buffer.from(data), mode: options.mode });
      if (options.sync) this.record({ op: 'fsync', path: destination });
    },
    linkNew: async (source, destination, options) => {
      await nodeApplyFs.linkNew(source, destination, options);
      // A new name of a file whose bytes the model only knows now; flushed when asked.
      this.record({ op: 'create', path: destination, data: await readFile(destination), mode: options.mode });
      if (options.sync) this.record({ op: 'fsync', path: destination });
    },
    copyNew: async (source, destination, mode) => {
      await nodeApplyFs.copyNew(source, destination, mode);
      this.record({ op: 'create', path: destination, data: await readFile(destination), mode });
    },
    fsyncFile: async (absolute) => {
      await nodeApplyFs.fsyncFile(absolute);
      this.record({ op: 'fsync', path: absolute });
    },
    overwriteInPlace: async (absolute, data) => {
      await nodeApplyFs.overwriteInPlace(absolute, data);
      // Two steps in the record: a cut between them finds the bytes written but not flushed.
      this.record({ op: 'overwrite', path: absolute, data: Buffer.from(data) });
      this.record({ op: 'fsync', path: absolute });
    },
    link: async (from, to) => {
      await nodeApplyFs.link(from, to);
      this.record({ op: 'link', from, to });
    },
    rename: async (from, to) => {
      await nodeApplyFs.rename(from, to);
      this.record({ op: 'rename', from, to });
    },
    unlink: async (absolute) => {
      await nodeApplyFs.unlink(absolute);
      this.record({ op: 'unlink', path: absolute });
    },
    mkdir: async (absolute) => {
      await nodeApplyFs.mkdir(absolute);
      this.record({ op: 'mkdir', path: absolute });
    },
    rmdirIfEmpty: async (absolute) => {
      const removed = await nodeApplyFs.rmdirIfEmpty(absolute);
      if (removed) this.record({ op: 'rmdir', path: absolute });
      return removed;
    },
    fsyncDirectory: async (absolute) => {
      await nodeApplyFs.fsyncDirectory(absolute);
      this.record({ op: 'fsyncDir', path: absolute });
    },
  };

  readonly checkpointFs: CheckpointFs = {
    ...nodeCheckpointFs,
    writeDurable: async (absolute, data, mode) => {
      await nodeCheckpointFs.writeDurable(absolute, data, mode);
      this.record({ op: 'create', path: absolute, data: Buffer.from(typeof data === 'string' ? Buffer.from(data) : data), mode });
      this.record({ op: 'fsync', path: absolute });
    },
    createFile: async (absolute, data, options) => {
      await nodeCheckpointFs.createFile(absolute, data, options);
      this.record({ op: 'create', path: absolute, data: Buffer.from(data), mode: options.mode });
      if (options.sync) this.record({ op: 'fsync', path: absolute });
    },
    linkNew: async (source, destination, options) => {
      await nodeCheckpointFs.linkNew(source, destination, options);
      this.record({ op: 'create', path: destination, data: await readFile(destination), mode: options.mode });
      if (options.sync) this.record({ op: 'fsync', path: destination });
    },
    fsyncFile: async (absolute) => {
      await nodeCheckpointFs.fsyncFile(absolute);
      this.record({ op: 'fsync', path: absolute });
    },
    overwriteInPlace: async (absolute, data) => {
      await nodeCheckpointFs.overwriteInPlace(absolute, data);
      // Two steps in the record: a cut between them finds the bytes written but not flushed.
      this.record({ op: 'overwrite', path: absolute, data: Buffer.from(data) });
      this.record({ op: 'fsync', path: absolute });
    },
    link: async (from, to) => {
      await nodeCheckpointFs.link(from, to);
      this.record({ op: 'link', from, to });
    },
    rename: async (from, to) => {
      await nodeCheckpointFs.rename(from, to);
      this.record({ op: 'rename', from, to });
    },
    unlink: async (absolute) => {
      await nodeCheckpointFs.unlink(absolute);
      this.record({ op: 'unlink', path: absolute });
    },
    mkdir: async (absolute, mode) => {
      await nodeCheckpointFs.mkdir(absolute, mode);
      this.record({ op: 'mkdir', path: absolute });
    },
    rmdirIfEmpty: async (absolute) => {
      const removed = await nodeCheckpointFs.rmdirIfEmpty(absolute);
      if (removed) this.record({ op: 'rmdir', path: absolute });
      return removed;
    },
    fsyncDirectory: async (absolute) => {
      await nodeCheckpointFs.fsyncDirectory(absolute);
      this.record({ op: 'fsyncDir', path: absolute });
    },
  };
}
