// Which backend runs sandboxed commands: namespaces where they work, else Landlock (with the
// namespace probe's reason as its why), else none with both reasons; SPECULATE_SANDBOX forces one.
// Also the pieces of the Landlock backend that need no kernel: its rules around hidden files, the
// uid root's commands run as, and the answer when the helper is missing.
import * as assert from 'node:assert/strict';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChosenSandbox, describeBackend, sandboxChoice } from '../../../src/core/sandbox/chosenSandbox';
import { LandlockSandbox, rootCommandUid } from '../../../src/core/sandbox/landlockSandbox';
import { landlockRules } from '../../../src/core/sandbox/landlockRules';
import type { SandboxAvailability, SandboxOutcome, ShellSandbox } from '../../../src/core/sandbox/shellSandbox';

class FakeSandbox implements ShellSandbox {
  runs = 0;
  constructor(private readonly answer: SandboxAvailability) {}
  probe(): Promise<SandboxAvailability> {
    return Promise.resolve(this.answer);
  }
  run(): Promise<SandboxOutcome> {
    this.runs++;
    return Promise.resolve({ ok: false, reason: 'fake', aborted: false });
  }
}

const NAMESPACES_OK: SandboxAvailability = { available: true, backend: 'linux-namespaces', writes: 'overlay' };
const NAMESPACES_OFF: SandboxAvailability = { available: false, reason: 'user namespaces are switched off (user.max_user_namespaces = 0)', action: 'Allow them with `sudo sysctl -w user.max_user_namespaces=15000`, then reload the window.' };
const LANDLOCK_OK: SandboxAvailability = { available: true, backend: 'landlock', writes: 'none', abi: 7 };
const LANDLOCK_MISSING: SandboxAvailability = { available: false, reason: "the Landlock sandbox's helper (landlock-exec) is not part of this build for darwin-arm64", action: null };

describe('the chosen sandbox backend', () => {
  it('namespaces where their probe passes; Landlock where it fails, saying why; neither with both reasons', async () => {
    assert.deepEqual(await new ChosenSandbox(new FakeSandbox(NAMESPACES_OK), new FakeSandbox(LANDLOCK_OK)).probe(), NAMESPACES_OK);
    const landlock = new FakeSandbox(LANDLOCK_OK);
    const chosen = new ChosenSandbox(new FakeSandbox(NAMESPACES_OFF), landlock);
    const answer = await chosen.probe();
    assert.deepEqual(answer, { ...LANDLOCK_OK, why: 'user namespaces are switched off (user.max_user_namespaces = 0)' });
    assert.match(describeBackend(answer), /^Landlock ABI 7 \+ seccomp \(read-only commands only; commands that change files stop speculation; user namespaces are switched off/);
    await chosen.run({ command: 'true', cwd: '/w', workspace: { root: '/w', writable: false }, limits: { timeoutMs: 1, maxOutputBytes: 1, maxWriteBytes: 1 } });
    assert.equal(landlock.runs, 1, 'runs go to the chosen backend');
    const neither = await new ChosenSandbox(new FakeSandbox(NAMESPACES_OFF), new FakeSandbox(LANDLOCK_MISSING)).probe();
    assert.ok(!neither.available && /max_user_namespaces = 0\); and the Landlock fallback cannot run either: the Landlock sandbox's helper/.test(neither.reason) && /sysctl/.test(neither.action ?? ''));
  });

  it('SPECULATE_SANDBOX forces a backend: landlock over working namespaces, namespaces without a fallback, off', async () => {
    assert.deepEqual([sandboxChoice('off'), sandboxChoice('namespaces'), sandboxChoice('landlock'), sandboxChoice(undefined), sandboxChoice('bogus')], ['off', 'namespaces', 'landlock', 'auto', 'auto']);
    const forced = await new ChosenSandbox(new FakeSandbox(NAMESPACES_OK), new FakeSandbox(LANDLOCK_OK), 'landlock').probe();
    assert.ok(forced.available && forced.backend === 'landlock' && forced.why === 'chosen by SPECULATE_SANDBOX=landlock');
    assert.deepEqual(await new ChosenSandbox(new FakeSandbox(NAMESPACES_OFF), new FakeSandbox(LANDLOCK_OK), 'namespaces').probe(), NAMESPACES_OFF);
    const off = await new ChosenSandbox(new FakeSandbox(NAMESPACES_OK), new FakeSandbox(LANDLOCK_OK), 'off').probe();
    assert.ok(!off.available && /SPECULATE_SANDBOX=off/.test(off.reason));
  });

  it('without its helper (another platform\'s package) the Landlock backend says so and what to install', async () => {
    const answer = await new LandlockSandbox({ helper: null }).probe();
    assert.ok(!answer.available && /helper \(landlock-exec\) is not part of this build/.test(answer.reason) && /linux-x64 or linux-arm64/.test(answer.action ?? ''));
    const elsewhere = await new LandlockSandbox({ platform: 'darwin' }).probe();
    assert.ok(!elsewhere.available && /this is darwin/.test(elsewhere.reason));
  });

  it("root's commands get an unused uid inside what the user namespace maps, or stay root where it maps root alone", () => {
    const uid = rootCommandUid('         0          0 4294967295\n');
    assert.ok(uid >= 2_000_000_000 && uid < 2_001_000_000);
    assert.equal(rootCommandUid('         0       1000          1\n         1     100000      65536\n'), 65536);
    assert.equal(rootCommandUid('         0          0          1\n'), 0);
  });

  it('the rules grant a system folder around the files others may not read: their folders may be listed, they stay unreadable', async () => {
    const dir = await realpath(await mkdtemp(join(tmpdir(), 'landlock-rules-')));
    try {
      await mkdir(join(dir, 'etc/ssl/private'), { recursive: true });
      await mkdir(join(dir, 'etc/apt'), { recursive: true });
      await writeFile(join(dir, 'etc/shadow'), 'x');
      await writeFile(join(dir, 'etc/hosts'), 'x');
      await writeFile(join(dir, 'etc/ssl/cert.pem'), 'x');
      const rules = await landlockRules({ system: [{ path: join(dir, 'etc'), kind: 'bind' }], masked: [{ path: join(dir, 'etc/shadow') }, { path: join(dir, 'etc/ssl/private') }], toolchains: ['/opt/node/bin'], workspaceRoot: '/work/ws', scratch: '/tmp/run' });
      const rel = rules.map((rule) => `${rule.kind} ${rule.path.startsWith(dir) ? rule.path.slice(dir.length) : rule.path}`);
      assert.deepEqual(rel, ['list /etc', 'read /etc/apt', 'read /etc/hosts', 'list /etc/ssl', 'read /etc/ssl/cert.pem', 'read /proc', 'read /sys', 'read /opt/node/bin', 'read /work/ws', 'device /dev/null', 'device /dev/zero', 'device /dev/full', 'device /dev/random', 'device /dev/urandom', 'write /tmp/run']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
