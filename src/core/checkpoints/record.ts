// The checkpoint record: what one accept or one agent turn changed, path by path (the state before,
// the state after), and whether it is undone. One JSON file per checkpoint; this module reads and checks it.
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { isFileState, type FileState } from './fileState';
import { parseJsonObject } from '../fs/jsonObject';
import { isRelativePosix } from '../fs/paths';

/** What made the change: an accepted speculation or a turn of the live agent. */
export type CheckpointOrigin =
  | { kind: 'accept'; suggestion: string; runId: string }
  | { kind: 'turn'; prompt: string };

export interface CheckpointFile {
  /** Workspace-relative POSIX path. */
  path: string;
  before: FileState;
  /** Null while the change is still being recorded (the write has not happened yet). */
  after: FileState | null;
}

/** What an undo did, so it can be redone exactly. */
export interface UndoneState {
  at: number;
  /** Paths the undo restored, each with the state it replaced (what redo puts back). */
  paths: { path: string; replaced: FileState }[];
  /** Paths the undo left as the user had them. */
  kept: string[];
  /** Folders the undo created (to restore a file into), removed again by redo once empty. */
  createdDirs: string[];
  /** Folders the change had created and the undo removed, re-created by redo. */
  removedDirs: string[];
}

export interface CheckpointRecord {
  version: 1;
  id: string;
  /** Realpath of the workspace the paths belong to. */
  workspaceRoot: string;
  createdAt: number;
  origin: CheckpointOrigin;
  /**
   * recording: its process is still changing files (or died doing so: finished at the next start).
   * applied: the change is in the workspace. undone: it was taken back (see `undo`).
   */
  state: 'recording' | 'applied' | 'undone';
  /** The process recording it; recovery finishes a recording whose process is gone. */
  pid: number;
  files: CheckpointFile[];
  /** Folders the change created for new files (parents first), removed by undo once empty. */
  createdDirs: string[];
  /** Folders the change removed (emptied by its deletions), re-created by undo. */
  removedDirs: string[];
  undo?: UndoneState;
  /** Refs (and HEAD) an accept moved in the repository (commit ahead); undo moves them back by compare-and-swap. */
  git?: CheckpointGitMoves;
}

/** An accept's ref moves as the checkpoint keeps them; HEAD as its file's text ("ref: refs/heads/x" or an object id). */
export interface CheckpointGitMoves {
  refs: { name: string; old: string | null; new: string }[];
  head?: { old: string; new: string };
  /** 'undone' once an undo moved them back (a redo moves them forward again). */
  state: 'applied' | 'undone';
}

/** A checkpoint id as the CLI and the UI pass it: a plain file name, nothing that could be a path. */
const PLAIN_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export function isPlainCheckpointId(id: string): boolean {
  return PLAIN_NAME.test(id) && !id.includes('..');
}

