// Tells git's stat-cache refresh of .git/index (harmless; `git status` does it) from a real index
// change (`git add`, `git rm --cached`): the entries' paths, modes, object ids and flags must match.
// Format: git's Documentation/gitformat-index.txt (versions 2, 3 and 4; SHA-1 or SHA-256 ids).
import { createHash } from 'node:crypto';

interface IndexEntry {
  name: string;
  mode: number;
  oid: string;
  flags: number;
  extended: number;
}

const HEADER_BYTES = 12;
/** ctime, mtime, dev, ino (the stat data a refresh rewrites), then mode, uid, gid, size. */
const STAT_BYTES = 40;
const EXTENDED_FLAG = 0x4000;
const NAME_LENGTH_MASK = 0x0fff;

function readVarint(data: Buffer, at: number): { value: number; next: number } {
  // git's offset encoding (varint.c): each continuation adds one before shifting.
  let byte = data[at++];
  let value = byte & 0x7f;
  while (byte & 0x80) {
    if (at >= data.length) throw new Error('truncated varint');
    byte = data[at++];
    value = ((value + 1) << 7) | (byte & 0x7f);
  }
  return { value, next: at };
}

function parseEntries(data: Buffer, oidBytes: number): IndexEntry[] {
  if (data.length < HEADER_BYTES || data.toString('latin1', 0, 4) !== 'DIRC') throw new Error('not a git index');
  const version = data.readUInt32BE(4);
  if (version < 2 || version > 4) throw new Error(`index version ${version}`);
  const count = data.readUInt32BE(8);
  const entries: IndexEntry[] = [];
  let at = HEADER_BYTES;
  let previousName = '';
  for (let i = 0; i < count; i++) {
    const start = at;
    if (at + STAT_BYTES + oidBytes + 2 > data.length) throw new Error('truncated entry');
    const mode = data.readUInt32BE(at + 24);
    at += STAT_BYTES;
    const oid = data.toString('hex', at, at + oidBytes);
    at += oidBytes;
    const flags = data.readUInt16BE(at);
    at += 2;
    let extended = 0;
    if (flags & EXTENDED_FLAG) {
      if (version < 3) throw new Error('extended flags in a version 2 index');
      extended = data.readUInt16BE(at);
      at += 2;
    }
    let name: string;
    if (version === 4) {
      const strip = readVarint(data, at);
      at = strip.next;
      const end = data.indexOf(0, at);
      if (end < 0 || strip.value > previousName.length) throw new Error('bad v4 name');
      name = previousName.slice(0, previousName.length - strip.value) + data.toString('utf8', at, end);
      at = end + 1;
    } else {
      const end = data.indexOf(0, at);
      if (end < 0) throw new Error('unterminated name');
      name = data.toString('utf8', at, end);
      // Entries are padded with 1–8 NULs to a multiple of eight bytes.
      at = start + Math.ceil((end - start + 1) / 8) * 8;
    }
    if ((flags & NAME_LENGTH_MASK) !== NAME_LENGTH_MASK && (flags & NAME_LENGTH_MASK) !== Buffer.byteLength(name)) throw new Error('name length mismatch');
    previousName = name;
    entries.push({ name, mode, oid, flags, extended });
  }
  if (at > data.length - oidBytes) throw new Error('no trailing checksum');
  // The trailer is the hash of everything before it (all zeros with index.skipHash).
  const trailer = data.subarray(data.length - oidBytes);
  if (trailer.some((byte) => byte !== 0)) {
    const digest = createHash(oidBytes === 20 ? 'sha1' : 'sha256').update(data.subarray(0, data.length - oidBytes)).digest();
    if (!digest.equals(trailer)) throw new Error('checksum mismatch');
  }
  return entries;
}

/** Entries of an index, trying SHA-1 then SHA-256 object ids; undefined when neither parses. */
function entriesOf(data: Buffer): IndexEntry[] | undefined {
  for (const oidBytes of [20, 32]) {
    try {
      return parseEntries(data, oidBytes);
    } catch {
      // Try the other object format.
    }
  }
  return undefined;
}

/** True when both indexes list the same entries (a refresh); false when they differ or either is unreadable. */
export function sameIndexEntries(before: Buffer, after: Buffer): boolean {
  const a = entriesOf(before);
  const b = entriesOf(after);
  if (!a || !b || a.length !== b.length) return false;
  return a.every((entry, i) => {
    const other = b[i];
    return entry.name === other.name && entry.mode === other.mode && entry.oid === other.oid && entry.flags === other.flags && entry.extended === other.extended;
  });
}
