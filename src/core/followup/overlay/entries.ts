// What the overlay remembers per touched path: the base the real file had when it was first
// touched (for conflict checks on accept) and where the speculation's version is stored.
import { createHash } from 'node:crypto';

/** What changes whenever a file's content is replaced or rewritten, even by a tool that restores the mtime. */
export interface StatIdentity {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
  mode: number;
}

/** The real file as the overlay first saw it; a file that did not exist yet has `exists: false`. */
export type BaseRecord =
  | { exists: false }
  | {
      exists: true;
      /** Worked out off the write's path (a background read of an unchanged file, or a hash on the thread pool). */
      sha256: Promise<string>;
      size: number;
      mtimeMs: number;
      mode: number;
      /**
       * The identity of the file whose content `sha256` hashes, when any later change to it is
       * sure to change the identity too (see trustedIdentity): while the real file still has it,
       * accept knows it unchanged without reading it again.
       */
      identity?: StatIdentity;
    };

export interface WrittenEntry {
  kind: 'written';
  base: BaseRecord;
  /** File name of the content inside the overlay's blob folder. */
  blob: string;
  /** Hashed on the thread pool for large contents; accept awaits it. */
  sha256: Promise<string>;
  size: number;
  mtimeMs: number;
  /** Permission bits to give the real file; undefined = the default mode for new files. */
  mode: number | undefined;
}

export interface DeletedEntry {
  kind: 'deleted';
  base: Extract<BaseRecord, { exists: true }>;
}

export type OverlayEntry = WrittenEntry | DeletedEntry;

export type WrittenKind = 'modified' | 'created' | 'deleted';

export function kindOf(entry: OverlayEntry): WrittenKind {
  if (entry.kind === 'deleted') return 'deleted';
  return entry.base.exists ? 'modified' : 'created';
}

export function sha256(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** True when `candidate` is `dir` itself or lies below it ('' is the workspace root). */
export function isAtOrBelow(dir: string, candidate: string): boolean {
  return dir === '' || candidate === dir || candidate.startsWith(`${dir}/`);
}

/** Strictly below `dir`. */
export function isBelow(dir: string, candidate: string): boolean {
  return dir === '' ? candidate !== '' : candidate.startsWith(`${dir}/`);
}
