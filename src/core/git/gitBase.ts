// What the speculation's git commands saw of the real repository when the first of them ran: every
// ref's value, where HEAD pointed, and the index's digest. Tab's compare-and-swap checks against it.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { gitOrThrow } from './gitCommand';
import type { GitRepository } from './repository';

/** HEAD as a branch it points to, or a detached commit. */
export type HeadState = { kind: 'symbolic'; ref: string } | { kind: 'detached'; oid: string };

export interface GitBase {
  refs: ReadonlyMap<string, string>;
  head: HeadState;
  /** sha256 of .git/index's bytes, or null when there was none. */
  indexDigest: string | null;
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

export async function indexDigest(gitDir: string): Promise<string | null> {
  try {
    return createHash('sha256').update(await readFile(path.join(gitDir, 'index'))).digest('hex');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
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
  const [refs, head, digest] = await Promise.all([readRefs(repository.gitDir), readHead(repository.gitDir), indexDigest(repository.gitDir)]);
  return { refs, head, indexDigest: digest };
}

export function sameHead(a: HeadState, b: HeadState): boolean {
  return a.kind === 'symbolic' ? b.kind === 'symbolic' && a.ref === b.ref : b.kind === 'detached' && a.oid === b.oid;
}
