// The write-ahead journal of one accept: which files are staged as temps beside their targets and
// whether the commit point was passed, so the next start can roll an interrupted accept forward or back.
import * as path from 'node:path';
import { isTempFor } from '../../fs/tempNames';
import type { ApplyFs } from './applyFs';
import { parseJsonObject } from '../../fs/jsonObject';
import { isRelativePosix } from '../../fs/paths';

export const JOURNAL_FILE = 'apply-journal.json';
const JOURNAL_TEMP = `${JOURNAL_FILE}.tmp`;

/** What the real file held when the accept checked it; recovery only proceeds if it still does. */
export type FileExpectation = { exists: false } | { exists: true; sha256: string; size: number };

export interface JournalStep {
  /** Workspace-relative POSIX path of the real file. */
  path: string;
  action: 'write' | 'delete';
  /** Workspace-relative temp file beside `path` holding the new content (write steps only). */
  temp?: string;
  expect: FileExpectation;
}

export interface ApplyJournal {
  version: 1;
  /** Realpath of the workspace, so recovery knows where the paths live. */
  workspaceRoot: string;
  overlayId: string;
  /** 'staging': temps may be incomplete → roll back. 'committing': all temps are durable → roll forward. */
  phase: 'staging' | 'committing';
  steps: JournalStep[];
  /** Directories the accept created for new files (parents first), removed again on roll back. */
  createdDirs: string[];
}

export { isTempFor, tempPathFor } from '../../fs/tempNames';

export async function writeJournal(fs: ApplyFs, overlayDir: string, journal: ApplyJournal): Promise<void> {
  const temp = path.join(overlayDir, JOURNAL_TEMP);
  await fs.unlink(temp);
  await fs.writeDurable(temp, JSON.stringify(journal));
  await fs.rename(temp, path.join(overlayDir, JOURNAL_FILE));
  await fs.fsyncDirectory(overlayDir);
}

/** Removes the journal, durably; after a finished commit (`committed`) its temp is known to be renamed away. */
export async function removeJournal(fs: ApplyFs, overlayDir: string, options: { committed?: boolean } = {}): Promise<void> {
  if (!options.committed) await fs.unlink(path.join(overlayDir, JOURNAL_TEMP));
  await fs.unlink(path.join(overlayDir, JOURNAL_FILE));
  await fs.fsyncDirectory(overlayDir);
}

function isExpectation(value: unknown): value is FileExpectation {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  if (v.exists === false) return true;
  return v.exists === true && typeof v.sha256 === 'string' && typeof v.size === 'number';
}

function isStep(value: unknown): value is JournalStep {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  if (!isRelativePosix(v.path) || !isExpectation(v.expect)) return false;
  if (v.action === 'delete') return v.temp === undefined;
  return v.action === 'write' && isRelativePosix(v.temp) && isTempFor(v.path, v.temp);
}

/** Parses a journal; undefined when the text is not one this module wrote (then it is not acted on). */
export function parseJournal(text: string): ApplyJournal | undefined {
  const v = parseJsonObject(text);
  if (!v) return undefined;
  const valid =
    v.version === 1 &&
    typeof v.workspaceRoot === 'string' &&
    path.isAbsolute(v.workspaceRoot) &&
    typeof v.overlayId === 'string' &&
    (v.phase === 'staging' || v.phase === 'committing') &&
    Array.isArray(v.steps) &&
    v.steps.every(isStep) &&
    Array.isArray(v.createdDirs) &&
    v.createdDirs.every(isRelativePosix);
  return valid ? (v as unknown as ApplyJournal) : undefined;
}

export { JOURNAL_TEMP };
