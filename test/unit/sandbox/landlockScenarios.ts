// Scenarios for the Landlock + seccomp backend and for the limits of both backends, run by
// landlock.test.ts here (root) and again in a child as an unprivileged user, and through the CLI
// with user namespaces switched off. Each scenario builds its own workspace beside an "outside"
// folder, a home folder with a secret, a TCP server and unix socket servers the command must not reach.
import * as assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { LandlockSandbox } from '../../../src/core/sandbox/landlockSandbox';
import { LinuxSandbox } from '../../../src/core/sandbox/linuxSandbox';
import { writablePidsCgroup } from '../../../src/core/sandbox/pidsCgroup';
import type { SandboxLimits, SandboxResult, ShellSandbox } from '../../../src/core/sandbox/shellSandbox';
import { treeSnapshot } from '../engine/engineKit';
import { processesWith, sleep } from './sandboxKit';

export const HOME_SECRET = 'landlock-home-secret-31f9';

export class LandlockKit {
  connections = 0;
  private servers: net.Server[] = [];
  port = 0;
  socketPath = '';
  abstractName = '';

  private constructor(readonly base: string, readonly workspace: string, readonly outside: string, readonly home: string, readonly tmp: string) {}

  static async create(): Promise<LandlockKit> {
    const base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'speculate-landlock-test-')));
    // Root's commands run as a user of their own, who must pass through to the workspace (as in any shared folder).
    await chmod(base, 0o755);
    const kit = new LandlockKit(base, path.join(base, 'workspace'), path.join(base, 'outside'), path.join(base, 'home'), path.join(base, 'tmp'));
    for (const dir of [kit.workspace, kit.outside, kit.home, kit.tmp]) await mkdir(dir, { mode: 0o755 });
    await writeFile(path.join(kit.workspace, 'data.txt'), 'real data\n', { mode: 0o644 });
    await writeFile(path.join(kit.outside, 'kept.txt'), 'outside\n', { mode: 0o644 });
    await writeFile(path.join(kit.home, 'secret.txt'), HOME_SECRET, { mode: 0o644 });
    const listen = async (server: net.Server, where: net.ListenOptions) => {
      server.on('connection', (socket) => {
        kit.connections++;
        socket.end('hello from outside\n');
      });
      await new Promise<void>((resolve) => server.listen(where, resolve));
      kit.servers.push(server);
    };
    const tcp = net.createServer();
    await listen(tcp, { host: '127.0.0.1', port: 0 });
    kit.port = (tcp.address() as net.AddressInfo).port;
    await mkdir(path.join(base, 'sockets'), { mode: 0o755 });
    kit.socketPath = path.join(base, 'sockets', 'service.sock');
    await listen(net.createServer(), { path: kit.socketPath });
    await chmod(kit.socketPath, 0o777);
    kit.abstractName = `speculate-landlock-test-${process.pid}-${Date.now()}`;
    await listen(net.createServer(), { path: `\0${kit.abstractName}` });
    return kit;
  }

  landlock(limits: { maxProcesses?: number; maxMemoryBytes?: number } = {}): LandlockSandbox {
    return new LandlockSandbox({ tmpRoot: this.tmp, hostEnv: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: this.home, LANG: 'C.UTF-8', OPENAI_API_KEY: 'sk-landlock-env-secret' }, writeCheckMs: 100, helper: process.env.SPECULATE_TEST_LANDLOCK_HELPER, limits });
  }

  namespaces(limits: { maxProcesses?: number; maxMemoryBytes?: number } = {}): LinuxSandbox {
    return new LinuxSandbox({ tmpRoot: this.tmp, hostEnv: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: this.home, LANG: 'C.UTF-8' }, writeCheckMs: 100, limits });
  }

  async run(sandbox: ShellSandbox, command: string, limits: Partial<SandboxLimits> = {}, writable = false): Promise<SandboxResult> {
    const outcome = await sandbox.run({ command, cwd: this.workspace, workspace: { root: this.workspace, writable }, limits: { timeoutMs: 30_000, maxOutputBytes: 64 * 1024, maxWriteBytes: 64 * 1024 * 1024, ...limits } });
    assert.ok(outcome.ok, `the sandbox should run the command: ${outcome.ok ? '' : outcome.reason}`);
    return outcome.result;
  }

  async cleanup(): Promise<void> {
    for (const server of this.servers) await new Promise((resolve) => server.close(resolve));
    await rm(this.base, { recursive: true, force: true });
  }
}

