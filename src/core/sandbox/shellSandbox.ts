// The port through which the engine runs a shell command in the speculation sandbox (SANDBOX.md):
// a probe that says whether this machine can, and a run that returns the command's result and changes.

/** Whether commands can run sandboxed here; the reason (and what to do) when not. Cached per process. */
export type SandboxAvailability =
  | {
      available: true;
      /** 'linux-namespaces' (SANDBOX.md's recipe) or 'landlock' (Landlock + seccomp where namespaces are refused). */
      backend: SandboxBackend;
      /** 'overlay': a command's writes land in the speculation's overlay; 'none': this backend contains read-only commands only, and commands that write stay boundaries. */
      writes: 'overlay' | 'none';
      /** Why this backend and not the first choice, in words (the namespace probe's reason); absent for namespaces. */
      why?: string;
      /** The kernel's Landlock ABI, for the landlock backend. */
      abi?: number;
      /** A limit (SANDBOX.md, "Limits") this backend cannot enforce here, in words. */
      limitsNote?: string;
    }
  | {
      available: false;
      /** What is missing, in words, e.g. "unprivileged user namespaces are switched off (Ubuntu's AppArmor restriction)". */
      reason: string;
      /** What the user can do about it; null when nothing can be done (another operating system). */
      action: string | null;
    };

/**
 * What the command sees of the speculation on top of the real workspace. Paths are
 * workspace-relative POSIX paths ('' is the root), as the overlay stores them.
 */
export interface SandboxLayer {
  /** Files the speculation wrote; `contentPath` holds their bytes (linked into the sandbox, not copied, where the disk allows). */
  files: readonly { path: string; contentPath: string; mode: number }[];
  /** Files of the real workspace the speculation deleted. */
  deletedFiles: readonly string[];
  /** Folders of the real workspace the speculation deleted: hidden with all below them, except files it wrote there since. */
  deletedDirs: readonly string[];
}

export interface SandboxWorkspace {
  /** Absolute, symlink-resolved workspace root; the command sees it at this same path. */
  root: string;
  /** False: every write inside the workspace fails (read-only file system). True: writes land in the run's own folder and come back as `changes`. */
  writable: boolean;
  /** The speculation's earlier writes and deletions; absent means the real workspace as it is. */
  layer?: SandboxLayer;
}

export type SandboxBackend = 'linux-namespaces' | 'landlock';

export interface SandboxLimits {
  timeoutMs: number;
  /** Combined stdout+stderr kept; the middle of a longer output is cut. */
  maxOutputBytes: number;
  /** Bytes the command may write (workspace, HOME, TMPDIR together); more stops it and is reported as a problem. */
  maxWriteBytes: number;
  /** Processes (threads) the command may run at once; absent: the sandbox's default (resourceLimits.ts). */
  maxProcesses?: number;
  /** Address space of each of its processes, in bytes; absent: the sandbox's default. */
  maxMemoryBytes?: number;
}

/**
 * Commit ahead (src/core/git): for this one command the repository's .git is an overlay too: the
 * real .git below `layer` (the speculation's earlier git writes, files at their paths), its writes
 * in a fresh folder of the run, handed back as `SandboxResult.gitUpper`. Only with a writable
 * workspace, and only on the namespace backend (a shared keeper runs such a request on its own).
 */
export interface SandboxGitAccess {
  /** The workspace's own .git folder (absolute, inside the workspace root). */
  gitDir: string;
  /** The speculation's git layer folder (may be empty). */
  layer: string;
  /** Extra variables for the command (the user's commit identity, as the live commit would use). */
  env: Record<string, string>;
  /**
   * True: .git shows the layer over the real .git read-only, with no git upper (a later command of a
   * speculation that committed ahead sees its commits: `git log`, `git status`), and nothing is handed back.
   */
  readOnly?: boolean;
}

/**
 * The speculation a command belongs to: its commands may share one sandbox (namespaces and fixed
 * mounts set up once, each command forked inside them), which ends when `lifetime` aborts. A backend
 * without that ability, or a request its kept sandbox cannot serve as it is, runs in a fresh sandbox.
 */
export interface SandboxSession {
  /** Unique per speculation. */
  id: string;
  /** Aborted when the speculation's run ends (any way): the shared sandbox ends with every process in it. */
  lifetime: AbortSignal;
}

export interface SandboxRunRequest {
  command: string;
  /** Absolute working directory inside the workspace root. */
  cwd: string;
  workspace: SandboxWorkspace;
  limits: SandboxLimits;
  signal?: AbortSignal;
  git?: SandboxGitAccess;
  session?: SandboxSession;
}

/** One change the command made inside the workspace, relative to what it was shown. */
export type SandboxChange =
  | {
      kind: 'write';
      path: string;
      /** Permission bits of the file the command left (0o7777 mask). */
      mode: number;
      size: number;
      /** Where the bytes are until the result is disposed. */
      contentPath: string;
    }
  | { kind: 'delete'; path: string; type: 'file' | 'directory' };

/**
 * Something the command did that cannot become an ordinary speculated change; any one of them
 * means the run's changes are not taken (a boundary in speculation).
 */
export interface SandboxProblem {
  kind: 'symlink' | 'special-file' | 'git' | 'too-large' | 'limit';
  /** Workspace-relative path ('' when the problem is not about one path). */
  path: string;
  /** In words, for the boundary shown to the user. */
  detail: string;
}

/** The command's output shows it failed because of what the sandbox withholds, not on its own. */
export interface SandboxBlock {
  kind: 'network' | 'read-only' | 'home' | 'ownership' | 'outside';
  detail: string;
}

export interface SandboxResult {
  exitCode: number | null;
  signal: string | null;
  output: string;
  truncated: boolean;
  timedOut: boolean;
  /** When the command started (epoch ms): a real file changed after this was not what the command saw. */
  startedAt: number;
  /** Empty unless the workspace was writable and the command finished (not timed out or stopped for size). */
  changes: SandboxChange[];
  problems: SandboxProblem[];
  /** Set when the command failed and its output says why the sandbox was in its way. */
  blockedBy: SandboxBlock | null;
  /** With `git` in the request and a command that ran to its end: the folder holding what it wrote under .git (valid until dispose). */
  gitUpper?: string;
  /** Removes the run's folder; call after using `changes` (their content paths vanish). Idempotent. */
  dispose(): Promise<void>;
}

export type SandboxOutcome =
  | { ok: true; result: SandboxResult }
  /** The sandbox could not run the command at all (stopped by the signal, or its setup failed); nothing ran or everything it started is gone. */
  | { ok: false; reason: string; aborted: boolean };

export interface ShellSandbox {
  /** Tries the whole recipe once (mount, write, read back); later calls return the first answer. */
  probe(): Promise<SandboxAvailability>;
  run(request: SandboxRunRequest): Promise<SandboxOutcome>;
  /**
   * Starts a session's shared sandbox ahead of its first command (which then does not wait for it),
   * for commands in `root` under `limits`, and with `layer` brings what it shows of the speculation up
   * to date ahead of the next command (between commands, while the model thinks). Best effort: it
   * settles when done and never fails; nothing happens where the backend keeps no sandbox.
   */
  prepareSession?(session: SandboxSession, root: string, limits: SandboxLimits, layer?: SandboxLayer): Promise<void>;
  /** Settles once a session whose lifetime ended has no process and no folder left. */
  sessionEnded?(id: string): Promise<void>;
}
