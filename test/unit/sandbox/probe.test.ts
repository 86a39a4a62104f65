// The not-available paths: each reason a machine cannot sandbox is said in words, with what to do.
import * as assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, realpath, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { probeLinuxSandbox, type ProbeInput } from '../../../src/core/sandbox/probe';
import { LinuxSandbox, UnavailableSandbox } from '../../../src/core/sandbox';

describe('sandbox probe', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'speculate-probe-test-')));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  async function sysctls(values: Record<string, string>): Promise<string> {
    const root = await mkdtemp(path.join(dir, 'sys-'));
    for (const [name, value] of Object.entries(values)) {
      const file = path.join(root, ...name.split('.'));
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, `${value}\n`);
    }
    return root;
  }

  function input(overrides: Partial<ProbeInput>): ProbeInput {
    return {
      platform: 'linux',
      sysctlDir: path.join(dir, 'none'),
      tmpRoot: dir,
      prepare: async () => ({}),
      trial: async () => ({ ok: false, reason: 'it could not create its namespaces', aborted: false, stage: 'namespaces', diagnostics: 'unshare: unshare failed: Operation not permitted' }),
      ...overrides,
    };
  }

  it('is not available on macOS or Windows, with no action to take', async () => {
    assert.deepEqual(await probeLinuxSandbox(input({ platform: 'darwin' })), { available: false, reason: 'the sandbox needs Linux namespaces, and this is macOS', action: null });
    assert.deepEqual(await probeLinuxSandbox(input({ platform: 'win32' })), { available: false, reason: 'the sandbox needs Linux namespaces, and this is Windows', action: null });
  });

  it("names Ubuntu's AppArmor restriction and how to lift it", async () => {
    const result = await probeLinuxSandbox(input({ sysctlDir: await sysctls({ 'kernel.apparmor_restrict_unprivileged_userns': '1' }) }));
    assert.equal(result.available, false);
    assert.ok(!result.available && /AppArmor/.test(result.reason) && /apparmor_restrict_unprivileged_userns=0/.test(result.action ?? ''));
  });

  it('names switched-off user namespaces (either sysctl) and an unknown refusal, such as a container\'s', async () => {
    const off = await probeLinuxSandbox(input({ sysctlDir: await sysctls({ 'user.max_user_namespaces': '0' }) }));
    assert.ok(!off.available && /max_user_namespaces = 0/.test(off.reason));
    const noClone = await probeLinuxSandbox(input({ sysctlDir: await sysctls({ 'kernel.unprivileged_userns_clone': '0' }) }));
    assert.ok(!noClone.available && /unprivileged_userns_clone = 0/.test(noClone.reason) && /sysctl -w kernel\.unprivileged_userns_clone=1/.test(noClone.action ?? ''));
    const unknown = await probeLinuxSandbox(input({}));
    assert.ok(!unknown.available && /Operation not permitted/.test(unknown.reason) && /container/.test(unknown.action ?? ''));
  });

  it('names a missing program and the package that brings it', async () => {
    const result = await probeLinuxSandbox(input({ prepare: async () => ({ missing: 'unshare', from: 'util-linux' }) }));
    assert.ok(!result.available && /unshare \(from util-linux\) was not found/.test(result.reason) && result.action === 'Install util-linux, then reload the window.');
  });

  it('names an old kernel that cannot mount overlayfs in a user namespace', async () => {
    const result = await probeLinuxSandbox(input({ trial: async () => ({ ok: false, reason: 'its file system could not be mounted: mount: /x: wrong fs type (overlay)', aborted: false, stage: 'mount' }) }));
    assert.ok(!result.available && /5\.11/.test(result.reason) && /Update the kernel/.test(result.action ?? ''));
  });

  it('a sandbox that is switched off says so and runs nothing', async () => {
    const sandbox = new UnavailableSandbox('the sandbox is turned off (speculate.sandbox.enabled)', 'Turn it on in the settings.');
    assert.deepEqual(await sandbox.probe(), { available: false, reason: 'the sandbox is turned off (speculate.sandbox.enabled)', action: 'Turn it on in the settings.' });
    assert.deepEqual(await sandbox.run(), { ok: false, reason: 'the sandbox is turned off (speculate.sandbox.enabled)', aborted: false });
  });

  it('the real probe passes on this kind of machine, once per sandbox, and leaves nothing behind', async () => {
    const sandbox = new LinuxSandbox({ tmpRoot: dir });
    const first = sandbox.probe();
    assert.equal(sandbox.probe(), first, 'one probe per sandbox');
    assert.deepEqual(await first, { available: true, backend: 'linux-namespaces', writes: 'overlay' });
    assert.deepEqual((await readdir(dir)).filter((name) => name !== 'speculate-sandbox-' + process.getuid?.()), []);
  });
});
