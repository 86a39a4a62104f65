// Whether the Linux sandbox works on this machine: one real run of the whole recipe on a tiny
// workspace (a layer, a write, a deletion, a replaced folder, read back), and when it fails, the
// reason in words with what the user can do (Ubuntu's AppArmor rule, a switched-off sysctl, an old kernel).
import { mkdtemp, readFile, realpath, writeFile, mkdir } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import type { RunFailure } from './runOutcome';
import { removeTree } from './scratch';
import type { SandboxAvailability, SandboxOutcome, SandboxRunRequest } from './shellSandbox';

export interface ProbeInput {
  platform: NodeJS.Platform;
  sysctlDir: string;
  tmpRoot: string;
  prepare: () => Promise<object | { missing: string; from: string }>;
  trial: (request: SandboxRunRequest) => Promise<SandboxOutcome | RunFailure>;
}

const BACKEND = 'linux-namespaces' as const;
const PLATFORM_NAMES: Partial<Record<NodeJS.Platform, string>> = { darwin: 'macOS', win32: 'Windows', freebsd: 'FreeBSD', openbsd: 'OpenBSD' };
const TRIAL_COMMAND = [
  'test "$(cat kept.txt)" = layered',
  'test ! -e gone.txt',
  'echo probe > new.txt',
  'rm -rf dir && mkdir dir && echo n > dir/new.txt',
  '! (echo x > /etc/speculate-probe) 2>/dev/null',
].join(' && ');

function unavailable(reason: string, action: string | null): SandboxAvailability {
  return { available: false, reason, action };
}

async function sysctl(dir: string, name: string): Promise<string | undefined> {
  try {
    return (await readFile(path.join(dir, ...name.split('.')), 'utf8')).trim();
  } catch {
    return undefined;
  }
}

/** Why user namespaces cannot be created, from the sysctls that switch them off. */
async function namespaceReason(sysctlDir: string, diagnostics: string): Promise<SandboxAvailability> {
  if ((await sysctl(sysctlDir, 'kernel.apparmor_restrict_unprivileged_userns')) === '1') {
    return unavailable(
      "Ubuntu's AppArmor policy forbids unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns = 1)",
      'Allow them with `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` (put it in /etc/sysctl.d/ to keep it), or give VS Code an AppArmor profile that allows "userns", then reload the window.',
    );
  }
  if ((await sysctl(sysctlDir, 'user.max_user_namespaces')) === '0') {
    return unavailable('user namespaces are switched off (user.max_user_namespaces = 0)', 'Allow them with `sudo sysctl -w user.max_user_namespaces=15000`, then reload the window.');
  }
  if ((await sysctl(sysctlDir, 'kernel.unprivileged_userns_clone')) === '0') {
    return unavailable('unprivileged user namespaces are switched off (kernel.unprivileged_userns_clone = 0)', 'Allow them with `sudo sysctl -w kernel.unprivileged_userns_clone=1`, then reload the window.');
  }
  return unavailable(
    `this system does not let a program create user namespaces${diagnostics ? ` (${diagnostics})` : ''}`,
    'In a container, allow user namespaces (Docker: a seccomp profile that permits unshare and clone with CLONE_NEWUSER); elsewhere check the kernel and security policy.',
  );
}

function firstLines(text: string): string {
  return text.trim().split('\n').slice(-2).join(' ').slice(0, 240);
}

export async function probeLinuxSandbox(input: ProbeInput): Promise<SandboxAvailability> {
  if (input.platform !== 'linux') {
    return unavailable(`the sandbox needs Linux namespaces, and this is ${PLATFORM_NAMES[input.platform] ?? input.platform}`, null);
  }
  const prepared = await input.prepare();
  if ('missing' in prepared) {
    return unavailable(`${prepared.missing} (from ${prepared.from}) was not found in /usr/bin, /bin, /usr/sbin or /sbin`, `Install ${prepared.from.replace(/ \(.*\)$/, '')}, then reload the window.`);
  }
  let dir: string;
  try {
    dir = await realpath(await mkdtemp(path.join(input.tmpRoot, 'speculate-sandbox-probe-')));
  } catch (error) {
    return unavailable(`its temp folder cannot be used (${error instanceof Error ? error.message : String(error)})`, 'Point TMPDIR at a writable folder, then reload the window.');
  }
  try {
    const workspace = path.join(dir, 'workspace');
    await mkdir(path.join(workspace, 'dir'), { recursive: true });
    await writeFile(path.join(workspace, 'kept.txt'), 'real\n');
    await writeFile(path.join(workspace, 'gone.txt'), 'real\n');
    await writeFile(path.join(workspace, 'dir', 'old.txt'), 'old\n');
    const layered = path.join(dir, 'layered');
    await writeFile(layered, 'layered\n', { mode: 0o644 });
    const outcome = await input.trial({
      command: TRIAL_COMMAND,
      cwd: workspace,
      workspace: { root: workspace, writable: true, layer: { files: [{ path: 'kept.txt', contentPath: layered, mode: 0o644 }], deletedFiles: ['gone.txt'], deletedDirs: [] } },
      limits: { timeoutMs: 20_000, maxOutputBytes: 16 * 1024, maxWriteBytes: 1024 * 1024 },
    });
    if (!outcome.ok) return failureReason(outcome, input.sysctlDir);
    const { result } = outcome;
    try {
      if (result.exitCode !== 0) return unavailable(`the sandbox's trial command failed (${result.timedOut ? 'timed out' : `exit ${result.exitCode ?? result.signal}`}: ${firstLines(result.output) || 'no output'})`, null);
      const seen = result.changes.map((change) => `${change.kind} ${change.path}`).sort();
      const expected = ['delete dir/old.txt', 'write dir/new.txt', 'write new.txt'];
      if (JSON.stringify(seen) !== JSON.stringify(expected)) {
        return unavailable(`the overlay did not report the trial's changes as expected (saw: ${seen.join(', ') || 'nothing'})`, null);
      }
      return { available: true, backend: BACKEND, writes: 'overlay' };
    } finally {
      await result.dispose();
    }
  } finally {
    await removeTree(dir).catch(() => undefined);
  }
}

async function failureReason(failure: SandboxOutcome | RunFailure, sysctlDir: string): Promise<SandboxAvailability> {
  if (failure.ok) throw new Error('not a failure');
  const stage = 'stage' in failure ? failure.stage : undefined;
  const diagnostics = 'diagnostics' in failure && failure.diagnostics ? firstLines(failure.diagnostics) : '';
  if (stage === 'namespaces' || stage === 'start') return namespaceReason(sysctlDir, diagnostics);
  if (stage === 'mount' && /overlay/i.test(failure.reason)) {
    return unavailable(`this kernel cannot mount overlayfs inside a user namespace (Linux 5.11 or newer is needed; this is ${os.release()})`, 'Update the kernel to use the sandbox.');
  }
  if (stage === 'mount') return unavailable(`the sandbox's file system could not be mounted (${failure.reason})`, 'In a container, mounting proc and sysfs inside it must be allowed.');
  if (stage === 'workspace') return unavailable(failure.reason, 'Point TMPDIR at a folder whose path has no commas, colons, quotes or backslashes.');
  return unavailable(`the sandbox could not run its trial (${failure.reason})`, null);
}
