// The port the chat store writes through: one private folder of small files (the editor's storage
// for this workspace), atomic writes, and a way to keep unreadable files aside instead of losing them.
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface ChatStorage {
  /** Undefined when the file does not exist. */
  read(name: string): Promise<string | undefined>;
  /** Replaces the file whole: a crash leaves the old content or the new one, never half of each. */
  write(name: string, text: string): Promise<void>;
  remove(name: string): Promise<void>;
  /** File names in the folder (not folders). */
  list(): Promise<string[]>;
  /** Moves files into a new sub-folder named `folder`; returns where they are now, for the notice. */
  keepAside(names: readonly string[], folder: string): Promise<string>;
}

/** File names the store writes; anything else is refused so a name can never climb out. */
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

function checked(name: string): string {
  if (!SAFE_NAME.test(name) || name.includes('..')) throw new Error(`not a chat store file name: ${name}`);
  return name;
}

let writeCounter = 0;

/** The store in a folder on disk (VS Code: context.storageUri; the CLI and tests: any folder). */
export class NodeChatStorage implements ChatStorage {
  constructor(readonly folder: string) {}

  async read(name: string): Promise<string | undefined> {
    try {
      return await readFile(join(this.folder, checked(name)), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async write(name: string, text: string): Promise<void> {
    await mkdir(this.folder, { recursive: true });
    const target = join(this.folder, checked(name));
    const temp = `${target}.${process.pid}.${++writeCounter}.tmp`;
    await writeFile(temp, text, { encoding: 'utf8', mode: 0o600 });
    await rename(temp, target);
  }

  async remove(name: string): Promise<void> {
    await rm(join(this.folder, checked(name)), { force: true });
  }

  async list(): Promise<string[]> {
    try {
      const entries = await readdir(this.folder, { withFileTypes: true });
      return entries.filter((e) => e.isFile() && !e.name.endsWith('.tmp')).map((e) => e.name);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
  }

  async keepAside(names: readonly string[], folder: string): Promise<string> {
    const aside = join(this.folder, checked(folder));
    await mkdir(aside, { recursive: true });
    for (const name of names) {
      try {
        await rename(join(this.folder, checked(name)), join(aside, name));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
    return aside;
  }
}
