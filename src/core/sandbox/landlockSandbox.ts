// The Landlock + seccomp ShellSandbox (SANDBOX.md, "Where namespaces are refused"): for machines
// whose user namespaces are switched off or refused (Ubuntu's AppArmor rule, Docker's default
// seccomp profile, user.max_user_namespaces = 0). The helper (native/landlock-exec.c) restricts
// itself and runs the command: it reads the system, the toolchains and the workspace, writes only
// /dev/null and its scratch HOME/TMPDIR, makes no socket, and is bounded in processes, memory, file
// size and CPU time. Without a mount namespace there is no overlay at the workspace's path, so this
// backend runs read-only commands only (writes: 'none'); the gate keeps writing ones boundaries.
import { spawn } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, realpath, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { isWithin } from '../fs/paths';
import { OutputCap } from '../process/nodeProcessRunner';
import { sandboxFailureCause } from './failureCause';
import { findHelper, landlockAbi } from './landlockHelper';
import { landlockRules, readable, ruleArguments, type LandlockRule } from './landlockRules';
import { unusableWorkspace } from './mountPlan';
import { formatBytes } from './readback';
import { hitProcessLimit, limitProblem, resolveLimits } from './resourceLimits';
import { sandboxEnv, systemLayout, type SystemLayout } from './sandboxEnv';
import { removeTree, ScratchSpace } from './scratch';
import type { SandboxAvailability, SandboxOutcome, SandboxProblem, SandboxResult, SandboxRunRequest, ShellSandbox } from './shellSandbox';
import { watchWrites } from './writeWatch';

export interface LandlockSandboxOptions {
  tmpRoot?: string;
  hostEnv?: NodeJS.ProcessEnv;
  writeCheckMs?: number;
  platform?: NodeJS.Platform;
  /** The helper's path; null: there is none (another platform's package). Default: found next to the bundle. */
  helper?: string | null;
  /** Defaults for what a command may use when the request names none (resourceLimits.ts). */
  limits?: { maxProcesses?: number; maxMemoryBytes?: number };
}

/** Exit statuses above this are 128 + the signal that ended the command. */
const SIGNAL_BASE = 128;
/** Root's commands run as this uid plus the engine's pid (an unused uid, so the process limit counts them alone). */
const ROOT_COMMAND_UID_BASE = 2_000_000_000;
const BASH = ['/usr/bin/bash', '/bin/bash'];

function signalName(status: number): string | null {
  const entry = Object.entries(os.constants.signals).find(([, value]) => value === status - SIGNAL_BASE);
  return entry ? entry[0] : null;
}

function readUidMap(): string {
  try {
    return readFileSync('/proc/self/uid_map', 'utf8');
  } catch {
    return '';
  }
}

/**
 * An unused uid for root's commands, inside what this user namespace maps (all of it on a plain
 * host or in Docker; a range in rootless containers; root alone in a namespace made with
 * --map-root-user, where 0 is all there is).
 */
export function rootCommandUid(uidMap: string): number {
  const ranges = uidMap.split('\n').map((line) => line.trim().split(/\s+/).map(Number)).filter((fields) => fields.length === 3 && fields.every(Number.isFinite));
  const wanted = ROOT_COMMAND_UID_BASE + (process.pid % 1_000_000);
  if (ranges.some(([inside, , count]) => wanted >= inside && wanted < inside + count)) return wanted;
  const other = ranges.filter(([inside, , count]) => inside + count - 1 > 0).map(([inside, , count]) => inside + count - 1).sort((a, b) => b - a)[0];
  return other ?? 0;
}

function unavailable(reason: string, action: string | null): SandboxAvailability {
  return { available: false, reason, action };
}

/** The first folder on the way to `dir` (itself included) that other users may not pass through, or undefined. */
function closedToOthers(dir: string): string | undefined {
  const parts = path.resolve(dir).split('/').filter(Boolean);
  for (let i = 0; i <= parts.length; i++) {
    const at = `/${parts.slice(0, i).join('/')}`;
    try {
      if ((statSync(at).mode & 0o001) === 0) return at;
    } catch {
      return at;
    }
  }
  return undefined;
}

type Ran = { ok: true; status: number | null; output: string; truncated: boolean; timedOut: boolean; stoppedForSize: boolean; stoppedForProcesses: boolean } | { ok: false; reason: string; aborted: boolean };

export class LandlockSandbox implements ShellSandbox {
  private availability: Promise<SandboxAvailability> | undefined;
  private layout: Promise<SystemLayout> | undefined;
  private readonly rules = new Map<string, Promise<{ rules: LandlockRule[]; env: Record<string, string> }>>();
  private readonly scratch: ScratchSpace;
  private readonly hostEnv: NodeJS.ProcessEnv;
  private readonly asRoot = process.getuid?.() === 0;
  /** The uid root's commands run as (0: only root is mapped here, so they stay root without capabilities); undefined when we are not root. */
  readonly commandUid: number | undefined = this.asRoot ? rootCommandUid(readUidMap()) : undefined;
  private helper: Promise<string | undefined> | undefined;

