// The file system a sandboxed command sees, written as one fstab that a single `mount -a` inside the
// namespaces mounts: a read-only skeleton root, the system folders read-only, fresh /proc, /tmp and
// HOME, the toolchain folders on PATH read-only, and the workspace (overlay or read-only) at its path.
import * as path from 'node:path';

/** A top-level system entry: a folder bound read-only, or a symlink (merged /usr) recreated as it is. */
export type SystemEntry = { path: string; kind: 'bind' } | { path: string; kind: 'symlink'; target: string };

/** Where the workspace's merged view comes from. */
export type WorkspaceMount =
  /** `source`: where the real workspace is reached when not at its own path (the kept sandbox's bind of it). */
  | { kind: 'read-only'; root: string; source?: string }
  /** `lowers` top first (the speculation's layer, then the real workspace); without `upper` the overlay is read-only. */
  | { kind: 'overlay'; root: string; lowers: string[]; upper?: { upper: string; work: string } };

export interface MountPlanInput {
  /** The skeleton folder that becomes `/`. */
  skeleton: string;
  system: readonly SystemEntry[];
  /** The entries of PROC_READ_ONLY this kernel has (a bind needs its mount point). */
  procReadOnly: readonly string[];
  /** Files and folders under /etc that others may not read but we could: shown empty. */
  masked: readonly { path: string; type: 'file' | 'directory' }[];
  /** Toolchain folders outside the system ones (from PATH), bound read-only at their own path. */
  toolchains: readonly string[];
  home: string;
  workspace: WorkspaceMount;
  /** Size of each fresh tmpfs (/tmp, HOME, /dev/shm), in bytes. */
  tmpfsBytes: number;
  /** Commit ahead: an overlay of its own at the workspace's .git (mounted over the workspace's), writable for this command. */
  git?: { target: string; lowers: string[]; upper?: { upper: string; work: string } };
}

/**
 * One mount of the plan, with paths as the command sees them. `phase`: 'fixed' mounts are the same
 * for every command of a speculation (the kept sandbox makes them once, before it pivots); 'command'
 * ones are each command's own (its workspace view, fresh /tmp and HOME, its /proc); 'both': the
 * keeper mounts a plain /proc for itself, and each command its own over it.
 */
export interface PlannedMount {
  source: string;
  /** True when the source is a path inside the new root (the /proc entries bound read-only over themselves). */
  sourceInside?: boolean;
  target: string;
  type: string;
  /** fstab options, unescaped. */
  options: string;
  phase: 'fixed' | 'command' | 'both';
}

export interface MountPlan {
  fstab: string;
  /** The same mounts, in order, for a launcher that mounts them itself (the kept sandbox, keeperSession.ts). */
  mounts: PlannedMount[];
  /** Folders to create in the skeleton (mount points on the read-only root), parents first. */
  dirs: string[];
  /** Empty files to create in the skeleton (mount points for single files such as /dev/null). */
  files: string[];
  symlinks: { path: string; target: string }[];
}

/** Device files bound from the host: the harmless ones every program expects. */
const DEVICES = ['null', 'zero', 'full', 'random', 'urandom'];
/** Parts of /proc a process mapped to root could otherwise write to (sysctls and friends), as container runtimes keep them. */
export const PROC_READ_ONLY = ['sys', 'sysrq-trigger', 'irq', 'bus', 'fs'];
/**
 * Overlay options: user xattrs (the only kind an unprivileged mount may write), and no redirects,
 * (nofollow: none made, none followed), no metacopy or index, so that the upper folder holds plain files, whiteouts and opaque folders only.
 */
const OVERLAY_OPTIONS = 'userxattr,redirect_dir=nofollow,metacopy=off,index=off';

