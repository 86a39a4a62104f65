// The Linux ShellSandbox: util-linux's `unshare` (user, mount, pid, net, ipc, uts, cgroup namespaces)
// and its own mounts from one fstab, an overlayfs at the workspace's path, the command without
// capabilities; what it changed is read back from the overlay's upper folder (readback.ts).
// A request with a session (a speculation's commands) runs instead inside that speculation's kept
// sandbox (keptSandbox.ts: namespaces and fixed mounts made once by a native keeper), and here as
// below only when the kept one cannot serve it.
//
// Why unshare + our own mounts and not bubblewrap: everything comes from util-linux, which every
// distribution has (bubblewrap is an extra package, and Debian 12's 0.8 cannot mount the overlay, so
// unshare would still be needed for it); all mounts are done by one `mount -a -T <fstab>` process,
// so the start costs about 21 ms over a plain `bash -c` here (bench/suites/sandbox.ts, 2026-12-01,
// load 1.5: ~4 ms preparing the run, ~3.5 ms the namespaces, ~9.5 ms the mounts, pivot and loopback,
// ~3.5 ms the command and the kill of what it left, ~2 ms the teardown), within the 30 ms target;
// and the keeper (keeper.ts) that holds the namespaces open for the read-back is a few lines of bash
// that bubblewrap could not replace. What bubblewrap adds (a seccomp filter, a
// loopback device without iproute2) is not needed for what SANDBOX.md promises.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isWithin } from '../fs/paths';
import { KEPT_PROCESSES, KeptSandbox } from './keptSandbox';
import { findHelper, helperCandidates, KEEPER_HELPER_NAME } from './landlockHelper';
import { buildLayer } from './layerBuilder';
import { buildMountPlan, unmountablePath, unusableWorkspace, type WorkspaceMount } from './mountPlan';
import { probeLinuxSandbox } from './probe';
import { spawnFreshRun } from './freshRun';
import { makeSkeleton, sandboxResult, type RunFailure } from './runOutcome';
import { sandboxEnv, sandboxHome, systemLayout, type SystemLayout } from './sandboxEnv';
import { makeWhiteout, ScratchSpace } from './scratch';
import type { SandboxAvailability, SandboxGitAccess, SandboxLayer, SandboxLimits, SandboxOutcome, SandboxRunRequest, SandboxSession, ShellSandbox } from './shellSandbox';
import { findSystemTools, type SystemTools } from './systemTools';
import { runCgroup, writablePidsCgroup } from './pidsCgroup';
import { resolveLimits, type ResolvedLimits } from './resourceLimits';

export interface LinuxSandboxOptions {
  /** Where the sandbox keeps its run folders; defaults to the OS temp folder. */
  tmpRoot?: string;
  /** The environment PATH, HOME and the locale are taken from (nothing else of it is passed on); defaults to process.env. */
  hostEnv?: NodeJS.ProcessEnv;
  /** How often the disk is checked for a command writing more than its limit (default 500 ms). */
  writeCheckMs?: number;
  /** For tests of the not-available paths: the platform and the folder with the kernel's sysctls. */
  platform?: NodeJS.Platform;
  sysctlDir?: string;
  /** Defaults for what a command may use when the request names none (resourceLimits.ts). */
  limits?: { maxProcesses?: number; maxMemoryBytes?: number };
  /** The kept sandbox's keeper (native/sandbox-keeper.c); default: the one built beside this code; null: none (every command gets a fresh sandbox). */
  keeper?: string | null;
}

function keptSignature(root: string, limits: ResolvedLimits): string {
  return JSON.stringify([root, limits.processes]);
}

interface KeptSession {
  /** What the keeper fixed for the whole session; a request that differs gets a fresh sandbox. */
  signature: string;
  sandbox: KeptSandbox;
  /** A command runs in it (one at a time: another gets a fresh sandbox). */
  busy: boolean;
  /** A layer update made ahead of the next command (prepareSession); a command waits for it. */
  layerWork: Promise<unknown>;
  hiddenPath: (absolute: string) => boolean;
}

