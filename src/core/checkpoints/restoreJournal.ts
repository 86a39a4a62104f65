// The write-ahead journal of one undo (or redo): which files are staged as temps beside their
// targets and whether the commit point was passed, so the next start rolls an interrupted one
// forward or back. One journal per checkpoint; creating it is also the lock against a second undo.
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { isTempFor, tempPathFor } from '../fs/tempNames';
import type { CheckpointFs } from './checkpointFs';
import { isFileState, type FileState } from './fileState';
import { isRelativePosix } from '../fs/paths';
import { parseJsonObject } from '../fs/jsonObject';

export interface RestoreStep {
  /** Workspace-relative POSIX path of the real file. */
  path: string;
  action: 'write' | 'delete';
  /** Workspace-relative temp beside `path` holding the restored content (write steps only). */
  temp?: string;
  /** What the file held when the undo checked it; committing proceeds only if it still does. */
  expect: FileState;
  /** What it holds once restored, so recovery can tell a step already done from one never reached. */
  result: FileState;
}

export interface RestoreJournal {
  version: 1;
  checkpointId: string;
  direction: 'undo' | 'redo';
  /** The process doing it; a journal of a process that is gone is recovered. */
  pid: number;
  workspaceRoot: string;
  phase: 'staging' | 'committing';
  steps: RestoreStep[];
  /** Folders made for restored files (parents first); removed again on roll back. */
  createdDirs: string[];
  /** Folders to remove once empty after the commit. */
  removeDirs: string[];
  /** Folders to create after the commit. */
  recreateDirs: string[];
  /** Per path: the state this restore replaces (what the reverse operation puts back). */
  replaced: { path: string; replaced: FileState }[];
  /** Paths left as the user has them. */
  kept: string[];
}

/** Hidden, beside the target (same folder → same file system → atomic rename), short enough for any name. */
export function restoreTempFor(target: string, token = randomBytes(8).toString('hex')): string {
  return tempPathFor(target, token, 'speculate-undo');
}

export function isRestoreTempFor(target: string, temp: string): boolean {
  return isTempFor(target, temp, 'speculate-undo');
}

export function journalPath(journalsDir: string, checkpointId: string): string {
  return path.join(journalsDir, `${checkpointId}.json`);
}

/** Creates the journal; fails with EEXIST while another undo of the same checkpoint holds it. */
export async function createJournal(fs: CheckpointFs, journalsDir: string, journal: RestoreJournal): Promise<void> {
  await fs.writeDurable(journalPath(journalsDir, journal.checkpointId), JSON.stringify(journal), 0o600);
  await fs.fsyncDirectory(journalsDir);
}

/** Replaces the journal atomically (a crash leaves the old or the new one, never half of either). */
export async function updateJournal(fs: CheckpointFs, journalsDir: string, journal: RestoreJournal): Promise<void> {
  const temp = path.join(journalsDir, `.${journal.checkpointId}.${randomBytes(6).toString('hex')}.tmp`);
  await fs.writeDurable(temp, JSON.stringify(journal), 0o600);
  await fs.rename(temp, journalPath(journalsDir, journal.checkpointId));
  await fs.fsyncDirectory(journalsDir);
}

export async function removeJournal(fs: CheckpointFs, journalsDir: string, checkpointId: string): Promise<void> {
  await fs.unlink(journalPath(journalsDir, checkpointId));
  await fs.fsyncDirectory(journalsDir);
}

function isStep(value: unknown): value is RestoreStep {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  if (!isRelativePosix(v.path) || !isFileState(v.expect) || !isFileState(v.result)) return false;
  if (v.action === 'delete') return v.temp === undefined;
  return v.action === 'write' && isRelativePosix(v.temp) && isRestoreTempFor(v.path, v.temp);
}

/** Parses a journal; undefined when the text is not one this module wrote (then it is not acted on). */
export function parseJournal(text: string, checkpointId: string): RestoreJournal | undefined {
  const v = parseJsonObject(text);
  if (!v) return undefined;
  const dirs = (key: string) => Array.isArray(v[key]) && (v[key] as unknown[]).every(isRelativePosix);
  const valid =
    v.version === 1 &&
    v.checkpointId === checkpointId &&
    (v.direction === 'undo' || v.direction === 'redo') &&
    typeof v.pid === 'number' &&
    typeof v.workspaceRoot === 'string' && path.isAbsolute(v.workspaceRoot) &&
    (v.phase === 'staging' || v.phase === 'committing') &&
    Array.isArray(v.steps) && v.steps.every(isStep) &&
    dirs('createdDirs') && dirs('removeDirs') && dirs('recreateDirs') && dirs('kept') &&
    Array.isArray(v.replaced) &&
    v.replaced.every((r: unknown) => typeof r === 'object' && r !== null && isRelativePosix((r as { path?: unknown }).path) && isFileState((r as { replaced?: unknown }).replaced));
  return valid ? (v as unknown as RestoreJournal) : undefined;
}
