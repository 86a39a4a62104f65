// One namespace sandbox for a whole speculation: the native keeper (native/sandbox-keeper.c) makes the
// namespaces and the fixed mounts once, and each command is forked inside them with its own mount
// and pid namespaces (its workspace overlay over a fresh upper folder, fresh /tmp and HOME, /proc),
// so a later command pays a fork, a few mounts and an exec instead of a whole sandbox.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { OutputCap } from '../process/nodeProcessRunner';
import { encodeKill, encodeRelease, encodeRun, encodeSetup, KeeperStream, type KeeperMessage, type KeeperMount } from './keeperProtocol';
import { buildMountPlan, inSkeleton, type MountPlan, type WorkspaceMount } from './mountPlan';
import { readBack } from './readback';
import type { RunFailure, SpawnedRun } from './runOutcome';
import { makeSkeleton } from './runOutcome';
import { removeTree, makeWhiteout } from './scratch';
import type { SystemLayout } from './sandboxEnv';
import { SessionLayer, type LayerUpdate } from './sessionLayer';
import type { SandboxRunRequest } from './shellSandbox';
import type { SystemTools } from './systemTools';
import { hitProcessLimit, type ResolvedLimits } from './resourceLimits';
import { watchWrites } from './writeWatch';
import type { RunCgroup } from './pidsCgroup';

/** Where the session folder is bound inside the sandbox; each command detaches it before it runs. */
export const SESSION_INSIDE = '/.speculate-session';
/** The keeper's own processes in the namespace (its launcher, itself, the command's PID 1), counted by the process limit. */
export const KEPT_PROCESSES = 3;

export interface KeptSandboxInput {
  helper: string;
  tools: SystemTools;
  layout: SystemLayout;
  /** The session's own folder (a run folder of the scratch space); given back with `release` by stop(). */
  dir: string;
  release: () => Promise<void>;
  workspaceRoot: string;
  home: string;
  env: Record<string, string>;
  toolchains: string[];
  /** Root's process limit: the session's pids cgroup, joined before the namespaces. */
  cgroup: RunCgroup | undefined;
  writeCheckMs?: number;
}

type Handler = (message: KeeperMessage | { type: 'died' }) => void;

export class KeptSandbox {
  private child: ChildProcess | undefined;
  private readonly stream = new KeeperStream();
  private readonly handlers = new Map<string, Handler>();
  /** Per command: settles when the keeper said its PID 1 (and with it its mount namespace) is gone, or the keeper ended. */
  private readonly goneWaiters = new Map<string, () => void>();
  /** Command folders being removed in the background; the session's folder goes after them. */
  private readonly removals = new Set<Promise<void>>();
  private starting: Promise<{ ok: true } | { ok: false; reason: string }> | undefined;
  private closed: Promise<void> | undefined;
  private stopped = false;
  private commands = 0;
  private readonly layer: SessionLayer;
  private whiteout: Promise<string> | undefined;
  private readonly skeleton: string;

  constructor(private readonly input: KeptSandboxInput) {
    this.skeleton = path.join(input.dir, 'root');
    this.layer = new SessionLayer({
      dir: input.dir,
      realRoot: input.workspaceRoot,
      whiteout: () => (this.whiteout ??= makeWhiteout(input.tools.mknod, path.join(input.dir, 'whiteout'))),
    });
  }

  /** The keeper started (once); not ok when it could not, with why. */
  ready(): Promise<{ ok: true } | { ok: false; reason: string }> {
    this.starting ??= this.start();
    return this.starting;
  }

  private plan(workspace: WorkspaceMount, tmpfsBytes: number): MountPlan {
    const { layout } = this.input;
    return buildMountPlan({ skeleton: this.skeleton, system: layout.system, procReadOnly: layout.procReadOnly, masked: layout.masked, toolchains: this.input.toolchains, home: this.input.home, workspace, tmpfsBytes });
  }

