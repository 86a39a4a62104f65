// The per-workspace lock: one holder at a time across processes, a lock left by a dead process, an
// earlier boot or a reused pid taken over (once, even by two processes at the same moment), a live
// holder waited for and then named, and the lock file outside the workspace, keyed by its real path.
import * as assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, realpath, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { FileWorkspaceLock, lockFileFor, WorkspaceBusyError } from '../../../src/core/fs/workspaceLock';

const exitedPid = (): number => spawnSync(process.execPath, ['-e', '0']).pid as number;

describe('workspace lock', function () {
  this.timeout(30_000);
  let parent: string;
  let root: string;
  let stateDir: string;

  beforeEach(async () => {
    parent = await realpath(await mkdtemp(path.join(os.tmpdir(), 'speculate-lock-')));
    root = path.join(parent, 'ws');
    stateDir = path.join(parent, 'state');
    await mkdir(root);
  });

  afterEach(() => rm(parent, { recursive: true, force: true }));

  /** Writes a lock file as another holder would have left it. */
  async function plantHolder(holder: Record<string, unknown>, ageMs = 0): Promise<string> {
    const file = await lockFileFor(stateDir, root);
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    await writeFile(file, JSON.stringify({ token: 'planted', bootTime: Date.now() - os.uptime() * 1000, root, ...holder }));
    if (ageMs) await utimes(file, new Date(Date.now() - ageMs), new Date(Date.now() - ageMs));
    return file;
  }

  it('lets one holder in at a time within a process, and leaves no lock file behind', async () => {
    const lock = await FileWorkspaceLock.open({ stateDir, root });
    let inside = 0;
    let most = 0;
    await Promise.all(Array.from({ length: 20 }, () => lock.hold(async () => {
      most = Math.max(most, ++inside);
      await new Promise((resolve) => setTimeout(resolve, 1));
      inside--;
    })));
    assert.equal(most, 1);
    await assert.rejects(readFile(lock.path), /ENOENT/);
  });

  it('takes over the lock of a process that no longer runs', async () => {
    await plantHolder({ pid: exitedPid() });
    const lock = await FileWorkspaceLock.open({ stateDir, root, timeoutMs: 2_000 });
    assert.equal(await lock.hold(async () => 'held'), 'held');
  });

  it('takes over a lock from an earlier boot, or from a pid that now names another process', async () => {
    await plantHolder({ pid: process.ppid, bootId: 'an-earlier-boot' });
    assert.equal(await (await FileWorkspaceLock.open({ stateDir, root, timeoutMs: 2_000, bootId: 'this-boot' })).hold(async () => 1), 1);
    await plantHolder({ pid: process.ppid, startTicks: 1 });
    assert.equal(await (await FileWorkspaceLock.open({ stateDir, root, timeoutMs: 2_000, startTicksOf: () => 999 })).hold(async () => 2), 2);
  });

  it('waits for a live holder, then gives up naming it, without touching its lock', async () => {
    const file = await plantHolder({ pid: process.ppid });
    const lock = await FileWorkspaceLock.open({ stateDir, root, timeoutMs: 300 });
    await assert.rejects(lock.hold(async () => 'never'), (error: unknown) => error instanceof WorkspaceBusyError && error.message.includes(`(process ${process.ppid})`) && /nothing was changed/.test(error.message));
    assert.match(await readFile(file, 'utf8'), /"token":"planted"/, 'the holder keeps its lock');
  });

  it('treats an unreadable lock file as held while fresh and as stale once old', async () => {
    const file = await lockFileFor(stateDir, root);
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    await writeFile(file, '');
    await assert.rejects((await FileWorkspaceLock.open({ stateDir, root, timeoutMs: 200 })).hold(async () => 0), WorkspaceBusyError);
    await utimes(file, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    assert.equal(await (await FileWorkspaceLock.open({ stateDir, root, timeoutMs: 2_000 })).hold(async () => 3), 3);
  });

  it('names the lock by the real path, and never keeps it inside the workspace', async () => {
    await symlink(root, path.join(parent, 'alias'));
    assert.equal(await lockFileFor(stateDir, path.join(parent, 'alias')), await lockFileFor(stateDir, root));
    assert.notEqual(await lockFileFor(stateDir, root), await lockFileFor(stateDir, path.join(parent, 'state')));
    const inside = await lockFileFor(path.join(root, '.state'), root);
    assert.ok(!inside.startsWith(root + path.sep), inside);
  });

  it('holds two processes apart, even when both find the same stale lock at once (2 × 100 increments)', async () => {
    await writeFile(path.join(root, 'counter.txt'), '0');
    await plantHolder({ pid: exitedPid() });
    const child = path.join(__dirname, 'lockChild.js');
    const input = JSON.stringify({ stateDir, root, rounds: 100 });
    await Promise.all([0, 1].map(() => promisify(execFile)(process.execPath, [child, input])));
    assert.equal(await readFile(path.join(root, 'counter.txt'), 'utf8'), '200', 'no increment was lost');
  });
});
