// What the speculation saw of each real file before it first changed it: the content hash of a
// read, the stat of a listing, or "absent". Accept holds the real file against that, not against
// the moment of the first write, so a write from a stale read never replaces the user's edit.
import type { BaseRecord, StatIdentity } from './entries';

export type { StatIdentity } from './entries';

export type Observation =
  /** Looked for and not there (a stat, a failed read, or missing from a listing of its folder). */
  | { kind: 'absent' }
  /**
   * Read: the hash of those exact bytes, and the read file's identity when it can be trusted
   * (trustedIdentity). A large file read with a trusted identity is not hashed (`sha256`
   * undefined): while it keeps that identity it still holds what was read, and it is hashed only
   * if the speculation changes it.
   */
  | { kind: 'content'; sha256: Promise<string> | undefined; size: number; mode: number; identity: StatIdentity | undefined }
  /** Seen (stat, listing, glob or search hit) but not read: the inode's identity and times then. */
  | { kind: 'stat'; stat: StatIdentity };

export function identityOf(info: StatIdentity): StatIdentity {
  return { size: info.size, mtimeMs: info.mtimeMs, ctimeMs: info.ctimeMs, ino: info.ino, mode: info.mode & 0o7777 };
}

export function sameIdentity(a: StatIdentity, b: StatIdentity): boolean {
  return a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs && a.ino === b.ino;
}

/**
 * How long a file's times may stay put across a change: a change within the same tick of a coarse
 * file-system clock (FAT keeps 2 s) leaves size, mtime and ctime as they were.
 */
export const RACY_WINDOW_MS = 2_000;

/**
 * The identity of a file stat'ed at `seenAt`, when a later change is sure to move it: the file last
 * changed well before, so any change from now on gets a newer mtime and ctime. A file changed just
 * before (racily clean, as git calls it) gets none, and its content is what counts.
 */
export function trustedIdentity(info: StatIdentity, seenAt: number): StatIdentity | undefined {
  return Math.max(info.mtimeMs, info.ctimeMs) + RACY_WINDOW_MS < seenAt ? identityOf(info) : undefined;
}

/**
 * The base hash of a file that changed after the speculation saw it without reading it: no real
 * content has this hash, so accept reports a conflict unless the file already holds the result.
 */
export const CHANGED_SINCE_SEEN = 'changed-since-the-speculation-saw-it';

/** The real file as it is at the first write (its placement's lstat), and that identity when trusted. */
export type CurrentFile = { exists: false } | { exists: true; size: number; mtimeMs: number; mode: number; identity: StatIdentity; trusted: StatIdentity | undefined };

/** The content of the real file at the first write, when needsContent() asked for it. */
export interface CurrentContent {
  sha256: Promise<string>;
  size: number;
  /** The identity of the file hashed, when trusted. */
  identity: StatIdentity | undefined;
}

/**
 * The observation log of one overlay. A read always records what it returned (the model works
 * from its latest read); a stat or listing is recorded only when nothing is known yet, so it never
 * hides an earlier read, and the first sight of a file (or of its absence) is what counts. Once a path has an overlay entry its base is fixed and the log is not asked again.
 */
export class ObservationLog {
  private readonly seen = new Map<string, Observation>();
  /** Names each listed folder held at its first listing. */
  private readonly listings = new Map<string, ReadonlySet<string>>();

  /** A read of `size` bytes; `sha256` undefined only for a large file whose `identity` is trusted. */
  readContent(file: string, sha256: Promise<string> | undefined, size: number, mode: number, identity: StatIdentity | undefined): void {
    if (!sha256 && !identity) throw new Error(`A read of ${file} needs its hash or a trusted identity.`);
    this.seen.set(file, { kind: 'content', sha256, size, mode, identity });
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
   * Whether the base of a first write to this existing file needs its content now: the
   * speculation never looked at it (a blind write takes the file as found), saw only a stat that
   * still holds, or read it without hashing and it is unchanged since. A hashed read, an absence
   * or a sight since outdated decide the base without it.
   */
  needsContent(file: string, identityNow: StatIdentity): boolean {
    const seen = this.observationOf(file);
    if (!seen) return true;
    if (seen.kind === 'stat') return sameIdentity(seen.stat, identityNow);
    return seen.kind === 'content' && !seen.sha256 && seen.identity !== undefined && sameIdentity(seen.identity, identityNow);
  }

  /**
   * The base an overlay entry is checked against on accept: what the speculation observed, or the
   * file as it is now when the speculation never looked at it (a blind write takes the file as found).
   * `content` is the real file's, given when needsContent() said so.
   */
  baseFor(file: string, now: CurrentFile, content?: CurrentContent): BaseRecord {
    const seen = this.observationOf(file);
    const current = (): BaseRecord => {
      if (!now.exists) return { exists: false };
      if (!content) throw new Error(`The content of ${file} was needed for its base but not read.`);
      const base: BaseRecord = { exists: true, sha256: content.sha256, size: content.size, mtimeMs: now.mtimeMs, mode: now.mode };
      return content.identity ? { ...base, identity: content.identity } : base;
    };
    const changed = (size: number, mtimeMs: number, mode: number): BaseRecord => ({
      exists: true,
      sha256: Promise.resolve(CHANGED_SINCE_SEEN),
      size,
      mtimeMs,
      mode: now.exists ? now.mode : mode,
    });
    if (!seen) return current();
    switch (seen.kind) {
      case 'absent':
        return { exists: false };
      case 'content': {
        if (!seen.sha256) {
          // Read unhashed: still the same file, so hashed now; or changed since, and then nothing holds what was read.
          if (now.exists && seen.identity && sameIdentity(seen.identity, now.identity)) return current();
          return changed(seen.size, seen.identity?.mtimeMs ?? 0, seen.mode);
        }
        const base: BaseRecord = { exists: true, sha256: seen.sha256, size: seen.size, mtimeMs: now.exists ? now.mtimeMs : 0, mode: now.exists ? now.mode : seen.mode };
        return seen.identity ? { ...base, identity: seen.identity } : base;
      }
      case 'stat':
        if (now.exists && sameIdentity(seen.stat, now.identity)) return current();
        return changed(seen.stat.size, seen.stat.mtimeMs, seen.stat.mode);
    }
  }
}
