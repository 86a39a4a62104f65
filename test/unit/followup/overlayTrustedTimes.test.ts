// The overlay's cheap paths for files that last changed well before the speculation looked at them
// (their size, times and inode are sure to move on any change): a blind write hashes the original
// in the background, a large read is hashed only if written. Every user edit is still a conflict.
import * as assert from 'node:assert/strict';
import { rename, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import type { OverlayFs } from '../../../src/core/followup/overlayFs';
import { RACY_WINDOW_MS } from '../../../src/core/followup/overlay/observations';
import { editTool } from '../../../src/core/tools/edit';
import { makeSandbox, type Sandbox } from './overlayKit';

/** Larger than the size up to which reads are hashed on the spot. */
const LARGE = `const marker = 1;\n${'x'.repeat(300 * 1024)}\n`;
const USER_EDIT = 'the user typed this while the speculation ran\n';

describe('OverlayFs over files that changed long ago', () => {
  let box: Sandbox;
  let overlay: OverlayFs;

  beforeEach(async () => {
    box = await makeSandbox({ 'a.txt': 'a original\n', 'large.txt': LARGE, 'src/b.ts': 'export const b = 1;\n' });
    // As if the workspace had last changed a minute before: every stat identity is trusted.
    overlay = await box.open({ clock: () => Date.now() + 30 * RACY_WINDOW_MS });
  });

  afterEach(async () => {
    assert.deepEqual(await box.dispose(), []);
  });

  const conflicts = async () => (await overlay.applyToReal()).conflicts.map((c) => [c.path, c.reason]);

  it('a blind write of an untouched file is applied', async () => {
    await overlay.writeFile('a.txt', 'speculated\n');
    await overlay.writeFile('src/b.ts', 'export const b = 2;\n');
    assert.deepEqual(await overlay.applyToReal(), { applied: ['a.txt', 'src/b.ts'], conflicts: [] });
    assert.equal(await box.read('a.txt'), 'speculated\n');
  });

  it('a blind write: a later edit that keeps the size and the modification time is a conflict', async () => {
    await overlay.writeFile('a.txt', 'speculated\n');
    const file = path.join(box.ws, 'a.txt');
    const { atime, mtime } = await stat(file);
    await writeFile(file, 'A ORIGINAL\n');
    await utimes(file, atime, mtime);
    assert.deepEqual(await conflicts(), [['a.txt', 'modified']]);
    assert.equal(await box.read('a.txt'), 'A ORIGINAL\n');
  });

  it('a file replaced right after a blind write is a conflict, whether or not its original was hashed by then', async () => {
    const replacement = path.join(box.parent, 'replacement.txt');
    await writeFile(replacement, 'a original\n'.toUpperCase());
    await overlay.writeFile('a.txt', 'speculated\n');
    await rename(replacement, path.join(box.ws, 'a.txt'));
    assert.deepEqual(await conflicts(), [['a.txt', 'modified']]);
    assert.equal(await box.read('a.txt'), 'A ORIGINAL\n');
  });

  it('a large file read and then edited by the speculation is applied when the user left it alone', async () => {
    const edited = await editTool.execute({ file_path: 'large.txt', old_string: 'marker = 1', new_string: 'marker = 2' }, { fs: overlay });
    assert.equal(edited.ok, true, edited.output);
    assert.deepEqual(await overlay.applyToReal(), { applied: ['large.txt'], conflicts: [] });
    assert.equal(await box.read('large.txt'), LARGE.replace('marker = 1', 'marker = 2'));
  });

  it('a large file the user changed between the read and the write is a conflict, and is kept', async () => {
    await overlay.readFile('large.txt');
    await box.write('large.txt', USER_EDIT);
    await overlay.writeFile('large.txt', 'speculated\n');
    assert.deepEqual(await conflicts(), [['large.txt', 'modified']]);
    assert.equal(await box.read('large.txt'), USER_EDIT);
  });

  it('a large file the user changed after the write is a conflict, and is kept', async () => {
    await overlay.readFile('large.txt');
    await overlay.writeFile('large.txt', 'speculated\n');
    await box.write('large.txt', USER_EDIT);
    assert.deepEqual(await conflicts(), [['large.txt', 'modified']]);
    assert.equal(await box.read('large.txt'), USER_EDIT);
  });

  it('a large file deleted after the read is a conflict, not silently re-created', async () => {
    await overlay.readFile('large.txt');
    await unlink(path.join(box.ws, 'large.txt'));
    await overlay.writeFile('large.txt', 'speculated\n');
    assert.deepEqual(await conflicts(), [['large.txt', 'deleted']]);
  });

  it('a small read keeps its hash: the user changing the file and back before the write is no conflict', async () => {
    await overlay.readFile('a.txt');
    await box.write('a.txt', USER_EDIT);
    await box.write('a.txt', 'a original\n');
    await overlay.writeFile('a.txt', 'speculated\n');
    assert.deepEqual(await overlay.applyToReal(), { applied: ['a.txt'], conflicts: [] });
  });

  it('a real file that already holds the speculated content counts as applied', async () => {
    await overlay.writeFile('src/b.ts', 'same result\n');
    await box.write('src/b.ts', 'same result\n');
    assert.deepEqual(await overlay.applyToReal(), { applied: ['src/b.ts'], conflicts: [] });
  });
});
