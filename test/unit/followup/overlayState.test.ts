// The engine's own state: overlays live in a per-user folder of mode 0700 outside every open
// workspace, and start-up recovery acts only on journals in folders the engine made, naming a
// workspace open now, and only on paths inside it — a planted journal deletes nothing.
import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { chmod, chown, mkdir, readdir, stat, symlink, unlink, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { JOURNAL_FILE, type ApplyJournal } from '../../../src/core/followup/overlay/applyJournal';
import { OVERLAY_PARENT } from '../../../src/core/followup/overlay/recovery';
import { cleanupStaleOverlays, OverlayFs, recoverInterruptedApplies, type HousekeepingOptions } from '../../../src/core/followup/overlayFs';
import { exists, makeSandbox, snapshot, type Sandbox } from './overlayKit';

const DEAD_PID = 3_999_998;
const NOBODY = 65534;
const isRoot = process.getuid?.() === 0;

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

/** What the demonstrated attack planted: "finish" an accept that deletes a file it names. */
function deletingJournal(workspaceRoot: string, file: string, content: string): ApplyJournal {
  return {
    version: 1,
    workspaceRoot,
    overlayId: 'planted',
    phase: 'committing',
    steps: [{ path: file, action: 'delete', expect: { exists: true, sha256: sha(content), size: Buffer.byteLength(content) } }],
    createdDirs: [],
  };
}

/** Writes a journal into `<base>/<OVERLAY_PARENT>/<DEAD_PID>/planted/`, with folders of `mode`. */
async function plant(base: string, journal: ApplyJournal, mode = 0o700): Promise<string> {
  const dir = path.join(base, OVERLAY_PARENT, String(DEAD_PID), 'planted');
  await mkdir(dir, { recursive: true });
  for (const folder of [path.join(base, OVERLAY_PARENT), path.dirname(dir), dir]) await chmod(folder, mode);
  await writeFile(path.join(dir, JOURNAL_FILE), JSON.stringify(journal));
  return dir;
}

describe("The engine's own state", () => {
  let box: Sandbox;
  const housekeeping = (extra: Partial<HousekeepingOptions> = {}): HousekeepingOptions => ({
    tmpRoot: box.tmpRoot,
    fallbackTmpRoots: [],
    workspaces: [box.ws],
    isProcessAlive: (pid) => pid === process.pid,
    ...extra,
  });

  beforeEach(async () => {
    box = await makeSandbox({ 'src/app.ts': 'export const app = 1;\n', 'keep.txt': 'keep me\n' }, { 'secret.txt': 'outside secret\n' });
  });

  afterEach(async () => {
    await box.dispose();
  });

  describe('where overlays live', () => {
    it('in a per-user folder of mode 0700: <tmp>/speculate-<uid>/<pid>/<id>/', async () => {
      assert.equal(OVERLAY_PARENT, `speculate-${process.getuid?.()}`);
      const overlay = await box.open();
      assert.equal(path.dirname(path.dirname(overlay.dir)), path.join(box.tmpRoot, OVERLAY_PARENT));
      for (const dir of [path.join(box.tmpRoot, OVERLAY_PARENT), path.dirname(overlay.dir), overlay.dir]) {
        assert.equal((await stat(dir)).mode & 0o777, 0o700, dir);
      }
    });

    it("another user's folder of the shared old name, or with their uid, is no denial of service", async () => {
      for (const name of ['speculate', `speculate-${NOBODY}`]) {
        await mkdir(path.join(box.tmpRoot, name), { mode: 0o777 });
        if (isRoot) await chown(path.join(box.tmpRoot, name), NOBODY, NOBODY);
      }
      const overlay = await box.open();
      await overlay.writeFile('src/app.ts', 'export const app = 2;\n');
      assert.deepEqual((await overlay.applyToReal()).applied, ['src/app.ts']);
      assert.deepEqual(await readdir(path.join(box.tmpRoot, 'speculate')), [], "the other user's folder is never written");
    });

    it('refuses a folder with our name that is a symlink or belongs to someone else, saying what to do', async () => {
      await symlink(box.outside, path.join(box.tmpRoot, OVERLAY_PARENT));
      await assert.rejects(box.open(), /is a symlink, belongs to another user or is open to others.*point TMPDIR at a private folder/);
      assert.deepEqual(await readdir(box.outside), ['secret.txt']);
      if (!isRoot) return;
      const other = path.join(box.parent, 'other-tmp');
      await mkdir(path.join(other, OVERLAY_PARENT), { recursive: true, mode: 0o700 });
      await chown(path.join(other, OVERLAY_PARENT), NOBODY, NOBODY);
      await assert.rejects(OverlayFs.create({ base: box.base, tmpRoot: other, fallbackTmpRoots: [] }), /belongs to another user/);
    });

    it('tightens a folder of ours that was left open to others', async () => {
      await mkdir(path.join(box.tmpRoot, OVERLAY_PARENT), { mode: 0o755 });
      await chmod(path.join(box.tmpRoot, OVERLAY_PARENT), 0o755);
      await box.open();
      assert.equal((await stat(path.join(box.tmpRoot, OVERLAY_PARENT))).mode & 0o777, 0o700);
    });

    it('TMPDIR inside the workspace (directly or through a symlink): the overlay goes to a private folder outside', async () => {
      const insideTmp = path.join(box.ws, '.cache', 'tmp');
      await mkdir(insideTmp, { recursive: true });
      await symlink(insideTmp, path.join(box.parent, 'tmp-link-into-ws'));
      const fallback = path.join(box.parent, 'fallback-tmp');
      await mkdir(fallback);
      const before = await snapshot(box.ws);
      for (const tmpRoot of [insideTmp, path.join(box.parent, 'tmp-link-into-ws'), box.ws]) {
        const overlay = await OverlayFs.create({ base: box.base, tmpRoot, fallbackTmpRoots: [fallback] });
        assert.ok(overlay.dir.startsWith(path.join(fallback, OVERLAY_PARENT) + path.sep), overlay.dir);
        await overlay.writeFile('src/app.ts', 'speculated\n');
        assert.deepEqual(await snapshot(box.ws), before, 'nothing of the overlay appears in the workspace');
        await overlay.cleanup();
      }
    });

    it('other open workspaces count too, and with no folder left outside them it refuses clearly', async () => {
      const second = path.join(box.parent, 'second-ws');
      await mkdir(path.join(second, 'tmp'), { recursive: true });
      const insideTmp = path.join(box.ws, 'tmp');
      await mkdir(insideTmp);
      await assert.rejects(
        OverlayFs.create({ base: box.base, tmpRoot: insideTmp, fallbackTmpRoots: [path.join(second, 'tmp')], avoidRoots: [second] }),
        /keeps its overlays outside the workspace, but the temp folder \(.*\) and every fallback lie inside an open workspace\. Set TMPDIR to a folder outside it\./,
      );
      assert.deepEqual(await readdir(insideTmp), []);
      assert.deepEqual(await readdir(path.join(second, 'tmp')), []);
    });
  });

  describe('start-up recovery trusts only what it made', () => {
    it('a planted journal naming a folder outside the workspace deletes nothing, even in a private folder of ours', async () => {
      await plant(box.tmpRoot, deletingJournal(box.outside, 'secret.txt', 'outside secret\n'));
      const [outcome] = await recoverInterruptedApplies(housekeeping());
      assert.equal(outcome.outcome, 'waiting', 'a workspace that is not open now is not touched');
      const report = await cleanupStaleOverlays(housekeeping());
      assert.deepEqual(report.kept, [DEAD_PID], 'its folder is kept for when that workspace is opened');
      assert.equal(await box.read('../outside/secret.txt'), 'outside secret\n');
    });

    it('with TMPDIR inside the workspace, a journal planted in the repository is never read', async () => {
      const repoTmp = path.join(box.ws, 'tmp');
      await mkdir(repoTmp);
      await plant(repoTmp, deletingJournal(box.ws, 'keep.txt', 'keep me\n'));
      await plant(repoTmp, deletingJournal(box.outside, 'secret.txt', 'outside secret\n'));
      const report = await cleanupStaleOverlays(housekeeping({ tmpRoot: repoTmp }));
      assert.deepEqual(report, { recovery: [], removed: [], kept: [] });
      assert.equal(await box.read('keep.txt'), 'keep me\n');
      assert.equal(await box.read('../outside/secret.txt'), 'outside secret\n');
      assert.ok(await exists(path.join(repoTmp, OVERLAY_PARENT, String(DEAD_PID), 'planted', JOURNAL_FILE)), 'and nothing in the repository is deleted either');
    });

    it('a journal in folders open to others (as git checks folders out: 0755) is not acted on', async () => {
      await plant(box.tmpRoot, deletingJournal(box.ws, 'keep.txt', 'keep me\n'), 0o755);
      const report = await cleanupStaleOverlays(housekeeping());
      assert.deepEqual(report.recovery, []);
      assert.equal(await box.read('keep.txt'), 'keep me\n');
    });

    it('a journal file that is not ours, or a symlink, is not read', async () => {
      const dir = await plant(box.tmpRoot, deletingJournal(box.ws, 'keep.txt', 'keep me\n'));
      if (isRoot) {
        await chown(path.join(dir, JOURNAL_FILE), NOBODY, NOBODY);
      } else {
        const elsewhere = path.join(box.parent, 'journal.json');
        await writeFile(elsewhere, JSON.stringify(deletingJournal(box.ws, 'keep.txt', 'keep me\n')));
        await unlink(path.join(dir, JOURNAL_FILE));
        await symlink(elsewhere, path.join(dir, JOURNAL_FILE));
      }
      const [outcome] = await recoverInterruptedApplies(housekeeping());
      assert.equal(outcome.outcome, 'abandoned');
      assert.equal(await box.read('keep.txt'), 'keep me\n');
    });

    it('a journal whose paths lead out of the workspace through a symlink touches nothing outside', async () => {
      await symlink(box.outside, path.join(box.ws, 'out'));
      await plant(box.tmpRoot, deletingJournal(box.ws, 'out/secret.txt', 'outside secret\n'));
      const [outcome] = await recoverInterruptedApplies(housekeeping());
      assert.deepEqual([outcome.outcome, outcome.applied, outcome.kept], ['rolled-forward', [], ['out/secret.txt']]);
      assert.equal(await box.read('../outside/secret.txt'), 'outside secret\n');
    });

    it('a genuine interrupted accept of the open workspace is still finished', async () => {
      await plant(box.tmpRoot, deletingJournal(box.ws, 'keep.txt', 'keep me\n'));
      const report = await cleanupStaleOverlays(housekeeping());
      assert.deepEqual(report.recovery.map((r) => [r.outcome, r.applied]), [['rolled-forward', ['keep.txt']]]);
      assert.deepEqual(report.removed, [DEAD_PID]);
      assert.equal(await exists(path.join(box.ws, 'keep.txt')), false);
    });
  });
});
