// The redo log of one accept (or undo): the plan and every new byte in one file whose fsync is the
// commit point. Framed with lengths and SHA-256 so a log torn by a crash is told from a whole one.
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { parseJsonObject } from './jsonObject';
import { isRelativePosix } from './paths';

/**
 * Files up to this size go through the redo log (their bytes in it, one fsync for all); larger ones
 * get a temp of their own, fsync'd before the commit point. Since an accept's temps are hard links to
 * the overlay's blobs, a large file's own fsync writes its bytes once, where the log writes them a
 * second time and in one stream; the log wins only while an fsync's fixed cost dominates. Measured
 * in bench engine-accept's setup (50 files per size, per-file ÷ log, same-run ratios to the durable
 * floor, issue 28, bench/RESULTS.md): 16–32 KB go faster through the log, 64 KB is even, from
 * 128 KB on a file's own fsync wins (256 KB: 0.9× against 1.9×; 1 MB: 1.3× against 5.4×).
 */
export const REDO_LOG_MAX_FILE_BYTES = 64 * 1024;

/** What a real file held when the change checked it; recovery writes only over exactly that. */
export type RedoExpectation = { exists: false } | { exists: true; sha256: string; size: number };

export interface RedoStep {
  /** Workspace-relative POSIX path of the real file. */
  path: string;
  action: 'write' | 'delete';
  expect: RedoExpectation;
  /** What a write leaves (content and mode); recovery tells a step already done by it. */
  after?: { sha256: string; size: number; mode?: number };
  /** Where the new bytes are in the log's body (small files). */
  data?: { offset: number; length: number };
  /**
   * The workspace-relative temp the step renames (every write): holding the new bytes durably
   * before the commit point for a large file (no `data`), written after it for a small one.
   */
  temp?: string;
}

export interface RedoPlan {
  version: 1;
  /** Which change this is: recovery of an undo or redo also settles its checkpoint's record. */
  kind: 'accept' | 'undo' | 'redo';
  /** The process that wrote it; a live process's log is its own business. */
  pid: number;
  /** Realpath of the workspace the paths belong to. */
  workspaceRoot: string;
  steps: RedoStep[];
  /** Folders made for new files (parents first). */
  createdDirs: string[];
  /** What the owner of the change needs to finish it on recovery (a checkpoint record, an undo journal); opaque here. */
  meta?: unknown;
}

const MAGIC = Buffer.from('SPECREDO1\n', 'latin1');
const HASH_BYTES = 32;

function digest(...parts: Uint8Array[]): Buffer {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest();
}

/**
 * The bytes of a log: magic, header length, header JSON, header hash, body length, body, and the
 * hash of everything before it. The header has its own hash so a torn log still names its temps.
 */
export function encodeRedoLog(plan: RedoPlan, body: readonly Uint8Array[]): Buffer {
  const header = Buffer.from(JSON.stringify(plan), 'utf8');
  const headerLength = Buffer.alloc(4);
  headerLength.writeUInt32BE(header.length);
  const bodyLength = Buffer.alloc(8);
  bodyLength.writeBigUInt64BE(BigInt(body.reduce((sum, part) => sum + part.byteLength, 0)));
  const front = [MAGIC, headerLength, header, digest(header), bodyLength, ...body];
  return Buffer.concat([...front, digest(...front)]);
}

export type DecodedRedoLog =
  /** Whole: the change is committed and must be completed. */
  | { committed: true; plan: RedoPlan; body: Buffer }
  /** Torn or damaged: never acted on, beyond removing the temps its (whole) header names. */
  | { committed: false; plan: RedoPlan | undefined };

function isExpectation(value: unknown): value is RedoExpectation {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return v.exists === false || (v.exists === true && typeof v.sha256 === 'string' && typeof v.size === 'number');
}

function isStep(value: unknown, bodyLength: number | undefined): value is RedoStep {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  if (!isRelativePosix(v.path) || !isExpectation(v.expect) || (v.action !== 'write' && v.action !== 'delete')) return false;
  if (v.temp !== undefined && (!isRelativePosix(v.temp) || path.posix.dirname(v.temp) !== path.posix.dirname(v.path))) return false;
  if (v.action === 'delete') return v.data === undefined && v.temp === undefined;
  const after = v.after as Record<string, unknown> | undefined;
  if (!after || typeof after.sha256 !== 'string' || typeof after.size !== 'number' || (after.mode !== undefined && typeof after.mode !== 'number')) return false;
  if (v.temp === undefined) return false;
  if (v.data === undefined) return true;
  const data = v.data as Record<string, unknown>;
  if (!Number.isSafeInteger(data.offset) || !Number.isSafeInteger(data.length) || (data.offset as number) < 0 || data.length !== after.size) return false;
  return bodyLength === undefined || (data.offset as number) + (data.length as number) <= bodyLength;
}

function parsePlan(text: string, bodyLength: number | undefined): RedoPlan | undefined {
  const v = parseJsonObject(text);
  if (!v) return undefined;
  const valid =
    v.version === 1 &&
    (v.kind === 'accept' || v.kind === 'undo' || v.kind === 'redo') &&
    typeof v.pid === 'number' &&
    typeof v.workspaceRoot === 'string' &&
    path.isAbsolute(v.workspaceRoot) &&
    Array.isArray(v.steps) &&
    v.steps.every((step) => isStep(step, bodyLength)) &&
    Array.isArray(v.createdDirs) &&
    v.createdDirs.every(isRelativePosix);
  return valid ? (v as unknown as RedoPlan) : undefined;
}

/** Reads a log's bytes (and ignores any after its end); anything short of a whole, matching log is uncommitted. */
export function decodeRedoLog(bytes: Buffer): DecodedRedoLog {
  const headerAt = MAGIC.length + 4;
  if (bytes.length < headerAt || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) return { committed: false, plan: undefined };
  const headerLength = bytes.readUInt32BE(MAGIC.length);
  const bodyLengthAt = headerAt + headerLength + HASH_BYTES;
  if (bytes.length < bodyLengthAt) return { committed: false, plan: undefined };
  const header = bytes.subarray(headerAt, headerAt + headerLength);
  const headerWhole = digest(header).equals(bytes.subarray(headerAt + headerLength, bodyLengthAt));
  const torn = (): DecodedRedoLog => ({ committed: false, plan: headerWhole ? parsePlan(header.toString('utf8'), undefined) : undefined });
  if (!headerWhole || bytes.length < bodyLengthAt + 8) return torn();
  const bodyLength = Number(bytes.readBigUInt64BE(bodyLengthAt));
  const bodyAt = bodyLengthAt + 8;
  // A log written into a slot made ahead (redoSlots.ts) is followed by what the slot held before.
  if (bytes.length < bodyAt + bodyLength + HASH_BYTES) return torn();
  if (!digest(bytes.subarray(0, bodyAt + bodyLength)).equals(bytes.subarray(bodyAt + bodyLength, bodyAt + bodyLength + HASH_BYTES))) return torn();
  const plan = parsePlan(header.toString('utf8'), bodyLength);
  return plan ? { committed: true, plan, body: bytes.subarray(bodyAt, bodyAt + bodyLength) } : { committed: false, plan: undefined };
}

/** The file name of a log: the kind and a unique id; recovery reads every `*.redo` in the folder. */
export const REDO_SUFFIX = '.redo';

export function redoLogName(prefix: string): string {
  return `${prefix}${REDO_SUFFIX}`;
}