interface Prepared {
  tools: SystemTools;
  layout: SystemLayout;
}

export type { FailureStage, RunFailure as LinuxRunFailure } from './runOutcome';
type Failure = RunFailure;

/** The .git overlay of a commit-ahead request: the real .git below the speculation's git layer, and a fresh upper of this run's own unless read-only. */
function gitMount(access: SandboxGitAccess, runDir: string): { target: string; lowers: string[]; upper?: { upper: string; work: string } } {
  const lowers = [access.layer, access.gitDir];
  if (access.readOnly) return { target: access.gitDir, lowers };
  const upper = path.join(runDir, 'git-upper');
  const work = path.join(runDir, 'git-work');
  mkdirSync(upper, { mode: 0o755 });
  mkdirSync(work, { mode: 0o700 });
  return { target: access.gitDir, lowers, upper: { upper, work } };
}

export class LinuxSandbox implements ShellSandbox {
  private availability: Promise<SandboxAvailability> | undefined;
  private prepared: Promise<Prepared | { missing: string; from: string }> | undefined;
  private readonly scratch: ScratchSpace;
  private readonly hostEnv: NodeJS.ProcessEnv;
  /** The environment depends only on the workspace and the host's PATH/HOME, which do not change per run. */
  private readonly environments = new Map<string, Promise<{ env: Record<string, string>; toolchains: string[] }>>();

  constructor(private readonly options: LinuxSandboxOptions = {}) {
    this.scratch = new ScratchSpace(options.tmpRoot ?? os.tmpdir());
    this.hostEnv = options.hostEnv ?? process.env;
  }

  private pidsCgroup: string | null | undefined;

  /** Where root's runs get their pids cgroup; null when not root or none is writable. */
  private rootPidsCgroup(): string | null {
    if (this.pidsCgroup === undefined) this.pidsCgroup = process.getuid?.() === 0 ? writablePidsCgroup() ?? null : null;
    return this.pidsCgroup;
  }

  probe(): Promise<SandboxAvailability> {
    this.availability ??= probeLinuxSandbox({
      platform: this.options.platform ?? process.platform,
      sysctlDir: this.options.sysctlDir ?? '/proc/sys',
      prepare: () => this.prepare(),
      trial: (request) => this.execute(request),
      tmpRoot: this.options.tmpRoot ?? os.tmpdir(),
    }).then((answer) =>
      answer.available && process.getuid?.() === 0 && !this.rootPidsCgroup()
        ? { ...answer, limitsNote: 'the process limit cannot bind root here (no writable pids cgroup, and RLIMIT_NPROC exempts root)' }
        : answer,
    );
    return this.availability;
  }

  private prepare(): Promise<Prepared | { missing: string; from: string }> {
    this.prepared ??= (async () => {
      const found = await findSystemTools();
      if (!found.ok) return { missing: found.missing, from: found.from };
      return { tools: found.tools, layout: await systemLayout() };
    })();
    return this.prepared;
  }

  private environment(workspaceRoot: string, home: string, tools: SystemTools, layout: SystemLayout): Promise<{ env: Record<string, string>; toolchains: string[] }> {
    const key = `${workspaceRoot}\0${home}`;
    let cached = this.environments.get(key);
    if (!cached) {
      cached = sandboxEnv({ hostEnv: this.hostEnv, workspaceRoot, home, bash: tools.bash, system: layout.system });
      this.environments.set(key, cached);
      cached.catch(() => this.environments.delete(key));
    }
    return cached;
  }

  /** The speculations' kept sandboxes, by session id (opening, or open). */
  private readonly kept = new Map<string, Promise<KeptSession | undefined>>();
  /** Kept sandboxes being ended, by session id. */
  private readonly ending = new Map<string, Promise<unknown>>();
  /** Sessions whose kept sandbox broke: their later commands run in fresh sandboxes. */
  private readonly freshOnly = new Set<string>();
  /** Why no keeper can run on this machine, once one failed to start: every command then gets a fresh sandbox. */
  private keeperUnusable: string | undefined;
  private keeperHelper: Promise<string | undefined> | undefined;

