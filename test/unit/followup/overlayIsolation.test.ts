// Isolation: while speculating nothing outside the overlay is written — not through `..`, absolute
// paths, symlinks (to folders, to files, dangling), nor on accept after a folder became a symlink.
import * as assert from 'node:assert/strict';
import { renameSync, symlinkSync } from 'node:fs';
import { mkdir, rename as fsRename, rm, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { PathOutsideWorkspaceError } from '../../../src/core/fs/workspaceFs';
import type { OverlayFs } from '../../../src/core/followup/overlayFs';
import { makeSandbox, makeSymlink, snapshot, tempFiles, thrown, type Sandbox } from './overlayKit';

describe('OverlayFs isolation', () => {
  let box: Sandbox;
  let overlay: OverlayFs;

  beforeEach(async () => {
    box = await makeSandbox(
      { 'inside.txt': 'inside\n', 'sub/a.txt': 'same bytes\n', 'other/b.txt': 'b\n' },
      { 'secret.txt': 'outside secret\n', 'a.txt': 'same bytes\n' },
    );
    await makeSymlink(box.outside, path.join(box.ws, 'out-dir'));
    await makeSymlink(path.join(box.outside, 'secret.txt'), path.join(box.ws, 'out-file'));
    await makeSymlink(path.join(box.outside, 'missing.txt'), path.join(box.ws, 'dangling'));
    await makeSymlink('does-not-exist.txt', path.join(box.ws, 'dangling-inside'));
    overlay = await box.open();
  });

  afterEach(async () => {
    assert.deepEqual(await box.dispose(), []);
  });

  function escapes(): string[] {
    return [
      '../outside/secret.txt',
      '../outside/new.txt',
      'sub/../../outside/secret.txt',
      path.join(box.outside, 'secret.txt'),
      path.join(box.outside, 'new.txt'),
      '/etc/passwd',
      'out-dir/secret.txt',
      'out-dir/new.txt',
      'out-dir',
      'out-file',
      'dangling',
      'dangling-inside',
    ];
  }

  it('refuses every escape route for every operation, and changes nothing anywhere', async () => {
    const wsBefore = await snapshot(box.ws);
    const outsideBefore = await snapshot(box.outside);
    for (const target of escapes()) {
      const attempts: [string, () => Promise<unknown>][] = [
        ['writeFile', () => overlay.writeFile(target, 'pwned')],
        ['readFile', () => overlay.readFile(target)],
        ['stat', () => overlay.stat(target)],
        ['list', () => overlay.list(target)],
        ['delete', () => overlay.delete(target)],
        ['rename from', () => overlay.rename(target, 'moved.txt')],
        ['rename to', () => overlay.rename('inside.txt', target)],
        ['glob cwd', () => overlay.glob('*', { cwd: target })],
        ['search path', () => overlay.search('secret', { path: target })],
        ['readOriginal', () => overlay.readOriginal(target)],
      ];
      for (const [name, attempt] of attempts) {
        const error = await thrown(attempt);
        assert.ok(error instanceof PathOutsideWorkspaceError, `${name} of ${target} was refused as outside: ${error.message}`);
      }
    }
    for (const pattern of ['../outside/*', `${box.outside}/*`, 'out-dir/*']) {
      const result = await overlay.glob(pattern).catch((error: Error) => error);
      assert.ok(result instanceof PathOutsideWorkspaceError || (Array.isArray(result) && result.length === 0), `glob ${pattern} found nothing outside`);
    }
    assert.ok(!(await overlay.search('outside secret')).length, 'search never reads through a symlink to outside');
    assert.deepEqual(overlay.writtenFiles(), []);
    assert.deepEqual(await snapshot(box.ws), wsBefore);
    assert.deepEqual(await snapshot(box.outside), outsideBefore);
  });

  it('writes nothing but its own folder during a busy speculation', async () => {
    const wsBefore = await snapshot(box.ws);
    const outsideBefore = await snapshot(box.outside);
    const tmpBefore = Object.keys(await snapshot(box.tmpRoot)).filter((p) => !p.startsWith(path.relative(box.tmpRoot, overlay.dir)));
    for (let i = 0; i < 30; i++) await overlay.writeFile(`gen/file${i}.txt`, `content ${i}`);
    await overlay.writeFile('inside.txt', 'changed');
    await overlay.rename('sub', 'renamed-sub');
    await overlay.delete('other/b.txt');
    await overlay.delete('other');
    await overlay.rename('gen/file0.txt', 'gen/zero.txt');
    await overlay.search('content');
    await overlay.glob('**/*');
    for (const target of escapes()) await overlay.writeFile(target, 'pwned').catch(() => undefined);
    assert.deepEqual(await snapshot(box.ws), wsBefore);
    assert.deepEqual(await snapshot(box.outside), outsideBefore);
    const tmpAfter = Object.keys(await snapshot(box.tmpRoot)).filter((p) => !p.startsWith(path.relative(box.tmpRoot, overlay.dir)));
    assert.deepEqual(tmpAfter, tmpBefore, 'nothing appears in the temp root outside the overlay folder');
  });

  it('refuses on accept a file whose folder was swapped for a symlink to outside', async () => {
    await overlay.writeFile('sub/a.txt', 'speculated\n');
    await overlay.writeFile('sub/new.txt', 'new\n');
    await overlay.writeFile('inside.txt', 'accepted\n');
    // After the speculation: the folder becomes a symlink to a folder whose a.txt has the same bytes.
    await rm(path.join(box.ws, 'sub'), { recursive: true });
    await makeSymlink(box.outside, path.join(box.ws, 'sub'));
    const outsideBefore = await snapshot(box.outside);

    const result = await overlay.applyToReal({ overwrite: ['inside.txt'] });
    assert.deepEqual(result.applied, ['inside.txt']);
    assert.deepEqual(result.conflicts.map((c) => [c.path, c.reason, c.canOverwrite]), [
      ['sub/a.txt', 'outside-workspace', false],
      ['sub/new.txt', 'outside-workspace', false],
    ]);
    assert.match(result.conflicts[0].message, /outside the workspace/);
    // Forcing cannot push it through either; keeping the user's side drops it.
    const forced = await overlay.applyFile('sub/a.txt', { force: true });
    assert.deepEqual(forced.applied, []);
    assert.deepEqual(forced.conflicts.map((c) => c.reason), ['outside-workspace']);
    await overlay.discard('sub/a.txt');
    assert.deepEqual(overlay.writtenFiles().map((f) => f.path), ['sub/new.txt']);
    assert.deepEqual(await snapshot(box.outside), outsideBefore);
    assert.equal(await box.read('inside.txt'), 'accepted\n');
    assert.deepEqual(await tempFiles(box.parent), []);
  });

  it('refuses on accept a file whose folder now leads elsewhere inside the workspace', async () => {
    await overlay.writeFile('sub/a.txt', 'speculated\n');
    await fsRename(path.join(box.ws, 'sub'), path.join(box.ws, 'sub-moved'));
    await makeSymlink('other', path.join(box.ws, 'sub'));
    const otherBefore = await snapshot(path.join(box.ws, 'other'));
    const result = await overlay.applyToReal();
    assert.deepEqual(result.conflicts.map((c) => [c.path, c.reason]), [['sub/a.txt', 'path-changed']]);
    assert.deepEqual(await snapshot(path.join(box.ws, 'other')), otherBefore);
  });

  it('refuses on accept the files of a folder swapped for a symlink to outside after their temps were staged', async () => {
    await mkdir(path.join(box.outside, 'er'));
    for (const name of ['a.txt', 'b.txt']) await writeFile(path.join(box.outside, 'er', name), 'deep original\n');
    const outsideBefore = await snapshot(box.outside);
    let staged = 0;
    const swapping = await box.open({
      onApplyStep: (event) => {
        // The moment between the last temp and the first rename: the folder's parent becomes a symlink out.
        if (event.phase !== 'staged' || ++staged !== 3) return;
        renameSync(path.join(box.ws, 'deep'), path.join(box.parent, 'deep-moved'));
        symlinkSync(box.outside, path.join(box.ws, 'deep'));
      },
    });
    await mkdir(path.join(box.ws, 'deep', 'er'), { recursive: true });
    for (const name of ['a.txt', 'b.txt']) await writeFile(path.join(box.ws, 'deep', 'er', name), 'deep original\n');
    await swapping.readFile('deep/er/a.txt');
    await swapping.readFile('deep/er/b.txt');
    await swapping.writeFile('deep/er/a.txt', 'speculated a\n');
    await swapping.writeFile('deep/er/b.txt', 'speculated b\n');
    await swapping.writeFile('inside.txt', 'accepted\n');

    const result = await swapping.applyToReal();
    assert.deepEqual(result.applied, ['inside.txt']);
    assert.deepEqual(result.conflicts.map((c) => [c.path, c.reason]), [
      ['deep/er/a.txt', 'outside-workspace'],
      ['deep/er/b.txt', 'outside-workspace'],
    ]);
    assert.deepEqual(await snapshot(box.outside), outsideBefore, 'nothing renamed into the folder outside');
    assert.equal(await box.read('inside.txt'), 'accepted\n');
    await swapping.cleanup();
    await rm(path.join(box.ws, 'deep'));
    await rm(path.join(box.parent, 'deep-moved'), { recursive: true });
  });
});