  private start(): Promise<{ ok: true } | { ok: false; reason: string }> {
    const { dir, workspaceRoot } = this.input;
    const plan = this.plan({ kind: 'read-only', root: workspaceRoot }, 1024 * 1024);
    makeSkeleton(this.skeleton, plan);
    mkdirSync(path.join(this.skeleton, SESSION_INSIDE), { mode: 0o755 });
    mkdirSync(path.join(dir, 'real'), { mode: 0o755 });
    const mounts: KeeperMount[] = plan.mounts
      .filter((mount) => mount.phase !== 'command')
      .map((mount) => ({ source: mount.sourceInside ? inSkeleton(this.skeleton, mount.source) : mount.source, target: inSkeleton(this.skeleton, mount.target), type: mount.type, options: mount.options }));
    // The real workspace, the overlays' lowest layer, reached through the session folder once the root is switched.
    mounts.push({ source: workspaceRoot, target: path.join(dir, 'real'), type: 'none', options: 'bind,ro' });
    const setup = path.join(dir, 'setup');
    writeFileSync(setup, encodeSetup({ skeleton: this.skeleton, session: dir, sessionInside: SESSION_INSIDE, cgroupProcs: this.input.cgroup?.procs, mounts, bash: this.input.tools.bash }), { mode: 0o600 });

    return new Promise((resolve) => {
      let diagnostics = '';
      let settled = false;
      const settle = (answer: { ok: true } | { ok: false; reason: string }) => {
        if (settled) return;
        settled = true;
        resolve(answer);
      };
      // stdin is the keeper's lifeline: it ends with this process, and the keeper with it.
      const child = spawn(this.input.helper, [setup], { cwd: '/', env: {}, stdio: ['pipe', 'pipe', 'pipe'] });
      this.child = child;
      this.closed = new Promise((done) => child.on('close', () => done()));
      child.stdin?.on('error', () => undefined);
      child.stderr?.on('data', (chunk: Buffer) => {
        if (diagnostics.length < 8192) diagnostics += chunk.toString('utf8');
      });
      child.stdout?.on('data', (chunk: Buffer) => {
        for (const message of this.stream.feed(chunk)) {
          if (message.type === 'ready') {
            this.holdProcess(false);
            settle({ ok: true });
          }
          else if (message.type === 'fail') settle({ ok: false, reason: `its keeper failed at ${message.step} (${message.detail})${diagnostics ? `: ${diagnostics.trim().split('\n').slice(-1)[0]}` : ''}` });
          else if ('id' in message) {
            this.handlers.get(message.id)?.(message);
            if (message.type === 'gone') {
              this.goneWaiters.get(message.id)?.();
              this.goneWaiters.delete(message.id);
            }
          }
        }
      });
      child.on('error', (error) => settle({ ok: false, reason: `its keeper could not start (${error.message})` }));
      child.on('close', () => {
        this.stopped = true;
        settle({ ok: false, reason: `its keeper ended before it was ready${diagnostics ? ` (${diagnostics.trim().split('\n').slice(-1)[0]})` : ''}` });
        for (const handler of [...this.handlers.values()]) handler({ type: 'died' });
        for (const gone of this.goneWaiters.values()) gone();
        this.goneWaiters.clear();
      });
    });
  }

  /**
   * Whether the keeper keeps this process alive: while it starts and while a command runs; a kept
   * sandbox waiting for its next command does not (a CLI that is done exits, and the keeper with it).
   */
  private holdProcess(hold: boolean): void {
    const child = this.child;
    if (!child) return;
    if (hold) child.ref();
    else child.unref();
    for (const stream of [child.stdin, child.stdout, child.stderr]) {
      const handle = stream as unknown as { ref?: () => void; unref?: () => void } | null;
      if (hold) handle?.ref?.();
      else handle?.unref?.();
    }
  }