const connect = (target: string) => `node -e 'const s = require("net").connect(${target}); s.on("connect", () => { console.log("CONNECTED"); s.end(); }); s.on("error", (e) => console.log("refused: " + e.code + " " + e.message))'`;

/** The host's root is bound by no RLIMIT_NPROC: a namespace fork bomb runs only where the pids cgroup caps it. */
export function assertForkBombCapped(sandbox: ShellSandbox): void {
  if (sandbox instanceof LinuxSandbox && process.getuid?.() === 0) assert.ok(writablePidsCgroup(), 'as root, the namespace backend needs a writable pids cgroup to bound processes; refusing to start a fork bomb without it');
}

async function forkBomb(kit: LandlockKit, sandbox: ShellSandbox): Promise<void> {
  assertForkBombCapped(sandbox);
  const marker = `speculate-forkbomb-${process.pid}-${Date.now()}`;
  const started = Date.now();
  const result = await kit.run(sandbox, `bomb() { bomb | bomb & }; bomb; sleep 25 # ${marker}`, { timeoutMs: 30_000 }, sandbox instanceof LinuxSandbox);
  await result.dispose();
  assert.ok(Date.now() - started < 30_000, 'it ended before the time limit');
  assert.equal(result.timedOut, false, 'stopped by the process limit, not by the timer');
  assert.equal(result.problems[0]?.kind, 'limit', JSON.stringify(result.problems));
  assert.match(result.problems[0].detail, /the process limit, 32/);
  for (let i = 0; i < 100 && processesWith(marker).length > 0; i++) await sleep(50);
  assert.deepEqual(processesWith(marker), [], 'no process of the fork bomb is left');
}

async function memoryHog(kit: LandlockKit, sandbox: ShellSandbox): Promise<void> {
  const result = await kit.run(sandbox, `node -e 'const kept = []; for (;;) kept.push(Buffer.alloc(64 * 1024 * 1024, 1))'`, { timeoutMs: 30_000 }, sandbox instanceof LinuxSandbox);
  await result.dispose();
  assert.equal(result.timedOut, false);
  assert.equal(result.problems[0]?.kind, 'limit', `${JSON.stringify(result.problems)} ${result.output.slice(0, 300)}`);
  assert.match(result.problems[0].detail, /the memory limit, 1024 MB/);
}

