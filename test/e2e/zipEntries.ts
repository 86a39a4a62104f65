// The file list of a zip (a .vsix) read from its central directory, without unpacking: the
// packaging test checks what a user would install, from the file itself.
import { readFileSync } from 'node:fs';
import { inflateRawSync } from 'node:zlib';

export interface ZipEntry {
  name: string;
  compressedSize: number;
  size: number;
  /** 0 stored, 8 deflated. */
  method: number;
  /** Where the entry's local header starts. */
  offset: number;
}

const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const CENTRAL_FILE_HEADER = 0x02014b50;

export function zipEntries(file: string): ZipEntry[] {
  const zip = readFileSync(file);
  // The end record sits in the last 22 bytes plus a comment of at most 64 KiB.
  let end = -1;
  for (let at = zip.length - 22; at >= Math.max(0, zip.length - 22 - 0xffff); at--) {
    if (zip.readUInt32LE(at) === END_OF_CENTRAL_DIRECTORY) {
      end = at;
      break;
    }
  }
  if (end < 0) throw new Error(`${file} is not a zip file (no end of central directory)`);
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  const entries: ZipEntry[] = [];
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(at) !== CENTRAL_FILE_HEADER) throw new Error(`${file}: bad central directory entry ${i}`);
    const method = zip.readUInt16LE(at + 10);
    const compressedSize = zip.readUInt32LE(at + 20);
    const size = zip.readUInt32LE(at + 24);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const offset = zip.readUInt32LE(at + 42);
    entries.push({ name: zip.toString('utf8', at + 46, at + 46 + nameLength), compressedSize, size, method, offset });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

/** The text of one entry (stored or deflated). */
export function zipText(file: string, name: string): string {
  const entry = zipEntries(file).find((e) => e.name === name);
  if (!entry) throw new Error(`${file} has no ${name}`);
  const zip = readFileSync(file);
  // Local header: 30 bytes, then its own name and extra field, then the data.
  const start = entry.offset + 30 + zip.readUInt16LE(entry.offset + 26) + zip.readUInt16LE(entry.offset + 28);
  const data = zip.subarray(start, start + entry.compressedSize);
  return (entry.method === 8 ? inflateRawSync(data) : data).toString('utf8');
}