  /** Why commands of a speculation do not share a sandbox here, or undefined while they may. */
  get keptSandboxUnusable(): string | undefined {
    return this.keeperUnusable;
  }

  async run(request: SandboxRunRequest): Promise<SandboxOutcome> {
    const availability = await this.probe();
    if (!availability.available) return { ok: false, reason: availability.reason, aborted: false };
    const outcome = await this.execute(request);
    return outcome.ok ? outcome : { ok: false, reason: outcome.reason, aborted: outcome.aborted };
  }

  /** One run, without asking the probe (the probe's own trial comes through here). */
  private async execute(request: SandboxRunRequest): Promise<SandboxOutcome | Failure> {
    const prepared = await this.prepare();
    if ('missing' in prepared) return { ok: false, reason: `${prepared.missing} was not found`, aborted: false, stage: 'tools' };
    const root = request.workspace.root;
    const unusable = unusableWorkspace(root);
    if (unusable) return { ok: false, reason: `this workspace cannot be sandboxed: ${unusable}`, aborted: false, stage: 'workspace' };
    if (request.git) {
      const why = request.git.gitDir !== path.join(root, '.git') ? 'its git folder is not the workspace\'s own .git' : !request.workspace.writable && !request.git.readOnly ? 'git may only write with a writable workspace' : unmountablePath(request.git.layer);
      if (why) return { ok: false, reason: `the repository cannot be made writable here: ${why}`, aborted: false, stage: 'workspace' };
    }
    if (!isWithin(root, request.cwd)) return { ok: false, reason: 'the working folder is outside the workspace', aborted: false, stage: 'workspace' };
    if (request.signal?.aborted) return { ok: false, reason: 'stopped before it started', aborted: true, stage: 'aborted' };
    // A command with its own .git overlay (commit ahead) changes the mounts: it runs in a fresh sandbox.
    if (request.session && !request.git) {
      const kept = await this.runKept(request, request.session);
      if (kept) return kept;
    }

    const runDir = await this.scratch.runFolder();
    /** Removals that know what they made, done before the run folder's walk (which then has less to find). */
    const clears: (() => Promise<void>)[] = [];
    let disposed = false;
    const dispose = async () => {
      if (disposed) return;
      disposed = true;
      for (const clear of clears) await clear();
      await this.scratch.release(runDir);
    };
    try {
      const outcome = await this.runIn(runDir, request, prepared, clears);
      if (!outcome.ok) await dispose();
      else outcome.result.dispose = dispose;
      return outcome;
    } catch (error) {
      await dispose();
      throw error;
    }
  }

