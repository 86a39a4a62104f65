// The user's memory file: save_memory appends a fact per line, and each chat's system prompt holds
// its newest part (bounded). It lives in the user's own storage (VS Code's global storage, the
// CLI's state folder), never in a workspace, and the user may edit it freely.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';

export const MEMORY_FILE_NAME = 'memory.md';
/** The newest part of the file that joins the system prompt. */
export const MAX_MEMORY_PROMPT_BYTES = 8 * 1024;

export interface MemoryText {
  /** The file's newest whole lines within the bound; '' when there is no file. */
  text: string;
  /** True when older lines were left out. */
  truncated: boolean;
}

export class FileMemoryStore {
  constructor(readonly location: string) {}

  /** The store in `folder` (created on the first save). */
  static in(folder: string): FileMemoryStore {
    return new FileMemoryStore(path.join(folder, MEMORY_FILE_NAME));
  }

  /**
   * Appends `- fact` as one line (O_APPEND: two windows saving at once do not overwrite each other).
   * A file the user left without a final newline gets one first.
   */
  async append(fact: string): Promise<void> {
    const line = `- ${fact.replace(/\s+/g, ' ').trim()}\n`;
    await fs.mkdir(path.dirname(this.location), { recursive: true, mode: 0o700 });
    const handle = await fs.open(this.location, 'a+', 0o600);
    try {
      const { size } = await handle.stat();
      let prefix = '';
      if (size > 0) {
        const last = Buffer.alloc(1);
        await handle.read(last, 0, 1, size - 1);
        if (last[0] !== 0x0a) prefix = '\n';
      }
      await handle.appendFile(prefix + line, 'utf8');
    } finally {
      await handle.close();
    }
  }

  /** The newest lines within `maxBytes` (the file's tail, cut at a line start); never reads more. */
  async read(maxBytes = MAX_MEMORY_PROMPT_BYTES): Promise<MemoryText> {
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(this.location, 'r');
    } catch {
      return { text: '', truncated: false };
    }
    try {
      const { size } = await handle.stat();
      const start = Math.max(0, size - maxBytes);
      const buffer = Buffer.alloc(size - start);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, start);
      let bytes = buffer.subarray(0, bytesRead);
      if (start > 0) {
        // A line cut at its start is left out whole.
        const newline = bytes.indexOf(0x0a);
        bytes = newline >= 0 ? bytes.subarray(newline + 1) : Buffer.alloc(0);
      }
      return { text: bytes.toString('utf8').trim(), truncated: start > 0 };
    } catch {
      return { text: '', truncated: false };
    } finally {
      await handle.close().catch(() => undefined);
    }
  }
}
