// The Landlock + seccomp backend and the limits of both backends, for real: every scenario here (as
// the user running the tests, root in CI), then again in a child process as an unprivileged user,
// bundled so that user can read it. Fork bombs run under a hard outer cap: a pids cgroup of the
// test's own where root may make one, and always the sandbox's own limit of 32 processes.
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmod, chown, copyFile, mkdir, mkdtemp, realpath, rm, rmdir, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { writablePidsCgroup } from '../../../src/core/sandbox/pidsCgroup';
import { LANDLOCK_SCENARIOS, runLandlockScenarios } from './landlockScenarios';

const UNPRIVILEGED = 65534;
const HELPER = path.join(process.cwd(), 'dist/native/landlock-exec');

async function bundle(dir: string): Promise<string> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const esbuild = require('esbuild') as typeof import('esbuild');
  const outfile = path.join(dir, 'landlock-scenarios.js');
  await esbuild.build({
    stdin: { contents: `require(${JSON.stringify(path.join(process.cwd(), 'test/unit/sandbox/landlockScenarios.ts'))}).landlockScenarioMain(process.argv.slice(2));`, resolveDir: process.cwd(), loader: 'ts' },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    outfile,
    logLevel: 'error',
  });
  await chmod(outfile, 0o644);
  return outfile;
}

describe('Landlock sandbox and limits (real kernel)', function () {
  this.timeout(120_000);
  let previousHelper: string | undefined;
  before(() => {
    previousHelper = process.env.SPECULATE_TEST_LANDLOCK_HELPER;
    process.env.SPECULATE_TEST_LANDLOCK_HELPER = HELPER;
  });
  after(() => {
    if (previousHelper === undefined) delete process.env.SPECULATE_TEST_LANDLOCK_HELPER;
    else process.env.SPECULATE_TEST_LANDLOCK_HELPER = previousHelper;
  });

  for (const name of Object.keys(LANDLOCK_SCENARIOS)) {
    it(name, async () => {
      assert.deepEqual(await runLandlockScenarios([name]), []);
    });
  }

  it('passes every scenario as an unprivileged user too', async function () {
    this.timeout(300_000);
    const asRoot = process.getuid?.() === 0;
    const tmp = await realpath(await mkdtemp(path.join(os.tmpdir(), 'speculate-landlock-unprivileged-')));
    // The outer cap: whatever the scenarios do, the child and all below it stay under 400 processes.
    const parent = asRoot ? writablePidsCgroup() : undefined;
    const cap = parent ? path.join(parent, `speculate-test-cap-${process.pid}`) : undefined;
    try {
      const script = await bundle(tmp);
      const helper = path.join(tmp, 'landlock-exec');
      await copyFile(HELPER, helper);
      await chmod(helper, 0o755);
      const work = path.join(tmp, 'tmp');
      await mkdir(work, { mode: 0o700 });
      if (asRoot) {
        await chmod(tmp, 0o755);
        await chown(work, UNPRIVILEGED, UNPRIVILEGED);
      }
      if (cap) {
        await mkdir(cap);
        await writeFile(path.join(cap, 'pids.max'), '400');
      }
      const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [script], {
          cwd: work,
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', TMPDIR: work, HOME: work, LANG: 'C.UTF-8', SPECULATE_TEST_LANDLOCK_HELPER: helper },
          ...(asRoot ? { uid: UNPRIVILEGED, gid: UNPRIVILEGED } : {}),
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        // Into the cap before it starts anything (node takes far longer to start than this write).
        if (cap) void writeFile(path.join(cap, 'cgroup.procs'), String(child.pid));
        let out = '';
        let err = '';
        child.stdout.on('data', (chunk) => (out += chunk));
        child.stderr.on('data', (chunk) => (err += chunk));
        child.on('close', (exit) => resolve({ code: exit, stdout: out, stderr: err }));
      });
      assert.equal(code, 0, stderr);
      const report = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as { uid: number; ran: number; failures: { name: string; error: string }[] };
      assert.notEqual(report.uid, 0, 'the child ran without root');
      assert.equal(report.ran, Object.keys(LANDLOCK_SCENARIOS).length);
      assert.deepEqual(report.failures, []);
    } finally {
      if (cap) await rmdir(cap).catch(() => undefined);
      await rm(tmp, { recursive: true, force: true });
    }
  });
});
