// Reads at most the first N bytes of a text file — a workspace file placed through WorkspaceFs (no
// symlink out, no FIFO), or one of the user's own — so a 5 MB AGENTS.md is never read whole.
import { constants as fsConstants, promises as fs } from 'node:fs';
import { toAbsolute } from '../fs/paths';
import type { WorkspaceFs } from '../fs/workspaceFs';

export interface BoundedText {
  text: string;
  /** The file's whole size in bytes. */
  size: number;
  /** True when the file is longer than what `text` holds. */
  truncated: boolean;
  mtimeMs: number;
}

/**
 * The workspace file at `relative`, up to `maxBytes`; undefined when there is no regular file
 * there (missing, a folder, a FIFO or device, or a path that leaves the workspace).
 */
export async function readWorkspaceText(workspace: WorkspaceFs, relative: string, maxBytes: number): Promise<BoundedText | undefined> {
  let placed: string;
  try {
    placed = await workspace.resolve(relative);
  } catch {
    return undefined; // a symlink out of the workspace is not the project's instructions
  }
  const info = await workspace.stat(placed).catch(() => undefined);
  if (info?.type !== 'file') return undefined;
  return readTextPrefix(toAbsolute(workspace.root, placed), maxBytes, { noFollow: true });
}

/**
 * The first `maxBytes` of an absolute file, cut back to a whole line (and never inside a UTF-8
 * character) when the file is longer. `noFollow`: the last component must not be a symlink (it was
 * resolved already; one swapped in since is refused). Undefined when it is not a readable regular file.
 */
export async function readTextPrefix(absolute: string, maxBytes: number, options: { noFollow?: boolean } = {}): Promise<BoundedText | undefined> {
  let handle: fs.FileHandle;
  try {
    const flags = fsConstants.O_RDONLY | fsConstants.O_NONBLOCK | fsConstants.O_NOCTTY | (options.noFollow ? fsConstants.O_NOFOLLOW : 0);
    handle = await fs.open(absolute, flags);
  } catch {
    return undefined;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return undefined;
    const want = Math.min(info.size, maxBytes);
    const buffer = Buffer.alloc(want);
    let filled = 0;
    while (filled < want) {
      const { bytesRead } = await handle.read(buffer, filled, want - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    const truncated = info.size > filled;
    let bytes = buffer.subarray(0, filled);
    if (truncated) {
      const lastNewline = bytes.lastIndexOf(0x0a);
      if (lastNewline > 0) bytes = bytes.subarray(0, lastNewline + 1);
      else bytes = bytes.subarray(0, utf8Boundary(bytes));
    }
    return { text: bytes.toString('utf8'), size: info.size, truncated, mtimeMs: info.mtimeMs };
  } catch {
    return undefined;
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** The length of `bytes` without a UTF-8 sequence cut at its end. */
function utf8Boundary(bytes: Buffer): number {
  let end = bytes.length;
  let back = 0;
  while (end - back - 1 >= 0 && back < 4 && (bytes[end - back - 1] & 0xc0) === 0x80) back++;
  const lead = end - back - 1;
  if (lead < 0) return end;
  const byte = bytes[lead];
  const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
  return need > back + 1 ? lead : end;
}
