// What the speculation saw of each real file before it first changed it: the content hash of a
// read, the stat of a listing, or "absent". Accept holds the real file against that, not against
// the moment of the first write, so a write from a stale read never replaces the user's edit.
import type { ApplyFsStat } from './applyFs';
import type { BaseRecord } from './entries';

export type Observation =
  /** Looked for and not there (a stat, a failed read, or missing from a listing of its folder). */
  | { kind: 'absent' }
  /** Read: these exact bytes. */
  | { kind: 'content'; sha256: string; size: number; mode: number }
  /** Seen (stat, listing, glob or search hit) but not read: the inode's identity and times then. */
  | { kind: 'stat'; stat: StatIdentity };

/** What changes whenever a file's content is replaced or rewritten, even by a tool that restores the mtime. */
export interface StatIdentity {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
  mode: number;
}

export function identityOf(info: ApplyFsStat): StatIdentity {
  return { size: info.size, mtimeMs: info.mtimeMs, ctimeMs: info.ctimeMs, ino: info.ino, mode: info.mode };
}

function sameIdentity(a: StatIdentity, b: StatIdentity): boolean {
  return a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs && a.ino === b.ino;
}

/**
 * The base hash of a file that changed after the speculation saw it without reading it: no real
 * content has this hash, so accept reports a conflict unless the file already holds the result.
 */
export const CHANGED_SINCE_SEEN = 'changed-since-the-speculation-saw-it';

/** The real file as it is at the first write, with its stat identity when it exists. */
export type CurrentFile = { exists: false } | { exists: true; sha256: string; size: number; mtimeMs: number; mode: number; identity: StatIdentity };

/**
 * The observation log of one overlay. A read always records what it returned (the model works
 * from its latest read); a stat or listing is recorded only when nothing is known yet, so it never
 * hides an earlier read, and the first sight of a file (or of its absence) is what counts. Once a path has an overlay entry its base is fixed and the log is not asked again.
 */
export class ObservationLog {
  private readonly seen = new Map<string, Observation>();
  /** Names each listed folder held at its first listing. */
  private readonly listings = new Map<string, ReadonlySet<string>>();

  readContent(file: string, sha256: string, size: number, mode: number): void {
    this.seen.set(file, { kind: 'content', sha256, size, mode });
  }

  /** A stat or a listing entry; undefined info = nothing was there. */
  sawStat(file: string, info: StatIdentity | undefined): void {
    if (this.knows(file)) return;
    this.seen.set(file, info ? { kind: 'stat', stat: info } : { kind: 'absent' });
  }

  sawMissing(file: string): void {
    if (!this.knows(file)) this.seen.set(file, { kind: 'absent' });
  }

  /**
   * Seen, but changed since (a sandboxed command found the file, then the user changed it while the
   * command ran): no later state matches, so accept asks unless the file already holds the result.
   */
  sawChanged(file: string): void {
    if (!this.knows(file)) this.seen.set(file, { kind: 'stat', stat: { size: -1, mtimeMs: -1, ctimeMs: -1, ino: -1, mode: 0 } });
  }

  listed(dir: string, names: Iterable<string>): void {
    if (!this.listings.has(dir)) this.listings.set(dir, new Set(names));
  }

  /** Whether anything is known of this path yet (a listing of its folder counts): a stat then adds nothing. */
  knows(file: string): boolean {
    return this.observationOf(file) !== undefined;
  }

  observationOf(file: string): Observation | undefined {
    const direct = this.seen.get(file);
    if (direct) return direct;
    const slash = file.lastIndexOf('/');
    const dir = slash < 0 ? '' : file.slice(0, slash);
    const names = this.listings.get(dir);
    return names && !names.has(file.slice(slash + 1)) ? { kind: 'absent' } : undefined;
  }

  /**
   * The base an overlay entry is checked against on accept: what the speculation observed, or the
   * file as it is now when the speculation never looked at it (a blind write takes the file as found).
   */
  baseFor(file: string, now: CurrentFile): BaseRecord {
    const seen = this.observationOf(file);
    const current: BaseRecord = now.exists ? { exists: true, sha256: now.sha256, size: now.size, mtimeMs: now.mtimeMs, mode: now.mode } : { exists: false };
    if (!seen) return current;
    switch (seen.kind) {
      case 'absent':
        return { exists: false };
      case 'content':
        return { exists: true, sha256: seen.sha256, size: seen.size, mtimeMs: now.exists ? now.mtimeMs : 0, mode: now.exists ? now.mode : seen.mode };
      case 'stat':
        if (now.exists && sameIdentity(seen.stat, now.identity)) return current;
        return { exists: true, sha256: CHANGED_SINCE_SEEN, size: seen.stat.size, mtimeMs: seen.stat.mtimeMs, mode: now.exists ? now.mode : seen.stat.mode };
    }
  }
}