  constructor(private readonly options: LandlockSandboxOptions = {}) {
    this.hostEnv = options.hostEnv ?? process.env;
    this.scratch = new ScratchSpace(options.tmpRoot ?? os.tmpdir(), { name: 'speculate-landlock', ...(this.commandUid ? { openTo: this.commandUid } : {}) });
  }

  private findHelper(): Promise<string | undefined> {
    this.helper ??= this.options.helper === null ? Promise.resolve(undefined) : this.options.helper ? Promise.resolve(this.options.helper) : findHelper();
    return this.helper;
  }

  probe(): Promise<SandboxAvailability> {
    this.availability ??= this.check();
    return this.availability;
  }

  private async check(): Promise<SandboxAvailability> {
    const platform = this.options.platform ?? process.platform;
    if (platform !== 'linux') return unavailable(`Landlock is a Linux feature, and this is ${platform}`, null);
    const helper = await this.findHelper();
    if (!helper) {
      return unavailable(
        `the Landlock sandbox's helper (${'landlock-exec'}) is not part of this build for ${process.platform}-${process.arch}`,
        'Install the Speculate package made for this platform (linux-x64 or linux-arm64), or build it from source with gcc installed.',
      );
    }
    const abi = await landlockAbi(helper);
    if (abi < 1) return unavailable(`this kernel offers no Landlock (Linux 5.13 or newer with "landlock" in its lsm= list is needed; this is ${os.release()})`, 'Update the kernel, or enable Landlock at boot (lsm=landlock,…).');
    if (!BASH.some((file) => existsSync(file))) return unavailable('bash was not found in /usr/bin or /bin', 'Install bash, then reload the window.');
    let dir: string;
    try {
      dir = await realpath(await mkdtemp(path.join(this.options.tmpRoot ?? os.tmpdir(), 'speculate-landlock-probe-')));
    } catch (error) {
      return unavailable(`its temp folder cannot be used (${error instanceof Error ? error.message : String(error)})`, 'Point TMPDIR at a writable folder, then reload the window.');
    }
    try {
      const workspace = path.join(dir, 'workspace');
      await mkdir(workspace, { mode: 0o755 });
      await writeFile(path.join(workspace, 'kept.txt'), 'real\n', { mode: 0o644 });
      if (this.commandUid) await chmod(dir, 0o755);
      const trial = [
        'test "$(cat kept.txt)" = real',
        'echo probe > "$HOME/probe" && echo probe > "$TMPDIR/probe"',
        '! (echo x > kept.txt) 2>/dev/null',
        '! (echo x > /etc/speculate-landlock-probe) 2>/dev/null',
        '! (exec 3<>/dev/tcp/127.0.0.1/9) 2>/dev/null',
      ].join(' && ');
      const outcome = await this.execute({ command: trial, cwd: workspace, workspace: { root: workspace, writable: false }, limits: { timeoutMs: 20_000, maxOutputBytes: 16 * 1024, maxWriteBytes: 1024 * 1024 } });
      if (!outcome.ok) return unavailable(`the Landlock sandbox could not run its trial (${outcome.reason})`, null);
      await outcome.result.dispose();
      if (outcome.result.exitCode !== 0) return unavailable(`the Landlock sandbox's trial command failed (exit ${outcome.result.exitCode ?? outcome.result.signal}: ${outcome.result.output.trim().slice(0, 240) || 'no output'})`, null);
      return { available: true, backend: 'landlock', writes: 'none', abi, ...(this.commandUid === 0 ? { limitsNote: 'the process limit cannot bind root here (this user namespace maps uid 0 alone)' } : {}) };
    } finally {
      await removeTree(dir).catch(() => undefined);
    }
  }

  async run(request: SandboxRunRequest): Promise<SandboxOutcome> {
    const availability = await this.probe();
    if (!availability.available) return { ok: false, reason: availability.reason, aborted: false };
    // No mount namespace, so no overlay to take git's writes: commit ahead needs the namespace backend.
    if (request.git) return { ok: false, reason: 'the Landlock sandbox cannot give git a private .git', aborted: false };
    return this.execute(request);
  }

