// The Linux sandbox with real namespaces: every scenario runs here, as the user running the tests
// (root in CI), and again in a child process as an unprivileged user (uid/gid 65534 when the tests
// run as root; as this same user otherwise), bundled so that user can read it from a temp folder.
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmod, chown, copyFile, mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { SCENARIOS, runScenarios } from './scenarios';
import { processesNamed, processesWith, sleep, testKeeper } from './sandboxKit';

const UNPRIVILEGED = 65534;

/** Bundles the scenarios into one file the unprivileged user can read (the checkout may sit in /root). */
async function bundleScenarios(dir: string): Promise<string> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const esbuild = require('esbuild') as typeof import('esbuild');
  const outfile = path.join(dir, 'scenarios.js');
  await esbuild.build({
    stdin: { contents: `require(${JSON.stringify(path.join(process.cwd(), 'test/unit/sandbox/scenarios.ts'))}).scenarioMain(process.argv.slice(2));`, resolveDir: process.cwd(), loader: 'ts' },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    outfile,
    logLevel: 'error',
  });
  await chmod(outfile, 0o644);
  return outfile;
}

function runChild(script: string, tmp: string, asRoot: boolean, keeper: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [script], {
      cwd: tmp,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', TMPDIR: tmp, HOME: tmp, LANG: 'C.UTF-8', SPECULATE_TEST_KEEPER: keeper },
      ...(asRoot ? { uid: UNPRIVILEGED, gid: UNPRIVILEGED } : {}),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('LinuxSandbox (real namespaces)', function () {
  this.timeout(60_000);

  for (const name of Object.keys(SCENARIOS)) {
    it(name, async () => {
      const failures = await runScenarios([name]);
      assert.deepEqual(failures, []);
    });
  }

  it("when the engine's process dies, the command and everything it started end with it", async function () {
    const tmp = await realpath(await mkdtemp(path.join(os.tmpdir(), 'speculate-sandbox-orphan-')));
    const marker = `speculate-orphan-${process.pid}-${Date.now()}`;
    try {
      const script = await bundleScenarios(tmp);
      const child = spawn(process.execPath, [script, '--hold'], { cwd: tmp, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', TMPDIR: tmp, HOME: tmp, SPECULATE_HOLD_MARKER: marker }, stdio: 'ignore' });
      for (let i = 0; i < 1000 && processesNamed(marker).length === 0; i++) await sleep(20);
      assert.ok(processesNamed(marker).length > 0, 'the command runs');
      child.kill('SIGKILL');
      for (let i = 0; i < 500 && processesWith(marker).length > 0; i++) await sleep(20);
      assert.deepEqual(processesWith(marker), [], 'no process of the command outlives the engine');
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  });

  it('passes every scenario as an unprivileged user too', async function () {
    this.timeout(240_000);
    const asRoot = process.getuid?.() === 0;
    const tmp = await realpath(await mkdtemp(path.join(os.tmpdir(), 'speculate-sandbox-unprivileged-')));
    try {
      const script = await bundleScenarios(tmp);
      // The kept sandbox's keeper, where that user may run it (the checkout may sit in /root).
      const keeper = path.join(tmp, 'sandbox-keeper');
      await copyFile(testKeeper(), keeper);
      await chmod(keeper, 0o755);
      const work = path.join(tmp, 'tmp');
      await mkdir(work, { mode: 0o700 });
      if (asRoot) {
        await chmod(tmp, 0o755);
        await chown(work, UNPRIVILEGED, UNPRIVILEGED);
      }
      const { code, stdout, stderr } = await runChild(script, work, asRoot, keeper);
      assert.equal(code, 0, stderr);
      const report = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as { uid: number; ran: number; failures: { name: string; error: string }[] };
      assert.notEqual(report.uid, 0, 'the child ran without root');
      assert.equal(report.ran, Object.keys(SCENARIOS).length);
      assert.deepEqual(report.failures, []);
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  });
});
