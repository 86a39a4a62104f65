// Read-only files (chmod 444) and folders (chmod 555) are never rewritten — not by a live write,
// not by accept — with a reason the user can act on; modes and owners are kept exactly. Run both
// in-process (root in CI: root honours chmod here too) and as an unprivileged user.
import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmod, chown, mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { OverlayFs } from '../../../src/core/followup/overlayFs';
import { NodeWorkspaceFs } from '../../../src/core/fs/nodeWorkspaceFs';
import { editTool } from '../../../src/core/tools/edit';
import { writeFileTool } from '../../../src/core/tools/writeFile';
import { runPermissionScenarios, type ScenarioOutcome } from './permissionScenarios';

const NOBODY = 65534;
const isRoot = process.getuid?.() === 0;

async function tree(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const visit = async (dir: string) => {
    for (const name of (await readdir(dir)).sort()) {
      const full = path.join(dir, name);
      const info = await stat(full);
      const rel = path.relative(root, full);
      out[rel] = info.isDirectory() ? `dir ${(info.mode & 0o7777).toString(8)}` : `file ${(info.mode & 0o7777).toString(8)} ${info.uid} ${await readFile(full, 'utf8')}`;
      if (info.isDirectory()) await visit(full);
    }
  };
  await visit(root);
  return out;
}

/** ro.txt 0444, ok.txt, locked/ 0555 with locked/existing.txt; owned by `uid` when root. */
async function makeScene(owner?: number): Promise<{ parent: string; ws: string; tmp: string }> {
  const parent = await realpath(await mkdtemp(path.join(os.tmpdir(), 'speculate-perm-')));
  const ws = path.join(parent, 'ws');
  const tmp = path.join(parent, 'tmp');
  await mkdir(path.join(ws, 'locked'), { recursive: true });
  await mkdir(tmp);
  await writeFile(path.join(ws, 'ro.txt'), 'read only\n');
  await writeFile(path.join(ws, 'ok.txt'), 'ok\n');
  await writeFile(path.join(ws, 'locked/existing.txt'), 'existing\n');
  if (owner !== undefined) {
    await chmod(parent, 0o755);
    for (const p of [ws, tmp, path.join(ws, 'locked'), path.join(ws, 'ro.txt'), path.join(ws, 'ok.txt'), path.join(ws, 'locked/existing.txt')]) await chown(p, owner, owner);
  }
  await chmod(path.join(ws, 'ro.txt'), 0o444);
  await chmod(path.join(ws, 'locked'), 0o555);
  return { parent, ws, tmp };
}

function assertRefusedAlike(outcome: ScenarioOutcome, who: string): void {
  const { live, accept } = outcome;
  assert.match(live['edit ro.txt'].output, /ro\.txt is read-only \(mode 444\); it was not changed/, who);
  assert.match(live['write ro.txt'].output, /ro\.txt is read-only \(mode 444\)/, who);
  assert.match(live['write locked/new.txt'].output, /The folder locked is read-only \(mode 555\), so locked\/new\.txt was not written/, who);
  assert.match(live['edit locked/existing.txt'].output, /The folder locked is read-only \(mode 555\)/, who);
  assert.match(live['write locked/deeper/new.txt'].output, /The folder locked is read-only \(mode 555\)/, who);
  for (const [name, result] of Object.entries(live)) assert.equal(result.ok, false, `${who}: ${name}`);
  assert.deepEqual(accept.applied, ['ok.txt'], who);
  assert.deepEqual(accept.conflicts, [
    ['locked/existing.txt', 'read-only', false],
    ['locked/new.txt', 'read-only', false],
    ['ro.txt', 'read-only', false],
  ], who);
}