/** Escapes one fstab field (fstab(5)): space, tab, newline and backslash as octal. */
export function fstabField(value: string): string {
  return value.replace(/[\\ \t\n]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}`);
}

/**
 * Why a path cannot be handed to mount inside the sandbox, or undefined when it can: overlay
 * options separate folders with ':' and options with ',', and libmount gives quotes and
 * backslashes meanings of their own.
 */
export function unmountablePath(value: string): string | undefined {
  if (!path.isAbsolute(value)) return 'is not an absolute path';
  if (/[\0\n\r]/.test(value)) return 'contains a line break or NUL';
  const special = /[,:\\"']/.exec(value);
  if (special) return `contains "${special[0]}", which mount options cannot carry`;
  return undefined;
}

/** Folders the workspace may not be inside: the sandbox mounts its own versions of them. */
const RESERVED_ROOTS = ['/proc', '/sys', '/dev', '/usr', '/etc', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/** Why this workspace cannot be mounted in the sandbox, or undefined. */
export function unusableWorkspace(root: string): string | undefined {
  const unmountable = unmountablePath(root);
  if (unmountable) return `its path ${unmountable}`;
  if (root === '/' || root === '/tmp' || root === '/home') return `it is the system folder ${root}`;
  const reserved = RESERVED_ROOTS.find((dir) => root === dir || root.startsWith(`${dir}/`));
  if (reserved) return `it lies inside the system folder ${reserved}`;
  return undefined;
}

function isBelow(dir: string, candidate: string): boolean {
  return candidate.startsWith(dir.endsWith('/') ? dir : `${dir}/`);
}

function line(source: string, target: string, type: string, options: string): string {
  return `${fstabField(source)} ${fstabField(target)} ${type} ${fstabField(options)} 0 0`;
}

/** Where a path of the new root lies before the pivot. */
export function inSkeleton(skeleton: string, inside: string): string {
  return inside === '/' ? skeleton : path.join(skeleton, inside);
}

/** Every ancestor of an absolute path below '/', parents first ('/a/b' → ['/a', '/a/b']). */
function withAncestors(absolute: string): string[] {
  const parts = absolute.split('/').filter(Boolean);
  return parts.map((_, i) => `/${parts.slice(0, i + 1).join('/')}`);
}

export function buildMountPlan(input: MountPlanInput): MountPlan {
  const { skeleton } = input;
  const mounts: PlannedMount[] = [];
  const add = (source: string, target: string, type: string, options: string, phase: PlannedMount['phase'] = 'fixed', sourceInside = false) =>
    mounts.push({ source, target, type, options, phase, ...(sourceInside ? { sourceInside } : {}) });
  const dirs = new Set<string>();
  const files: string[] = [];
  const symlinks: { path: string; target: string }[] = [];
  // Mount points below a fresh tmpfs cannot be prepared in the skeleton (the tmpfs hides them):
  // X-mount.mkdir creates them inside the tmpfs, after it is mounted.
  const onTmpfs = (target: string) => isBelow('/tmp', target) || isBelow(input.home, target);
  const mountPoint = (target: string) => {
    if (!onTmpfs(target)) for (const dir of withAncestors(target)) dirs.add(dir);
  };
  const size = `size=${Math.max(1, Math.ceil(input.tmpfsBytes / 1024))}k`;
  // A toolchain on a fresh tmpfs (below /tmp or HOME) is mounted after it, with each command's own.
  const phaseOf = (target: string): PlannedMount['phase'] => (onTmpfs(target) ? 'command' : 'fixed');

  add(skeleton, '/', 'none', 'bind,ro');
  for (const entry of input.system) {
    if (entry.kind === 'symlink') {
      symlinks.push({ path: entry.path, target: entry.target });
      continue;
    }
    mountPoint(entry.path);
    add(entry.path, entry.path, 'none', 'bind,ro');
  }
  for (const mask of input.masked) {
    // The mount point is the real file or folder, seen through the read-only /etc.
    if (mask.type === 'file') add('/dev/null', mask.path, 'none', 'bind,ro');
    else add('tmpfs', mask.path, 'tmpfs', 'ro,size=4k,mode=000');
  }

  mountPoint('/proc');
  add('proc', '/proc', 'proc', 'nosuid,nodev,noexec', 'both');
  for (const name of input.procReadOnly) add(`/proc/${name}`, `/proc/${name}`, 'none', 'bind,ro,nosuid,nodev,noexec', 'command', true);
  mountPoint('/sys');
  add('sysfs', '/sys', 'sysfs', 'ro,nosuid,nodev,noexec');

  mountPoint('/dev/shm');
  for (const name of DEVICES) {
    files.push(`/dev/${name}`);
    add(`/dev/${name}`, `/dev/${name}`, 'none', 'bind');
  }
  symlinks.push({ path: '/dev/fd', target: '/proc/self/fd' }, { path: '/dev/stdin', target: '/proc/self/fd/0' }, { path: '/dev/stdout', target: '/proc/self/fd/1' }, { path: '/dev/stderr', target: '/proc/self/fd/2' });
  add('tmpfs', '/dev/shm', 'tmpfs', `nosuid,nodev,mode=1777,${size}`, 'command');

  mountPoint('/tmp');
  add('tmpfs', '/tmp', 'tmpfs', `nosuid,nodev,mode=1777,${size}`, 'command');
  if (input.home !== '/tmp') {
    if (!isBelow('/tmp', input.home)) for (const dir of withAncestors(input.home)) dirs.add(dir);
    add('tmpfs', input.home, 'tmpfs', `nosuid,nodev,mode=700,${size},X-mount.mkdir`, 'command');
  }
  for (const dir of [...input.toolchains].sort()) {
    mountPoint(dir);
    add(dir, dir, 'none', 'bind,ro,X-mount.mkdir', phaseOf(dir));
  }

  const ws = input.workspace;
  mountPoint(ws.root);
  if (ws.kind === 'read-only') {
    add(ws.source ?? ws.root, ws.root, 'none', 'bind,ro,X-mount.mkdir', 'command');
  } else if (ws.upper === undefined && ws.lowers.length === 1) {
    // Nothing to stack and nothing to write: the real workspace read-only is the same view.
    add(ws.lowers[0], ws.root, 'none', 'bind,ro,X-mount.mkdir', 'command');
  } else {
    const options = [`lowerdir=${ws.lowers.join(':')}`];
    if (ws.upper) options.push(`upperdir=${ws.upper.upper}`, `workdir=${ws.upper.work}`);
    options.push(OVERLAY_OPTIONS, 'X-mount.mkdir');
    if (!ws.upper) options.push('ro');
    add('overlay', ws.root, 'overlay', options.join(','), 'command');
  }
  if (input.git) {
    // After the workspace: the .git of its merged view is the mount point, so git's writes land in
    // the git upper folder, not among the command's file changes.
    const options = [`lowerdir=${input.git.lowers.join(':')}`, ...(input.git.upper ? [`upperdir=${input.git.upper.upper}`, `workdir=${input.git.upper.work}`] : []), OVERLAY_OPTIONS, ...(input.git.upper ? [] : ['ro'])];
    add('overlay', input.git.target, 'overlay', options.join(','), 'command');
  }
  const fstab = mounts.map((mount) => line(mount.sourceInside ? inSkeleton(skeleton, mount.source) : mount.source, inSkeleton(skeleton, mount.target), mount.type, mount.options));
  // Parents first; a folder that is also a bind target must exist before anything inside it.
  const sortedDirs = [...dirs].sort((a, b) => a.split('/').length - b.split('/').length || a.localeCompare(b));
  return { fstab: `${fstab.join('\n')}\n`, mounts, dirs: sortedDirs, files, symlinks };
}
