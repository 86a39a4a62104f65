// Accept holds each file against what the speculation observed of it (a read's content, a stat or
// listing, "absent"), not against the moment of its first write: a user edit made between the
// speculation's look and its write is never overwritten, and a file the user deleted is not re-created.
import * as assert from 'node:assert/strict';
import { stat, unlink, utimes, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { editTool } from '../../../src/core/tools/edit';
import { globTool } from '../../../src/core/tools/glob';
import { grepSearchTool } from '../../../src/core/tools/grepSearch';
import { listDirectoryTool } from '../../../src/core/tools/listDirectory';
import { readFileTool } from '../../../src/core/tools/readFile';
import { writeFileTool } from '../../../src/core/tools/writeFile';
import type { OverlayFs } from '../../../src/core/followup/overlayFs';
import { exists, makeSandbox, type Sandbox } from './overlayKit';

const USER_EDIT = 'the user typed this while the speculation ran\n';

describe('OverlayFs accept holds files against what the speculation observed', () => {
  let box: Sandbox;
  let overlay: OverlayFs;

  beforeEach(async () => {
    box = await makeSandbox({ 'a.txt': 'a original\n', 'src/b.ts': 'export const b = 1;\n', 'src/c.ts': 'export const c = "needle";\n' });
    overlay = await box.open();
  });

  afterEach(async () => {
    assert.deepEqual(await box.dispose(), []);
  });

  const conflicts = async () => (await overlay.applyToReal()).conflicts.map((c) => [c.path, c.reason]);

  it('stale read, full write: the user edit after the read is a conflict and is kept', async () => {
    assert.equal((await readFileTool.execute({ file_path: 'a.txt' }, { fs: overlay })).output, 'a original');
    await box.write('a.txt', USER_EDIT);
    const wrote = await writeFileTool.execute({ file_path: 'a.txt', content: 'a original\nplus the speculation\n' }, { fs: overlay });
    assert.equal(wrote.ok, true);
    assert.deepEqual(await conflicts(), [['a.txt', 'modified']]);
    assert.equal(await box.read('a.txt'), USER_EDIT);
  });

  it('a later read is what the write was based on: no conflict, and both changes survive', async () => {
    await overlay.readFile('a.txt');
    await box.write('a.txt', `${USER_EDIT}a original\n`);
    const edited = await editTool.execute({ file_path: 'a.txt', old_string: 'a original', new_string: 'a speculated' }, { fs: overlay });
    assert.equal(edited.ok, true, edited.output);
    assert.deepEqual(await conflicts(), []);
    assert.equal(await box.read('a.txt'), `${USER_EDIT}a speculated\n`);
  });

  it('a file the user deleted after the speculation read it is a conflict, not silently re-created', async () => {
    await overlay.readFile('src/b.ts');
    await unlink(path.join(box.ws, 'src/b.ts'));
    await overlay.writeFile('src/b.ts', 'export const b = 2;\n');
    const result = await overlay.applyToReal();
    assert.deepEqual(result.conflicts.map((c) => [c.path, c.reason, c.canOverwrite]), [['src/b.ts', 'deleted', true]]);
    assert.match(result.conflicts[0].message, /deleted in the workspace after the speculation read it; it was not re-created/);
    assert.equal(await exists(path.join(box.ws, 'src/b.ts')), false);
  });

  it('a file seen only in a listing, then edited by the user (mtime restored), then written blind: conflict', async () => {
    assert.match((await listDirectoryTool.execute({ path: 'src' }, { fs: overlay })).output, /b\.ts/);
    const file = path.join(box.ws, 'src/b.ts');
    const { atime, mtime } = await stat(file);
    await writeFile(file, 'export const b = 7;\n');
    await utimes(file, atime, mtime);
    await overlay.writeFile('src/b.ts', 'export const b = 2;\n');
    assert.deepEqual(await conflicts(), [['src/b.ts', 'modified']]);
    assert.equal(await box.read('src/b.ts'), 'export const b = 7;\n');
  });

  it('a file missing from a listing that the user creates meanwhile is a conflict when the speculation creates it', async () => {
    assert.doesNotMatch((await listDirectoryTool.execute({ path: 'src' }, { fs: overlay })).output, /new\.ts/);
    await box.write('src/new.ts', 'the user made this\n');
    await overlay.writeFile('src/new.ts', 'the speculation made this\n');
    assert.deepEqual(await conflicts(), [['src/new.ts', 'created']]);
    assert.equal(await box.read('src/new.ts'), 'the user made this\n');
  });

  it('a stat that found nothing counts as "absent"; a stat that found the file counts as seen', async () => {
    assert.equal(await overlay.stat('later.txt'), undefined);
    await box.write('later.txt', 'user\n');
    await overlay.writeFile('later.txt', 'speculation\n');
    await overlay.stat('a.txt');
    await box.write('a.txt', USER_EDIT);
    await overlay.writeFile('a.txt', 'speculation\n');
    assert.deepEqual(await conflicts(), [
      ['a.txt', 'modified'],
      ['later.txt', 'created'],
    ]);
  });

  it('glob and search hits count as seen', async () => {
    assert.match((await globTool.execute({ pattern: 'src/*.ts' }, { fs: overlay })).output, /src\/b\.ts/);
    assert.match((await grepSearchTool.execute({ pattern: 'needle' }, { fs: overlay })).output, /src\/c\.ts/);
    await box.write('src/b.ts', 'user b\n');
    await box.write('src/c.ts', 'user c\n');
    await overlay.writeFile('src/b.ts', 'speculated b\n');
    await overlay.writeFile('src/c.ts', 'speculated c\n');
    assert.deepEqual(await conflicts(), [
      ['src/b.ts', 'modified'],
      ['src/c.ts', 'modified'],
    ]);
  });

  it('a deletion decided on a stale read does not delete the user edit', async () => {
    await overlay.readFile('a.txt');
    await box.write('a.txt', USER_EDIT);
    await overlay.delete('a.txt');
    assert.deepEqual(await conflicts(), [['a.txt', 'modified']]);
    assert.equal(await box.read('a.txt'), USER_EDIT);
  });

  it('what the speculation saw and nobody changed applies without a conflict', async () => {
    await listDirectoryTool.execute({ path: 'src' }, { fs: overlay });
    await overlay.readFile('a.txt');
    await overlay.stat('missing.txt');
    await overlay.writeFile('a.txt', 'a speculated\n');
    await overlay.writeFile('src/b.ts', 'b speculated\n');
    await overlay.writeFile('missing.txt', 'created\n');
    await overlay.rename('src/c.ts', 'src/moved.ts');
    const result = await overlay.applyToReal();
    assert.deepEqual(result.conflicts, []);
    assert.deepEqual(result.applied.sort(), ['a.txt', 'missing.txt', 'src/b.ts', 'src/c.ts', 'src/moved.ts']);
    assert.equal(await box.read('src/moved.ts'), 'export const c = "needle";\n');
  });

  it('a write to a file it never looked at takes the file as found then; a later user edit still wins', async () => {
    await box.write('a.txt', 'changed before the speculation saw it\n');
    await overlay.writeFile('a.txt', 'blind write\n');
    await box.write('src/b.ts', 'user edit before the blind write\n');
    await overlay.writeFile('src/b.ts', 'blind write\n');
    await box.write('src/b.ts', 'user edit after the blind write\n');
    assert.deepEqual(await conflicts(), [['src/b.ts', 'modified']]);
    assert.equal(await box.read('a.txt'), 'blind write\n');
    assert.equal(await box.read('src/b.ts'), 'user edit after the blind write\n');
  });
});