describe('read-only files and folders, and owners', function () {
  this.timeout(20_000);
  const scenes: string[] = [];
  afterEach(async () => {
    for (const parent of scenes.splice(0)) {
      await chmod(path.join(parent, 'ws/locked'), 0o755).catch(() => undefined);
      await rm(parent, { recursive: true, force: true });
    }
  });

  it('this process (root in CI) refuses a live write and an accept into them, and changes nothing', async () => {
    const scene = await makeScene();
    scenes.push(scene.parent);
    const before = await tree(scene.ws);
    const outcome = await runPermissionScenarios({ ws: scene.ws, tmp: scene.tmp });
    assertRefusedAlike(outcome, `uid ${process.getuid?.()}`);
    assert.deepEqual(await tree(scene.ws), { ...before, 'ok.txt': before['ok.txt'].replace(/ok\n$/, 'speculated\n') });
  });

  it('an unprivileged user meets exactly the same refusals (chmod 444 / 555)', async () => {
    assert.ok(isRoot, 'this test starts a child as the user nobody, which needs root (CI runs as root)');
    const scene = await makeScene(NOBODY);
    scenes.push(scene.parent);
    const before = await tree(scene.ws);
    const child = path.join(__dirname, 'permissionScenarios.js');
    const { stdout } = await promisify(execFile)(process.execPath, [child, JSON.stringify({ ws: scene.ws, tmp: scene.tmp })], { uid: NOBODY, gid: NOBODY, env: { PATH: process.env.PATH ?? '', HOME: scene.tmp, TMPDIR: scene.tmp } });
    const outcome = JSON.parse(stdout) as ScenarioOutcome;
    assertRefusedAlike(outcome, 'nobody');
    assert.deepEqual(await tree(scene.ws), { ...before, 'ok.txt': before['ok.txt'].replace(/ok\n$/, 'speculated\n') });
    assert.equal((await stat(path.join(scene.ws, 'ok.txt'))).uid, NOBODY, 'the accepted file is still its owner’s');
  });

  it('a live write keeps every mode bit exactly (set-id and sticky bits included) and writes a new inode', async () => {
    const scene = await makeScene();
    scenes.push(scene.parent);
    const fs = await NodeWorkspaceFs.open(scene.ws, { ripgrepPath: null });
    for (const mode of [0o600, 0o640, 0o664, 0o700, 0o755, 0o4755, 0o2755, 0o1755, 0o6750]) {
      const file = path.join(scene.ws, `m${mode.toString(8)}.sh`);
      await writeFile(file, 'echo one\n');
      await chmod(file, mode);
      const inode = (await stat(file)).ino;
      const result = await editTool.execute({ file_path: path.basename(file), old_string: 'one', new_string: 'two' }, { fs });
      assert.equal(result.ok, true, result.output);
      const after = await stat(file);
      assert.equal((after.mode & 0o7777).toString(8), mode.toString(8));
      assert.notEqual(after.ino, inode, 'replaced by rename, not rewritten in place');
      assert.equal(await readFile(file, 'utf8'), 'echo two\n');
    }
    assert.deepEqual((await readdir(scene.ws)).filter((name) => name.includes('.speculate-')), [], 'no temp left behind');
  });

  it('accept keeps every mode bit exactly too, set-id and sticky bits included', async () => {
    const scene = await makeScene();
    scenes.push(scene.parent);
    const fs = await NodeWorkspaceFs.open(scene.ws, { ripgrepPath: null });
    const modes = [0o600, 0o640, 0o664, 0o700, 0o755, 0o4755, 0o2755, 0o1755, 0o6750];
    const overlay = await OverlayFs.create({ base: fs, tmpRoot: scene.tmp, fallbackTmpRoots: [] });
    for (const mode of modes) {
      const file = path.join(scene.ws, `a${mode.toString(8)}.sh`);
      await writeFile(file, 'echo one\n');
      await chmod(file, mode);
      await overlay.writeFile(path.basename(file), 'echo two\n');
    }
    const result = await overlay.applyToReal();
    assert.equal(result.applied.length, modes.length);
    for (const mode of modes) assert.equal(((await stat(path.join(scene.ws, `a${mode.toString(8)}.sh`))).mode & 0o7777).toString(8), mode.toString(8));
    await overlay.cleanup();
  });

  it('root keeps another user’s owner and group on a live write; accept leaves their file alone', async () => {
    assert.ok(isRoot, 'giving a file to another user needs root (CI runs as root)');
    const scene = await makeScene();
    scenes.push(scene.parent);
    const file = path.join(scene.ws, 'theirs.txt');
    await writeFile(file, 'their text\n');
    await chown(file, NOBODY, NOBODY);
    await chmod(file, 0o664);
    const fs = await NodeWorkspaceFs.open(scene.ws, { ripgrepPath: null });
    const result = await writeFileTool.execute({ file_path: 'theirs.txt', content: 'root wrote this\n' }, { fs });
    assert.equal(result.ok, true, result.output);
    const after = await stat(file);
    assert.deepEqual([after.uid, after.gid, after.mode & 0o7777], [NOBODY, NOBODY, 0o664]);

    const overlay = await OverlayFs.create({ base: fs, tmpRoot: scene.tmp, fallbackTmpRoots: [] });
    await overlay.writeFile('theirs.txt', 'speculated\n');
    const accepted = await overlay.applyToReal();
    assert.deepEqual(accepted.conflicts.map((c) => [c.path, c.reason, c.canOverwrite]), [['theirs.txt', 'foreign-owner', false]]);
    assert.match(accepted.conflicts[0].message, /belongs to another user or group; replacing it would change its owner, so it was not written/);
    assert.equal(await readFile(file, 'utf8'), 'root wrote this\n');
    await overlay.cleanup();
  });
});
