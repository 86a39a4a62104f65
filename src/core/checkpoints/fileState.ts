// What a checkpoint remembers of one path at one moment: absent, or a file with its content hash,
// size and permission bits. Comparisons look at content only, as the accept's conflict check does.
import { createHash } from 'node:crypto';

export type FileState = { exists: false } | { exists: true; sha256: string; size: number; mode: number };

export const ABSENT: FileState = Object.freeze({ exists: false });

export function sha256(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

export function stateOf(data: Uint8Array, mode: number): FileState {
  return { exists: true, sha256: sha256(data), size: data.length, mode: mode & 0o7777 };
}

/** Same existence and, for files, the same bytes (by hash and size); the mode is not compared. */
export function sameContent(a: FileState, b: FileState): boolean {
  if (!a.exists || !b.exists) return a.exists === b.exists;
  return a.sha256 === b.sha256 && a.size === b.size;
}

const SHA256 = /^[0-9a-f]{64}$/;

export function isSha256(value: unknown): value is string {
  return typeof value === 'string' && SHA256.test(value);
}

export function isFileState(value: unknown): value is FileState {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  if (v.exists === false) return true;
  return v.exists === true && isSha256(v.sha256) && isCount(v.size) && isCount(v.mode) && (v.mode as number) <= 0o7777;
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}