  private baseRules(root: string, home: string): Promise<{ rules: LandlockRule[]; env: Record<string, string> }> {
    let cached = this.rules.get(root);
    if (!cached) {
      cached = (async () => {
        this.layout ??= systemLayout();
        const layout = await this.layout;
        const bash = BASH.find((file) => existsSync(file)) ?? '/bin/bash';
        const { env, toolchains } = await sandboxEnv({ hostEnv: this.hostEnv, workspaceRoot: root, home, bash, system: layout.system });
        // The scratch rule comes per run; the placeholder keeps the list's shape.
        const rules = (await landlockRules({ system: layout.system, masked: layout.masked, toolchains, workspaceRoot: root, scratch: '/' })).filter((rule) => rule.kind !== 'write');
        return { rules, env };
      })();
      this.rules.set(root, cached);
      cached.catch(() => this.rules.delete(root));
    }
    return cached;
  }

  private async execute(request: SandboxRunRequest): Promise<SandboxOutcome> {
    const helper = await this.findHelper();
    if (!helper) return { ok: false, reason: 'its helper is missing', aborted: false };
    const { workspace } = request;
    const root = workspace.root;
    if (workspace.writable) return { ok: false, reason: "the Landlock sandbox cannot redirect a command's writes into the speculation (it has no overlay)", aborted: false };
    const layer = workspace.layer;
    if (layer && layer.files.length + layer.deletedFiles.length + layer.deletedDirs.length > 0) {
      return { ok: false, reason: "the Landlock sandbox cannot show the speculation's earlier writes to a command", aborted: false };
    }
    const unusable = unusableWorkspace(root);
    if (unusable) return { ok: false, reason: `this workspace cannot be sandboxed: ${unusable}`, aborted: false };
    if (!isWithin(root, request.cwd)) return { ok: false, reason: 'the working folder is outside the workspace', aborted: false };
    if (this.commandUid) {
      const closed = closedToOthers(request.cwd);
      if (closed) return { ok: false, reason: `as root, the Landlock sandbox runs commands as an unprivileged user of their own, and ${closed} is closed to other users`, aborted: false };
    }
    if (request.signal?.aborted) return { ok: false, reason: 'stopped before it started', aborted: true };

    const runDir = await this.scratch.runFolder();
    let disposed = false;
    const dispose = async () => {
      if (disposed) return;
      disposed = true;
      await this.scratch.release(runDir);
    };
    try {
      const home = path.join(runDir, 'home');
      const tmp = path.join(runDir, 'tmp');
      const { rules: base, env: baseEnv } = await this.baseRules(root, '/nonexistent-home');
      for (const dir of [home, tmp]) mkdirSync(dir, { mode: 0o700 });
      if (this.commandUid) {
        for (const dir of [home, tmp]) chownSync(dir, this.commandUid, this.commandUid);
        // git refuses a repository its user does not own ("dubious ownership"); root's workspace is root's.
        writeFileSync(path.join(home, '.gitconfig'), `[safe]\n\tdirectory = ${root}\n`, { mode: 0o644 });
      }
      const rules = [...base, { kind: 'write' as const, path: runDir }];
      const env = { ...baseEnv, HOME: home, TMPDIR: tmp };
      const limits = resolveLimits(request.limits, this.options.limits);
      const bash = BASH.find((file) => existsSync(file)) ?? '/bin/bash';
      const argv = [
        ...ruleArguments(rules),
        '--nproc', String(limits.processes),
        '--as', String(limits.memoryBytes),
        '--fsize', String(limits.fileBytes),
        '--cpu', String(limits.cpuSeconds),
        ...(this.commandUid !== undefined ? ['--uid', String(this.commandUid)] : []),
        '--',
        bash, '--norc', '--noprofile', '-c', request.command,
      ];
      const startedAt = Date.now();
      const ran = await this.spawnHelper(helper, argv, request, env, runDir);
      if (!ran.ok) {
        await dispose();
        return ran;
      }
      const exitCode = ran.status === null ? null : ran.status > SIGNAL_BASE && signalName(ran.status) ? null : ran.status;
      const signal = ran.status !== null && exitCode === null ? signalName(ran.status) : ran.timedOut ? 'SIGKILL' : null;
      const problems: SandboxProblem[] = [];
      if (signal === 'SIGXFSZ' || /file size limit exceeded/i.test(ran.output)) problems.push({ kind: 'too-large', path: '', detail: `it wrote a file larger than the limit of ${formatBytes(limits.fileBytes)} and was stopped` });
      if (ran.stoppedForSize) problems.push({ kind: 'too-large', path: '', detail: `it wrote more than the limit of ${formatBytes(request.limits.maxWriteBytes)} and was stopped` });
      const limit = limitProblem({ exitCode, signal, output: ran.output, stoppedForProcesses: ran.stoppedForProcesses }, limits);
      if (limit) problems.push(limit);
      const hostHome = this.hostEnv.HOME && path.isAbsolute(this.hostEnv.HOME) && this.hostEnv.HOME !== '/' ? path.resolve(this.hostEnv.HOME) : undefined;
      const result: SandboxResult = {
        exitCode,
        signal,
        output: ran.output,
        truncated: ran.truncated,
        timedOut: ran.timedOut,
        startedAt,
        changes: [],
        problems,
        blockedBy: sandboxFailureCause({
          exitCode,
          timedOut: ran.timedOut,
          output: ran.output,
          hostHome,
          workspaceWritable: false,
          deniedIsSandbox: true,
          hiddenPath: (absolute) => !readable(rules, path.resolve(absolute)) && existsSync(absolute),
        }),
        dispose,
      };
      return { ok: true, result };
    } catch (error) {
      await dispose();
      throw error;
    }
  }

