// A WorkspaceFs over the real one for the live agent: before a tool's first write to a path in a
// turn, that path's state is saved in the turn's checkpoint (durably), and only then is it written.
import type { WorkspaceFs } from '../fs/workspaceFs';
import type { CheckpointOrigin, CheckpointSummary } from './record';
import type { CheckpointRecording, RefusalReason } from './recording';
import type { CheckpointStore } from './store';

/** The checkpoint could not be saved, so the write did not happen; names the workspace path. */
export class CheckpointSaveError extends Error {
  constructor(readonly path: string, why: string) {
    super(`Speculate could not save a checkpoint of "${path}" before changing it (${why}), so nothing was written. Free disk space in the extension's storage (or check its permissions), then try again.`);
    this.name = 'CheckpointSaveError';
  }
}

const REFUSAL_WORDS: Record<RefusalReason, string> = {
  changed: 'it changed while being saved',
  'not-a-file': 'it is not a regular file',
  'outside-workspace': 'it leads outside the workspace',
  'path-changed': 'it leads elsewhere through a symlink',
};

function why(error: unknown): string {
  return (error as NodeJS.ErrnoException | undefined)?.code ?? (error instanceof Error ? error.message : String(error));
}

export class RecordingWorkspaceFs implements WorkspaceFs {
  readonly root: string;
  private recording: CheckpointRecording | undefined;
  private origin: CheckpointOrigin = { kind: 'turn', prompt: '' };

  constructor(
    private readonly base: WorkspaceFs,
    private readonly store: CheckpointStore,
  ) {
    this.root = base.root;
  }

  /** The next writes belong to a checkpoint of this origin (started at the first write). */
  begin(origin: CheckpointOrigin): void {
    this.origin = origin;
  }

  /** Ends the current checkpoint; its summary, or null when the turn changed no file. */
  async seal(): Promise<CheckpointSummary | null> {
    const recording = this.recording;
    this.recording = undefined;
    return recording ? recording.finish() : null;
  }

  private async capture(paths: string[]): Promise<void> {
    this.recording ??= this.store.begin(this.origin);
    const recording = this.recording;
    const fresh = paths.filter((p) => p !== '' && !recording.has(p));
    if (fresh.length === 0) return;
    let refused;
    try {
      ({ refused } = await recording.capture(fresh.map((path) => ({ path }))));
    } catch (error) {
      throw new CheckpointSaveError(fresh[0], why(error));
    }
    // A folder at the path is the base's to refuse, with its own words; anything else stops here.
    const blocking = refused.find((r) => r.reason !== 'not-a-file');
    if (blocking) throw new CheckpointSaveError(blocking.path, REFUSAL_WORDS[blocking.reason]);
  }

  /** Every file below a folder (a rename of a folder moves them all). */
  private async filesBelow(dir: string): Promise<string[]> {
    const files: string[] = [];
    for (const entry of await this.base.list(dir)) {
      const child = dir === '' ? entry.name : `${dir}/${entry.name}`;
      if ((await this.base.resolve(child)) !== child) continue;
      if (entry.type === 'file') files.push(child);
      else files.push(...(await this.filesBelow(child)));
    }
    return files;
  }

  resolve(requested: string): Promise<string> {
    return this.base.resolve(requested);
  }

  readFile(requested: string): Promise<Uint8Array> {
    return this.base.readFile(requested);
  }

  stat(requested: string) {
    return this.base.stat(requested);
  }

  list(requested: string) {
    return this.base.list(requested);
  }

  glob(...args: Parameters<WorkspaceFs['glob']>) {
    return this.base.glob(...args);
  }

  search(...args: Parameters<WorkspaceFs['search']>) {
    return this.base.search(...args);
  }

  async writeFile(...args: Parameters<WorkspaceFs['writeFile']>): Promise<void> {
    await this.capture([await this.base.resolve(args[0])]);
    return this.base.writeFile(...args);
  }

  async delete(requested: string): Promise<void> {
    const target = await this.base.resolve(requested);
    if ((await this.base.stat(target))?.type === 'file') await this.capture([target]);
    return this.base.delete(requested);
  }

  async rename(from: string, to: string): Promise<void> {
    const source = await this.base.resolve(from);
    const target = await this.base.resolve(to);
    const info = await this.base.stat(source);
    if (info?.type === 'directory') {
      const files = await this.filesBelow(source);
      await this.capture([...files, ...files.map((file) => target + file.slice(source.length))]);
    } else if (info) {
      await this.capture([source, target]);
    }
    return this.base.rename(from, to);
  }
}