  /** Ends the keeper and with it every process of the session; removes the session's folder. Idempotent. */
  async stop(): Promise<void> {
    this.stopped = true;
    const child = this.child;
    // Whoever waits for the end waits for the keeper's exit: it must keep this process alive until then.
    this.holdProcess(true);
    if (child && child.exitCode === null && child.signalCode === null) {
      // SIGKILL to the launcher: the keeper (PID 1 of the namespaces) dies with it (PR_SET_PDEATHSIG), and every process inside with the keeper.
      child.kill('SIGKILL');
    }
    await this.closed;
    await Promise.all([...this.removals]);
    await this.input.release().catch(() => undefined);
    this.input.cgroup?.remove();
  }

  /** Brings the session's layer up to what the request shows; only between commands. */
  updateLayer(request: Pick<SandboxRunRequest, 'workspace'>): Promise<LayerUpdate> {
    return this.layer.update(request.workspace.layer);
  }

  /** Runs one command inside the kept namespaces; the layer must be up to date (updateLayer). */
  run(request: SandboxRunRequest, layer: LayerUpdate, limits: ResolvedLimits): Promise<SpawnedRun | RunFailure> {
    if (this.stopped || !this.child?.stdin) return Promise.resolve({ ok: false, reason: 'its keeper has ended', aborted: false, stage: 'start' });
    const id = `c${++this.commands}`;
    const commandDir = path.join(this.input.dir, id);
    const upper = path.join(commandDir, 'upper');
    const work = path.join(commandDir, 'work');
    const inside = (host: string) => path.posix.join(SESSION_INSIDE, path.relative(this.input.dir, host));
    const real = inside(path.join(this.input.dir, 'real'));
    const { workspace } = request;
    mkdirSync(commandDir, { mode: 0o700 });
    let mount: WorkspaceMount;
    if (workspace.writable) {
      mkdirSync(upper, { mode: 0o755 });
      mkdirSync(work, { mode: 0o700 });
      mount = { kind: 'overlay', root: workspace.root, lowers: [...(layer.dir ? [inside(layer.dir)] : []), real], upper: { upper: inside(upper), work: inside(work) } };
    } else if (layer.dir) {
      mount = { kind: 'overlay', root: workspace.root, lowers: [inside(layer.dir), real] };
    } else {
      mount = { kind: 'read-only', root: workspace.root, source: real };
    }
    const mounts: KeeperMount[] = this.plan(mount, request.limits.maxWriteBytes)
      .mounts.filter((entry) => entry.phase !== 'fixed')
      .map((entry) => ({ source: entry.source, target: entry.target, type: entry.type, options: entry.options }));
    const stdin = this.child.stdin;
    const { signal } = request;

    this.holdProcess(true);
    return new Promise((resolve) => {
      const output = new OutputCap(request.limits.maxOutputBytes);
      let hostPid: number | undefined;
      let exitStatus: number | null = null;
      let timedOut = false;
      let aborted = false;
      let stoppedForSize = false;
      let stoppedForProcesses = false;
      let setupFailure: { step: string; errno: number } | undefined;
      let recent = '';
      let readback: SpawnedRun['readback'];
      let readbackError: unknown;
      let settled = false;
      let killed = false;
      const kill = () => {
        if (killed) return;
        killed = true;
        stdin.write(encodeKill(id));
      };
      const onAbort = () => {
        aborted = true;
        kill();
      };
      const timer = setTimeout(() => {
        timedOut = true;
        kill();
      }, request.limits.timeoutMs);
      const stopWatching = workspace.writable
        ? watchWrites(commandDir, request.limits.maxWriteBytes, upper, () => {
            stoppedForSize = true;
            kill();
          }, this.input.writeCheckMs)
        : () => undefined;
      const gone = new Promise<void>((done) => this.goneWaiters.set(id, done));
      // The command's folder goes once its PID 1 is gone (and with it the overlay mounted over the
      // folder), in the background: nothing waits for it but the end of the session.
      let removal: Promise<void> | undefined;
      const release = (): Promise<void> => {
        if (!removal) {
          const removing = gone.then(async () => {
            openWorkFolder(commandDir);
            await removeTree(commandDir).catch(() => undefined);
          });
          removal = removing.finally(() => this.removals.delete(removal!));
          this.removals.add(removal);
        }
        return Promise.resolve();
      };
      const finish = (failure?: RunFailure) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        stopWatching();
        signal?.removeEventListener('abort', onAbort);
        this.handlers.delete(id);
        this.holdProcess(false);
        if (aborted || failure || readbackError) void release();
        if (aborted) return resolve({ ok: false, reason: 'stopped', aborted: true, stage: 'aborted' });
        if (failure) return resolve(failure);
        if (readbackError) {
          const why = readbackError instanceof Error ? readbackError.message : String(readbackError);
          return resolve({ ok: false, reason: `its changes could not be read back (${why})`, aborted: false, stage: 'readback' });
        }
        resolve({ ok: true, exitStatus, output: output.text(), truncated: output.truncated, timedOut, stoppedForSize, stoppedForProcesses, readback, dispose: release });
      };
      const onMessage = async (message: KeeperMessage | { type: 'died' }): Promise<void> => {
        if (message.type === 'started') hostPid = message.pid;
        else if (message.type === 'cfail') setupFailure = { step: message.step, errno: message.errno };
        else if (message.type === 'out') {
          output.add(message.data);
          // A fork bomb makes bash retry for seconds: the first refusal is enough to stop it.
          recent = (recent + message.data.toString('utf8')).slice(-512);
          if (!stoppedForProcesses && hitProcessLimit(recent)) {
            stoppedForProcesses = true;
            kill();
          }
        } else if (message.type === 'exit') {
          exitStatus = message.status;
          clearTimeout(timer);
          stopWatching();
          if (workspace.writable && !timedOut && !aborted && !stoppedForSize && hostPid !== undefined) {
            try {
              readback = await readBack({ upper, layer: layer.dir, realRoot: workspace.root, merged: path.join(`/proc/${hostPid}/root`, workspace.root), maxWriteBytes: request.limits.maxWriteBytes });
            } catch (error) {
              readbackError = error;
            }
          }
          if (!this.stopped) stdin.write(encodeRelease(id));
          // Read back: the result is ready; its PID 1 ends in the background.
          finish();
        } else if (message.type === 'gone' || message.type === 'died') {
          if (setupFailure) {
            const stage = setupFailure.step === 'cwd' ? 'cwd' : 'mount';
            return finish({ ok: false, reason: stage === 'cwd' ? 'the working folder does not exist inside it' : `its command's namespace could not be set up (${setupFailure.step}, errno ${setupFailure.errno})`, aborted: false, stage });
          }
          if (exitStatus === null && !timedOut && !aborted && !stoppedForSize && !stoppedForProcesses) {
            return finish({ ok: false, reason: message.type === 'died' ? 'its keeper ended during the command' : 'the command ended without its exit status', aborted: false, stage: 'start' });
          }
          finish();
        }
      };
      let queue = Promise.resolve();
      this.handlers.set(id, (message) => {
        queue = queue.then(() => onMessage(message));
      });
      signal?.addEventListener('abort', onAbort, { once: true });
      if (signal?.aborted) onAbort();
      stdin.write(
        encodeRun({
          id,
          cwd: request.cwd,
          fileKb: request.limits.maxWriteBytes / 1024,
          memoryKb: limits.memoryBytes / 1024,
          cpuSeconds: limits.cpuSeconds,
          processes: limits.processes + KEPT_PROCESSES,
          env: this.input.env,
          mounts,
          command: request.command,
        }),
      );
    });
  }
}

/** Opens a folder a command's overlay left without permissions (the work folder's inner one), so it can be removed. */
export function openWorkFolder(commandDir: string): void {
  try {
    chmodSync(path.join(commandDir, 'work', 'work'), 0o700);
  } catch {
    // No overlay work folder here.
  }
}