  private spawnHelper(helper: string, argv: string[], request: SandboxRunRequest, env: Record<string, string>, runDir: string): Promise<Ran> {
    const { limits, signal } = request;
    return new Promise((resolve) => {
      // Fd 3: the helper's control lines. Stdin: its lifeline (the helper ends everything when it closes).
      const child = spawn(helper, argv, { cwd: request.cwd, env, stdio: ['pipe', 'pipe', 'pipe', 'pipe'], detached: true });
      const output = new OutputCap(limits.maxOutputBytes);
      let control = '';
      let diagnostics = '';
      let commandPid: number | undefined;
      let status: number | null = null;
      let failedStep: string | undefined;
      let timedOut = false;
      let aborted = false;
      let stoppedForSize = false;
      let stoppedForProcesses = false;
      let recent = '';
      let settled = false;
      const stop = () => {
        // The command's group first (nothing of it survives), then the helper, whose TERM handler does the same before it exec'd.
        if (commandPid !== undefined) {
          try {
            process.kill(-commandPid, 'SIGKILL');
          } catch {
            // Already gone.
          }
        }
        try {
          process.kill(child.pid!, 'SIGTERM');
        } catch {
          // Already gone.
        }
        setTimeout(() => {
          try {
            process.kill(child.pid!, 'SIGKILL');
          } catch {
            // Already gone.
          }
        }, 1000).unref();
      };
      const onAbort = () => {
        aborted = true;
        stop();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      if (signal?.aborted) onAbort();
      const timer = setTimeout(() => {
        timedOut = true;
        stop();
      }, limits.timeoutMs);
      const stopWatching = watchWrites(runDir, limits.maxWriteBytes, runDir, () => {
        stoppedForSize = true;
        stop();
      }, this.options.writeCheckMs);

      child.stdio[3]?.on('data', (chunk: Buffer) => {
        control += chunk.toString('utf8');
        for (let newline = control.indexOf('\n'); newline >= 0; newline = control.indexOf('\n')) {
          const [word, value] = control.slice(0, newline).split(' ');
          control = control.slice(newline + 1);
          if (word === 'started' && /^\d+$/.test(value ?? '')) {
            commandPid = Number(value);
            if (aborted || timedOut) stop();
          } else if (word === 'exit' && /^\d+$/.test(value ?? '')) status = Number(value);
          else if (word === 'fail') failedStep = value;
        }
      });
      child.stdout?.on('data', (chunk: Buffer) => {
        output.add(chunk);
        // A fork bomb makes bash retry for seconds: the first refusal is enough to stop it.
        recent = (recent + chunk.toString('utf8')).slice(-512);
        if (!stoppedForProcesses && hitProcessLimit(recent)) {
          stoppedForProcesses = true;
          stop();
        }
      });
      child.stderr?.on('data', (chunk: Buffer) => {
        if (diagnostics.length < 8192) diagnostics += chunk.toString('utf8');
      });
      child.stdin?.on('error', () => undefined);
      const finish = (value: Ran) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        stopWatching();
        signal?.removeEventListener('abort', onAbort);
        resolve(value);
      };
      child.on('error', (error) => finish({ ok: false, reason: `its helper could not start (${error.message})`, aborted: false }));
      child.on('close', () => {
        if (aborted) return finish({ ok: false, reason: 'stopped', aborted: true });
        if (failedStep && commandPid === undefined) {
          const detail = diagnostics.trim().split('\n').pop() ?? output.text().trim().split('\n').pop() ?? '';
          return finish({ ok: false, reason: `its helper failed at ${failedStep}${detail ? `: ${detail.slice(0, 200)}` : ''}`, aborted: false });
        }
        if (status === null && !timedOut && !stoppedForSize && !stoppedForProcesses) {
          return finish({ ok: false, reason: `its helper ended without the command's exit status${diagnostics ? ` (${diagnostics.trim().slice(0, 200)})` : ''}`, aborted: false });
        }
        finish({ ok: true, status, output: output.text(), truncated: output.truncated, timedOut, stoppedForSize, stoppedForProcesses });
      });
    });
  }
}
