// What kind of thing a path is on disk, from an lstat/stat answer: regular files and folders are
// the only things tools work on; FIFOs, sockets and devices are named so a refusal can say what it saw.
import type { Stats } from 'node:fs';
import type { SpecialKind } from './workspaceFs';

/** The special kind of a stat result, or undefined for regular files, folders and symlinks. */
export function specialKindOf(info: Pick<Stats, 'isFIFO' | 'isSocket' | 'isCharacterDevice' | 'isBlockDevice' | 'isFile' | 'isDirectory' | 'isSymbolicLink'>): SpecialKind | undefined {
  if (info.isFile() || info.isDirectory() || info.isSymbolicLink()) return undefined;
  if (info.isFIFO()) return 'fifo';
  if (info.isSocket()) return 'socket';
  if (info.isCharacterDevice()) return 'character device';
  if (info.isBlockDevice()) return 'block device';
  return 'special file';
}