/** Sortable by time (UTC, to the second) and unique: `20261201-101530-3fa9c2d1`. */
export function newCheckpointId(now: number): string {
  const stamp = new Date(now).toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-${randomBytes(4).toString('hex')}`;
}

function isOrigin(value: unknown): value is CheckpointOrigin {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  if (v.kind === 'accept') return typeof v.suggestion === 'string' && typeof v.runId === 'string';
  return v.kind === 'turn' && typeof v.prompt === 'string';
}

function isFile(value: unknown): value is CheckpointFile {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return isRelativePosix(v.path) && isFileState(v.before) && (v.after === null || isFileState(v.after));
}

function isUndone(value: unknown): value is UndoneState {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.at === 'number' &&
    Array.isArray(v.paths) &&
    v.paths.every((p: unknown) => typeof p === 'object' && p !== null && isRelativePosix((p as { path?: unknown }).path) && isFileState((p as { replaced?: unknown }).replaced)) &&
    Array.isArray(v.kept) && v.kept.every(isRelativePosix) &&
    Array.isArray(v.createdDirs) && v.createdDirs.every(isRelativePosix) &&
    Array.isArray(v.removedDirs) && v.removedDirs.every(isRelativePosix)
  );
}

const OID = /^[0-9a-f]{40}([0-9a-f]{24})?$/;
const REF_NAME = /^refs\/(heads|tags)\/[^\0\s]+$/;
const HEAD_TEXT = /^(ref: refs\/heads\/[^\0\s]+|[0-9a-f]{40}([0-9a-f]{24})?)$/;

function isGitMoves(value: unknown): value is CheckpointGitMoves {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  const head = v.head as Record<string, unknown> | undefined;
  return (
    (v.state === 'applied' || v.state === 'undone') &&
    Array.isArray(v.refs) &&
    v.refs.every((r: unknown) => {
      const ref = r as Record<string, unknown>;
      return typeof ref === 'object' && ref !== null && typeof ref.name === 'string' && REF_NAME.test(ref.name) && !ref.name.split('/').includes('..') && (ref.old === null || (typeof ref.old === 'string' && OID.test(ref.old))) && typeof ref.new === 'string' && OID.test(ref.new);
    }) &&
    (head === undefined || (typeof head === 'object' && head !== null && typeof head.old === 'string' && HEAD_TEXT.test(head.old) && typeof head.new === 'string' && HEAD_TEXT.test(head.new)))
  );
}

/** Parses a record file; undefined when it is not one this module wrote for `id` (then nothing acts on it). */
export function parseRecord(text: string, id: string): CheckpointRecord | undefined {
  const v = parseJsonObject(text);
  if (!v) return undefined;
  const valid =
    v.version === 1 &&
    v.id === id &&
    typeof v.workspaceRoot === 'string' && path.isAbsolute(v.workspaceRoot) &&
    typeof v.createdAt === 'number' &&
    isOrigin(v.origin) &&
    (v.state === 'recording' || v.state === 'applied' || v.state === 'undone') &&
    typeof v.pid === 'number' &&
    Array.isArray(v.files) && v.files.every(isFile) &&
    new Set((v.files as CheckpointFile[]).map((f) => f.path)).size === v.files.length &&
    Array.isArray(v.createdDirs) && v.createdDirs.every(isRelativePosix) &&
    Array.isArray(v.removedDirs) && v.removedDirs.every(isRelativePosix) &&
    (v.undo === undefined || isUndone(v.undo)) &&
    (v.git === undefined || isGitMoves(v.git)) &&
    (v.state !== 'undone' || v.undo !== undefined) &&
    (v.state === 'recording' || (v.files as CheckpointFile[]).every((f) => f.after !== null));
  return valid ? (v as unknown as CheckpointRecord) : undefined;
}

/** Every content hash the record needs kept in the blob store. */
export function blobsOf(record: CheckpointRecord): string[] {
  const hashes = new Set<string>();
  const add = (state: FileState | null) => {
    if (state?.exists) hashes.add(state.sha256);
  };
  for (const file of record.files) add(file.before);
  // What an undo replaced is what its redo puts back.
  for (const entry of record.undo?.paths ?? []) add(entry.replaced);
  return [...hashes];
}

export type ChangeKind = 'modified' | 'created' | 'deleted';

export function changeKindOf(file: CheckpointFile): ChangeKind {
  if (!file.before.exists) return 'created';
  return file.after && !file.after.exists ? 'deleted' : 'modified';
}

/** What the UI shows of a checkpoint. Plain data. */
export interface CheckpointSummary {
  id: string;
  createdAt: number;
  origin: CheckpointOrigin;
  state: CheckpointRecord['state'];
  files: { path: string; change: ChangeKind }[];
}

export function summaryOf(record: CheckpointRecord): CheckpointSummary {
  return {
    id: record.id,
    createdAt: record.createdAt,
    origin: { ...record.origin },
    state: record.state,
    files: record.files.map((file) => ({ path: file.path, change: changeKindOf(file) })),
  };
}
