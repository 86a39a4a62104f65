// Names of the temp files that atomic replacement writes beside their target: hidden, recognisable
// by the target's name, and short enough for the file system whatever the target's own length.
import * as path from 'node:path';

/** The longest file name (bytes) the common file systems take (ext4, xfs, btrfs, APFS, tmpfs). */
const NAME_MAX_BYTES = 255;
const TOKEN_LENGTH = 16;
/** What follows `.<kind>-` in every temp name. */
const TOKEN_AND_EXTENSION = new RegExp(`^[0-9a-f]{${TOKEN_LENGTH}}\\.tmp$`);

/**
 * Who wrote a temp: an accept or a live write (`speculate`), or an undo/redo (`speculate-undo`), so
 * each recovery recognises only its own leftovers.
 */
export type TempKind = 'speculate' | 'speculate-undo';

/** `.` + `.<kind>-<16 hex>.tmp`: the fixed part of a temp name of that kind. */
function fixedBytes(kind: TempKind): number {
  return 1 + `.${kind}-`.length + TOKEN_LENGTH + '.tmp'.length;
}

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
export function tempPathFor(target: string, token: string, kind: TempKind = 'speculate'): string {
  const dir = path.posix.dirname(target);
  const name = `.${utf8Prefix(path.posix.basename(target), NAME_MAX_BYTES - fixedBytes(kind))}.${kind}-${token}.tmp`;
  return dir === '.' ? name : `${dir}/${name}`;
}

/** True when `temp` is a temp of `kind` this module would have named for `target`. */
export function isTempFor(target: string, temp: string, kind: TempKind = 'speculate'): boolean {
  if (path.posix.dirname(temp) !== path.posix.dirname(target)) return false;
  const name = path.posix.basename(temp);
  const suffix = name.slice(name.length - (fixedBytes(kind) - 1));
  if (!name.startsWith('.') || !suffix.startsWith(`.${kind}-`) || !TOKEN_AND_EXTENSION.test(suffix.slice(kind.length + 2))) return false;
  const stem = name.slice(1, name.length - suffix.length);
  return stem === utf8Prefix(path.posix.basename(target), NAME_MAX_BYTES - fixedBytes(kind));
}

/** The temp for a target given as an absolute OS path, with a fresh random token. */
export function tempBeside(absoluteTarget: string, token: string): string {
  return path.join(path.dirname(absoluteTarget), path.posix.basename(tempPathFor(path.basename(absoluteTarget), token)));
}