  private async runIn(runDir: string, request: SandboxRunRequest, { tools, layout }: Prepared, clears: (() => Promise<void>)[]): Promise<SandboxOutcome | Failure> {
    const { workspace, limits } = request;
    const skeleton = path.join(runDir, 'root');
    const layerDir = path.join(runDir, 'layer');
    const upper = path.join(runDir, 'upper');
    const work = path.join(runDir, 'work');
    mkdirSync(skeleton, { mode: 0o755 });

    let lowerLayer: string | undefined;
    if (workspace.layer) {
      mkdirSync(layerDir, { mode: 0o755 });
      let whiteout: Promise<string> | undefined;
      const built = await buildLayer({
        layer: workspace.layer,
        realRoot: workspace.root,
        dir: layerDir,
        whiteout: () => (whiteout ??= makeWhiteout(tools.mknod, path.join(runDir, 'whiteout'))),
      });
      clears.push(built.clear);
      if (built.used) lowerLayer = layerDir;
    }
    let mount: WorkspaceMount;
    if (workspace.writable) {
      mkdirSync(upper, { mode: 0o755 });
      mkdirSync(work, { mode: 0o700 });
      mount = { kind: 'overlay', root: workspace.root, lowers: [...(lowerLayer ? [lowerLayer] : []), workspace.root], upper: { upper, work } };
    } else if (lowerLayer) {
      mount = { kind: 'overlay', root: workspace.root, lowers: [lowerLayer, workspace.root] };
    } else {
      mount = { kind: 'read-only', root: workspace.root };
    }

    const home = sandboxHome(this.hostEnv, workspace.root);
    const { env: baseEnv, toolchains } = await this.environment(workspace.root, home, tools, layout);
    const git = request.git ? gitMount(request.git, runDir) : undefined;
    const env = request.git ? { ...baseEnv, ...request.git.env } : baseEnv;
    const plan = buildMountPlan({ skeleton, system: layout.system, procReadOnly: layout.procReadOnly, masked: layout.masked, toolchains, home, workspace: mount, tmpfsBytes: limits.maxWriteBytes, ...(git ? { git } : {}) });
    const fstab = path.join(runDir, 'fstab');
    makeSkeleton(skeleton, plan);
    writeFileSync(fstab, plan.fstab, { mode: 0o600 });

    const hiddenPath = this.hiddenPaths(layout, toolchains, workspace.root);
    const startedAt = Date.now();
    const ran = await spawnFreshRun(request, { tools, env, fstab, skeleton }, { upper, lowerLayer, writable: workspace.writable, runDir }, { defaults: this.options.limits, pidsCgroup: this.rootPidsCgroup(), writeCheckMs: this.options.writeCheckMs });
    if (!ran.ok) return ran;
    const result = sandboxResult(ran, { request, defaults: this.options.limits, hostEnv: this.hostEnv, hiddenPath, startedAt });
    // Commit ahead: git's writes of this run, for the speculation's git layer to check and take.
    if (git?.upper && ran.readback && !ran.timedOut && !ran.stoppedForSize) result.gitUpper = git.upper.upper;
    return { ok: true, result };
  }

  /**
   * The session's kept sandbox, opened (and its keeper started) by whoever asks first: its first
   * command, or prepareSession ahead of it. Undefined when the session must run its commands in fresh
   * sandboxes: no keeper here, the session is over, or its kept sandbox broke.
   */
  private keptSession(session: SandboxSession, root: string, limits: ResolvedLimits): Promise<KeptSession | undefined> {
    if (session.lifetime.aborted || this.keeperUnusable || this.freshOnly.has(session.id)) return Promise.resolve(undefined);
    let pending = this.kept.get(session.id);
    if (!pending) {
      pending = this.openSession(session, root, limits);
      this.kept.set(session.id, pending);
      session.lifetime.addEventListener('abort', () => this.closeSession(session.id, true), { once: true });
    }
    return pending;
  }

  private async openSession(session: SandboxSession, root: string, limits: ResolvedLimits): Promise<KeptSession | undefined> {
    const prepared = await this.prepare();
    if ('missing' in prepared) return undefined;
    const { tools, layout } = prepared;
    const helper = await (this.keeperHelper ??= this.options.keeper === null ? Promise.resolve(undefined) : this.options.keeper ? Promise.resolve(this.options.keeper) : findHelper(helperCandidates(__dirname, KEEPER_HELPER_NAME)));
    if (!helper) {
      this.keeperUnusable = `its keeper (${KEEPER_HELPER_NAME}) is not part of this build`;
      return undefined;
    }
    if (session.lifetime.aborted) return undefined;
    const dir = await this.scratch.runFolder();
    try {
      const home = sandboxHome(this.hostEnv, root);
      const { env, toolchains } = await this.environment(root, home, tools, layout);
      const parent = this.rootPidsCgroup();
      const cgroup = parent ? runCgroup(parent, limits.processes + KEPT_PROCESSES + 1) : undefined;
      const sandbox = new KeptSandbox({ helper, tools, layout, dir, release: () => this.scratch.release(dir), workspaceRoot: root, home, env, toolchains, cgroup, writeCheckMs: this.options.writeCheckMs });
      // What the keeper fixes for the session. A request field that changes the fixed mounts or the
      // namespaces must enter here (or the request must skip the session), so that it gets a fresh sandbox.
      const entry: KeptSession = { signature: keptSignature(root, limits), sandbox, busy: false, layerWork: Promise.resolve(), hiddenPath: this.hiddenPaths(layout, toolchains, root) };
      void sandbox.ready().then((ready) => {
        if (ready.ok) return;
        if (!session.lifetime.aborted) this.keeperUnusable = ready.reason;
        this.closeSession(session.id);
      });
      return entry;
    } catch (error) {
      await this.scratch.release(dir);
      throw error;
    }
  }

