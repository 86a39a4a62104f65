// Where the engine keeps its own state (overlays, journals, locks): per-user folders of mode 0700,
// never inside an open workspace (the user and git would see them, and a repository could plant
// files there), with a check that a folder found on disk really is one the engine made.
import { chmod, lstat, mkdir, realpath } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { isWithin } from './paths';

/** What a folder of the engine's own looks like on disk. */
export interface FolderFacts {
  isDirectory: boolean;
  isSymbolicLink: boolean;
  uid: number;
  mode: number;
}

function currentUid(): number | undefined {
  return typeof process.getuid === 'function' ? process.getuid() : undefined;
}

/**
 * True for a real folder (not a symlink) owned by this user that nobody else may enter (mode
 * 0700): the only kind the engine creates, and the only kind whose contents it trusts.
 */
export function isPrivateFolder(info: FolderFacts): boolean {
  if (!info.isDirectory || info.isSymbolicLink) return false;
  const uid = currentUid();
  if (uid === undefined) return true; // Windows: no POSIX owner or mode bits to check.
  return info.uid === uid && (info.mode & 0o777) === 0o700;
}

export async function folderFacts(dir: string): Promise<FolderFacts | undefined> {
  try {
    const info = await lstat(dir);
    return { isDirectory: info.isDirectory(), isSymbolicLink: info.isSymbolicLink(), uid: info.uid, mode: info.mode };
  } catch {
    return undefined;
  }
}

/**
 * A per-user name (`speculate-<uid>`), so another user's folder of the same name in a shared temp
 * folder is no denial of service and never read.
 */
export function perUserName(prefix: string): string {
  const uid = currentUid();
  if (uid !== undefined) return `${prefix}-${uid}`;
  const user = os.userInfo().username.replace(/[^A-Za-z0-9_.-]/g, '_') || 'user';
  return `${prefix}-${user}`;
}

/** A folder for speculations that is unusable: says where and what to do. */
export class PrivateFolderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PrivateFolderError';
  }
}

/**
 * Creates `dir` (mode 0700) if needed and checks it is ours and private. A folder we own with
 * looser bits (an older build, a umask) is tightened; anything else is refused, never used.
 */
export async function ensurePrivateFolder(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  let info = await folderFacts(dir);
  const uid = currentUid();
  if (info && info.isDirectory && !info.isSymbolicLink && (uid === undefined || info.uid === uid) && (info.mode & 0o777) !== 0o700) {
    await chmod(dir, 0o700);
    info = await folderFacts(dir);
  }
  // Gone between mkdir and lstat (another overlay's cleanup removed an empty pid folder): the caller retries.
  if (!info) throw Object.assign(new Error(`${dir} vanished while it was being created`), { code: 'ENOENT' });
  if (!isPrivateFolder(info)) {
    throw new PrivateFolderError(
      `The folder for speculations (${dir}) is a symlink, belongs to another user or is open to others, so writes could not be kept private. Remove it, or point TMPDIR at a private folder.`,
    );
  }
}

/** The folders tried, in order, when the preferred temp folder lies inside an open workspace. */
export function fallbackTempFolders(): string[] {
  const candidates = [process.env.XDG_RUNTIME_DIR, '/tmp', '/var/tmp', path.join(os.homedir(), '.cache')];
  return candidates.filter((dir): dir is string => typeof dir === 'string' && dir !== '' && path.isAbsolute(dir));
}

async function realOrUndefined(dir: string): Promise<string | undefined> {
  try {
    return await realpath(dir);
  } catch {
    return undefined;
  }
}

/** The real path a folder has, or would have once created (its deepest existing ancestor resolved). */
async function realOrToBe(dir: string): Promise<string | undefined> {
  const missing: string[] = [];
  for (let current = path.resolve(dir); ; current = path.dirname(current)) {
    const real = await realOrUndefined(current);
    if (real) return path.join(real, ...missing);
    if (path.dirname(current) === current) return undefined;
    missing.unshift(path.basename(current));
  }
}

export interface PrivateBaseOptions {
  /** The temp folder to use when it is fit (TMPDIR by default). */
  preferred?: string;
  /** Tried in order when the preferred one is inside a workspace; fallbackTempFolders() by default. */
  fallbacks?: readonly string[];
  /** Open workspaces: the engine's state never goes inside one of them. */
  avoid: readonly string[];
}

/**
 * Every temp folder the engine may keep state in: real paths, de-duplicated, none inside an open
 * workspace (or equal to one). The first is where new state goes; recovery looks in all of them.
 */
export async function usableTempFolders(options: PrivateBaseOptions): Promise<string[]> {
  const avoid = (await Promise.all(options.avoid.map(async (root) => (await realOrUndefined(root)) ?? path.resolve(root)))).filter(Boolean);
  const found: string[] = [];
  for (const candidate of [options.preferred ?? os.tmpdir(), ...(options.fallbacks ?? fallbackTempFolders())]) {
    const real = await realOrToBe(candidate);
    if (!real || found.includes(real)) continue;
    if (avoid.some((root) => isWithin(root, real))) continue;
    found.push(real);
  }
  return found;
}

/**
 * The temp folder new state goes into: the preferred one unless it lies inside an open workspace,
 * then the first fallback that does not. Refuses clearly when none is left.
 */
export async function choosePrivateBase(options: PrivateBaseOptions): Promise<string> {
  const [first] = await usableTempFolders(options);
  if (first) return first;
  const preferred = options.preferred ?? os.tmpdir();
  throw new PrivateFolderError(
    `Speculate keeps its overlays outside the workspace, but the temp folder (${preferred}) and every fallback lie inside an open workspace. Set TMPDIR to a folder outside it.`,
  );
}