export const LANDLOCK_SCENARIOS: Record<string, (kit: LandlockKit) => Promise<void>> = {
  'Landlock: a hostile read-only-looking command writes nothing, reaches no TCP or unix socket, reads no home secret, and says so': async (kit) => {
    const before = await treeSnapshot(kit.workspace);
    const outsideBefore = await treeSnapshot(kit.outside);
    const sandbox = kit.landlock();
    const command = [
      'cat data.txt',
      'echo pwned > data.txt && echo WROTE-WORKSPACE',
      'echo pwned > new.txt && echo CREATED-IN-WORKSPACE',
      `echo pwned > ${kit.outside}/x.txt && echo WROTE-OUTSIDE`,
      `rm -f ${kit.outside}/kept.txt && echo REMOVED-OUTSIDE`,
      `cat ${kit.home}/secret.txt && echo READ-HOME`,
      `(exec 3<>/dev/tcp/127.0.0.1/${kit.port}) && echo CONNECTED-TCP-BASH`,
      connect(String(kit.port)),
      connect(JSON.stringify(kit.socketPath)),
      connect(JSON.stringify(`\0${kit.abstractName}`)),
      'echo "env: ${OPENAI_API_KEY:-none}"',
      'echo ok > "$HOME/scratch.txt" && cat "$HOME/scratch.txt" && echo ok > "$TMPDIR/t" && echo SCRATCH-OK',
      'echo pwned > data.txt',
    ].join('; ');
    const result = await kit.run(sandbox, command);
    await result.dispose();
    const output = result.output;
    assert.match(output, /^real data$/m, 'it reads the workspace');
    for (const done of ['WROTE-WORKSPACE', 'CREATED-IN-WORKSPACE', 'WROTE-OUTSIDE', 'REMOVED-OUTSIDE', 'READ-HOME', 'CONNECTED', HOME_SECRET, 'sk-landlock-env-secret']) assert.ok(!output.includes(done), `${done} must not happen:\n${output}`);
    assert.match(output, /data\.txt: Permission denied/);
    assert.match(output, /new\.txt: Permission denied/);
    assert.match(output, /x\.txt: Permission denied/);
    assert.match(output, /secret\.txt: Permission denied/);
    assert.match(output, /socket: Permission denied/, 'bash could make no TCP socket');
    assert.equal((output.match(/refused: EACCES/g) ?? []).length, 3, `TCP, a unix socket path and an abstract socket all refused:\n${output}`);
    assert.match(output, /env: none/);
    assert.match(output, /^ok$/m);
    assert.match(output, /SCRATCH-OK/, 'its own HOME and TMPDIR are writable');
    assert.equal(kit.connections, 0, 'no server saw a connection');
    assert.notEqual(result.exitCode, 0);
    assert.ok(result.blockedBy?.kind === 'read-only' || result.blockedBy?.kind === 'network', `a refusal is the sandbox in its way, not a result (${JSON.stringify(result.blockedBy)})`);
    assert.deepEqual(await treeSnapshot(kit.workspace), before, 'the workspace is unchanged');
    assert.deepEqual(await treeSnapshot(kit.outside), outsideBefore, 'nothing outside changed');
    assert.equal(await readFile(path.join(kit.outside, 'kept.txt'), 'utf8'), 'outside\n');
  },

  'Landlock: a read-only command runs, the probe names the backend, and writes are refused by the run itself': async (kit) => {
    const sandbox = kit.landlock();
    const availability = await sandbox.probe();
    assert.ok(availability.available && availability.backend === 'landlock' && availability.writes === 'none' && (availability.abi ?? 0) >= 6, JSON.stringify(availability));
    const result = await kit.run(sandbox, 'ls && wc -l data.txt && git --version >/dev/null && echo fine');
    await result.dispose();
    assert.equal(result.exitCode, 0, result.output);
    assert.match(result.output, /data\.txt[\s\S]*1 data\.txt[\s\S]*fine/);
    const writing = await sandbox.run({ command: 'true', cwd: kit.workspace, workspace: { root: kit.workspace, writable: true }, limits: { timeoutMs: 5000, maxOutputBytes: 1024, maxWriteBytes: 1024 } });
    assert.ok(!writing.ok && /cannot redirect/.test(writing.reason));
  },

  'Landlock: a fork bomb ends at the process limit, before the time limit, with no process left': (kit) => forkBomb(kit, kit.landlock({ maxProcesses: 32 })),
  'Landlock: a memory hog ends at the memory limit': (kit) => memoryHog(kit, kit.landlock({ maxMemoryBytes: 1024 * 1024 * 1024 })),
  'namespaces: a fork bomb ends at the process limit, before the time limit, with no process left': (kit) => forkBomb(kit, kit.namespaces({ maxProcesses: 32 })),
  'namespaces: a memory hog ends at the memory limit': (kit) => memoryHog(kit, kit.namespaces({ maxMemoryBytes: 1024 * 1024 * 1024 })),
};

export async function runLandlockScenarios(names: readonly string[]): Promise<{ name: string; error: string }[]> {
  const failures: { name: string; error: string }[] = [];
  for (const name of names) {
    const kit = await LandlockKit.create();
    try {
      await LANDLOCK_SCENARIOS[name](kit);
    } catch (error) {
      failures.push({ name, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    } finally {
      await kit.cleanup();
    }
  }
  return failures;
}

/** Entry point of the bundled child (an unprivileged user): scenario names as arguments, a JSON report on stdout. */
export async function landlockScenarioMain(argv: readonly string[]): Promise<void> {
  const names = argv.length > 0 ? argv : Object.keys(LANDLOCK_SCENARIOS);
  const failures = await runLandlockScenarios(names);
  process.stdout.write(`${JSON.stringify({ uid: process.getuid?.(), ran: names.length, failures })}\n`);
}
