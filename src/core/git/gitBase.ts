// What the speculation's git commands saw of the real repository when the first of them ran: every
// ref's value, where HEAD pointed, and the index's digest. Tab's compare-and-swap checks against it.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { gitOrThrow } from './gitCommand';
import type { GitRepository } from './repository';
import { sameIndexEntries } from '../sandbox/gitIndex';

/** HEAD as a branch it points to, or a detached commit. */
export type HeadState = { kind: 'symbolic'; ref: string } | { kind: 'detached'; oid: string };

export interface GitBase {
  refs: ReadonlyMap<string, string>;
  head: HeadState;
  /** sha256 of .git/index's bytes, or null when there was none. */
  indexDigest: string | null;
  /** The index's bytes (up to INDEX_KEPT_BYTES), to tell a stat refresh (git status) from a real change. */
  indexBytes: Buffer | null;
}

/** Larger indexes are compared by digest alone: any change to them, a refresh too, keeps the user's index. */
const INDEX_KEPT_BYTES = 32 * 1024 * 1024;

async function readIndex(gitDir: string): Promise<Buffer | null> {
  try {
    return await readFile(path.join(gitDir, 'index'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/**
 * Whether the index is still the one the speculation read: the same bytes, or the same entries
 * (a `git status` or the editor's git refreshed only the stat data it caches).
 */
export async function indexUnchanged(gitDir: string, base: GitBase): Promise<boolean> {
  const now = await readIndex(gitDir);
  if (now === null || base.indexDigest === null) return now === null && base.indexDigest === null;
  if (createHash('sha256').update(now).digest('hex') === base.indexDigest) return true;
  return base.indexBytes !== null && sameIndexEntries(base.indexBytes, now);
}

/** HEAD as its file says (read directly: git would resolve it). */
export function parseHead(text: string): HeadState | undefined {
  const trimmed = text.trim();
  if (trimmed.startsWith('ref: ')) return { kind: 'symbolic', ref: trimmed.slice(5).trim() };
  if (/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(trimmed)) return { kind: 'detached', oid: trimmed };
  return undefined;
}

/** HEAD as its file holds it, without the newline. */
export function headFileText(head: HeadState): string {
  return head.kind === 'symbolic' ? `ref: ${head.ref}` : head.oid;
}

export async function readHead(gitDir: string): Promise<HeadState> {
  const head = parseHead(await readFile(path.join(gitDir, 'HEAD'), 'utf8'));
  if (!head) throw new Error('HEAD is neither a branch nor a commit');
  return head;
}

/** Every ref's value (loose and packed alike), by name. */
export async function readRefs(gitDir: string): Promise<Map<string, string>> {
  const text = await gitOrThrow(['for-each-ref', '--format=%(objectname) %(refname)'], { gitDir });
  const refs = new Map<string, string>();
  for (const line of text.split('\n')) {
    const at = line.indexOf(' ');
    if (at > 0) refs.set(line.slice(at + 1), line.slice(0, at));
  }
  return refs;
}

export async function readBase(repository: GitRepository): Promise<GitBase> {
  const [refs, head, index] = await Promise.all([readRefs(repository.gitDir), readHead(repository.gitDir), readIndex(repository.gitDir)]);
  return {
    refs,
    head,
    indexDigest: index === null ? null : createHash('sha256').update(index).digest('hex'),
    indexBytes: index !== null && index.length <= INDEX_KEPT_BYTES ? index : null,
  };
}

export function sameHead(a: HeadState, b: HeadState): boolean {
  return a.kind === 'symbolic' ? b.kind === 'symbolic' && a.ref === b.ref : b.kind === 'detached' && a.oid === b.oid;
}
