// The write-ahead journal of one accept: which files are staged as temps beside their targets and
// whether the commit point was passed, so the next start can roll an interrupted accept forward or back.
import * as path from 'node:path';
import type { ApplyFs } from './applyFs';

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

const TEMP_NAME = /^\..*\.speculate-[0-9a-f]{16}\.tmp$/;
/** The longest file name (bytes) the common file systems take (ext4, xfs, btrfs, APFS, tmpfs). */
const NAME_MAX_BYTES = 255;
/** `.` + `.speculate-<16 hex>.tmp`: the fixed part of every temp name. */
const TEMP_FIXED_BYTES = 1 + '.speculate-'.length + 16 + '.tmp'.length;

/** The longest prefix of `name` that fits in `maxBytes` of UTF-8 without cutting a character. */
function utf8Prefix(name: string, maxBytes: number): string {
  if (Buffer.byteLength(name, 'utf8') <= maxBytes) return name;
  let bytes = 0;
  let end = 0;
  for (const char of name) {
    const size = Buffer.byteLength(char, 'utf8');
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += char.length;
  }
  return name.slice(0, end);
}

/**
 * The temp name for `target`: hidden, beside it (same directory → same file system → atomic
 * rename), named after it so a leftover is recognisable — its name cut short so the temp fits the
 * file system's name limit whatever the target's own length (a valid 255-byte name included).
 */
export function tempPathFor(target: string, token: string): string {
  const dir = path.posix.dirname(target);
  const name = `.${utf8Prefix(path.posix.basename(target), NAME_MAX_BYTES - TEMP_FIXED_BYTES)}.speculate-${token}.tmp`;
  return dir === '.' ? name : `${dir}/${name}`;
}

/** True when `temp` is a temp this module would have named for `target`. */
export function isTempFor(target: string, temp: string): boolean {
  if (path.posix.dirname(temp) !== path.posix.dirname(target)) return false;
  const name = path.posix.basename(temp);
  if (!TEMP_NAME.test(name)) return false;
  const stem = name.slice(1, name.length - '.speculate-'.length - 16 - '.tmp'.length);
  return stem === utf8Prefix(path.posix.basename(target), NAME_MAX_BYTES - TEMP_FIXED_BYTES);
}

export async function writeJournal(fs: ApplyFs, overlayDir: string, journal: ApplyJournal): Promise<void> {
  const temp = path.join(overlayDir, JOURNAL_TEMP);
  await fs.unlink(temp);
  await fs.writeDurable(temp, JSON.stringify(journal));
  await fs.rename(temp, path.join(overlayDir, JOURNAL_FILE));
  await fs.fsyncDirectory(overlayDir);
}

export async function removeJournal(fs: ApplyFs, overlayDir: string): Promise<void> {
  await fs.unlink(path.join(overlayDir, JOURNAL_TEMP));
  await fs.unlink(path.join(overlayDir, JOURNAL_FILE));
  await fs.fsyncDirectory(overlayDir);
}

function isExpectation(value: unknown): value is FileExpectation {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  if (v.exists === false) return true;
  return v.exists === true && typeof v.sha256 === 'string' && typeof v.size === 'number';
}

function isRelativePosix(value: unknown): value is string {
  return typeof value === 'string' && value !== '' && !value.startsWith('/') && !value.includes('\0') && !value.split('/').some((part) => part === '..' || part === '' || part === '.');
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
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
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
  return valid ? (value as ApplyJournal) : undefined;
}

export { JOURNAL_TEMP };