  /**
   * The command inside its speculation's kept sandbox; undefined when it must run in a fresh one
   * instead: no kept sandbox for the session (see keptSession), or it is busy with another command
   * or was set up for another workspace or process limit, or the keeper broke (it is then ended).
   */
  private async runKept(request: SandboxRunRequest, session: SandboxSession): Promise<SandboxOutcome | Failure | undefined> {
    const limits = resolveLimits(request.limits, this.options.limits);
    const entry = await this.keptSession(session, request.workspace.root, limits);
    if (!entry || entry.busy || entry.signature !== keptSignature(request.workspace.root, limits)) return undefined;
    entry.busy = true;
    try {
      const ready = await entry.sandbox.ready();
      if (!ready.ok) return undefined;
      await entry.layerWork;
      if (request.signal?.aborted) return { ok: false, reason: 'stopped before it started', aborted: true, stage: 'aborted' };
      const layer = await entry.sandbox.updateLayer(request);
      const startedAt = Date.now();
      const ran = await entry.sandbox.run(request, layer, limits);
      if (!ran.ok) {
        if (ran.aborted || ran.stage === 'cwd') return ran;
        if (session.lifetime.aborted || request.signal?.aborted) return { ok: false, reason: 'stopped', aborted: true, stage: 'aborted' };
        // The keeper broke: this command and the session's later ones run in fresh sandboxes.
        this.closeSession(session.id);
        return undefined;
      }
      const result = sandboxResult(ran, { request, defaults: this.options.limits, hostEnv: this.hostEnv, hiddenPath: entry.hiddenPath, startedAt });
      let disposed: Promise<void> | undefined;
      result.dispose = () => (disposed ??= ran.dispose?.() ?? Promise.resolve());
      return { ok: true, result };
    } finally {
      entry.busy = false;
    }
  }

  async prepareSession(session: SandboxSession, root: string, limits: SandboxLimits, layer?: SandboxLayer): Promise<void> {
    try {
      if (!(await this.probe()).available || unusableWorkspace(root)) return;
      const entry = await this.keptSession(session, root, resolveLimits(limits, this.options.limits));
      if (!entry || !(await entry.sandbox.ready()).ok || !layer) return;
      // Between commands only: a running command has the layer mounted (its own update follows it).
      const update = entry.layerWork.then(() => (entry.busy ? undefined : entry.sandbox.updateLayer({ workspace: { root, writable: false, layer } })));
      entry.layerWork = update.catch(() => undefined);
      await entry.layerWork;
    } catch {
      // Best effort: the next command does what this did not.
    }
  }

  /** Ends a session's kept sandbox; `ended`: the speculation is over (no fresh-only mark needed). */
  private closeSession(id: string, ended = false): void {
    const pending = this.kept.get(id);
    this.kept.delete(id);
    if (ended) this.freshOnly.delete(id);
    else this.freshOnly.add(id);
    if (!pending) return;
    const stopping = pending.then((entry) => entry?.sandbox.stop()).catch(() => undefined);
    this.ending.set(id, stopping);
    void stopping.then(() => this.ending.delete(id));
  }

  async sessionEnded(id: string): Promise<void> {
    await this.ending.get(id);
  }

  /** What the command sees of the machine; anything else that exists is hidden from it (HOME and /tmp are fresh and empty). */
  private hiddenPaths(layout: SystemLayout, toolchains: string[], root: string): (absolute: string) => boolean {
    const visible = [...layout.system.filter((entry) => entry.kind === 'bind').map((entry) => entry.path), ...toolchains, root, '/proc', '/sys', '/dev'];
    return (absolute: string) => !visible.some((dir) => isWithin(dir, path.resolve(absolute))) && existsSync(absolute);
  }
}
