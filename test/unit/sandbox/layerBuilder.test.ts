// The middle layer built from the speculation's state: files linked (not copied) where their mode
// allows, whiteouts for deletions, deleted folders with new files spelled out child by child.
import * as assert from 'node:assert/strict';
import { lstat, mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile, chmod } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildLayer } from '../../../src/core/sandbox/layerBuilder';
import { makeWhiteout } from '../../../src/core/sandbox/scratch';

const readFileText = (file: string) => readFile(file, 'utf8');

describe('sandbox layer builder', () => {
  let dir: string;
  let real: string;
  let layer: string;
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'speculate-layer-')));
    real = path.join(dir, 'real');
    layer = path.join(dir, 'layer');
    await mkdir(path.join(real, 'gone', 'sub'), { recursive: true });
    await writeFile(path.join(real, 'gone', 'a.txt'), 'a');
    await writeFile(path.join(real, 'gone', 'sub', 'b.txt'), 'b');
    await writeFile(path.join(real, 'deleted.txt'), 'd');
    await mkdir(path.join(real, 'private'), { mode: 0o700 });
    await chmod(path.join(real, 'private'), 0o700);
    await mkdir(layer);
  });
  afterEach(async () => {
    made = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  const blob = async (name: string, mode: number) => {
    const file = path.join(dir, name);
    await writeFile(file, name);
    await chmod(file, mode);
    return file;
  };
  let made: Promise<string> | undefined;
  const whiteout = () => (made ??= makeWhiteout('/usr/bin/mknod', path.join(dir, 'whiteout')));
  const isWhiteout = async (file: string) => {
    const info = await lstat(file);
    return info.isCharacterDevice() && info.rdev === 0;
  };

  it('an empty state builds nothing', async () => {
    const built = await buildLayer({ layer: { files: [], deletedFiles: [], deletedDirs: [] }, realRoot: real, dir: layer, whiteout });
    assert.equal(built.used, false);
    assert.deepEqual(await readdir(layer), []);
  });

  it('links files whose stored mode is theirs and copies only those whose mode differs', async () => {
    const same = await blob('same', 0o644);
    const other = await blob('other', 0o600);
    const built = await buildLayer({
      layer: { files: [{ path: 'private/same.txt', contentPath: same, mode: 0o644 }, { path: 'x/other.sh', contentPath: other, mode: 0o755 }], deletedFiles: [], deletedDirs: [] },
      realRoot: real,
      dir: layer,
      whiteout,
    });
    assert.deepEqual(built.stats, { linked: 1, copied: 1, whiteouts: 0 });
    assert.equal((await lstat(path.join(layer, 'private/same.txt'))).ino, (await lstat(same)).ino, 'the same file, not a copy');
    assert.equal((await lstat(path.join(layer, 'x/other.sh'))).mode & 0o777, 0o755);
    assert.equal((await lstat(path.join(layer, 'private'))).mode & 0o777, 0o700, 'a folder keeps the real one\'s mode');
  });

  it('deletions become whiteouts; a deleted folder with a new file in it is spelled out', async () => {
    const keep = await blob('keep', 0o644);
    const built = await buildLayer({
      layer: { files: [{ path: 'gone/new.txt', contentPath: keep, mode: 0o644 }], deletedFiles: ['deleted.txt', 'gone/a.txt'], deletedDirs: ['gone', 'gone/sub'] },
      realRoot: real,
      dir: layer,
      whiteout,
    });
    assert.equal(built.used, true);
    assert.ok(await isWhiteout(path.join(layer, 'deleted.txt')));
    assert.ok(await isWhiteout(path.join(layer, 'gone/a.txt')));
    assert.ok(await isWhiteout(path.join(layer, 'gone/sub')));
    assert.deepEqual((await readdir(path.join(layer, 'gone'))).sort(), ['a.txt', 'new.txt', 'sub']);
    assert.equal(built.stats.whiteouts, 3);
  });

  it('clear() removes every link, copy, whiteout and folder it made, and leaves the stored contents', async () => {
    const same = await blob('same', 0o644);
    const other = await blob('other', 0o600);
    const built = await buildLayer({
      layer: { files: [{ path: 'a/b/same.txt', contentPath: same, mode: 0o644 }, { path: 'gone/other.sh', contentPath: other, mode: 0o755 }], deletedFiles: ['deleted.txt'], deletedDirs: ['gone'] },
      realRoot: real,
      dir: layer,
      whiteout,
    });
    assert.ok(built.stats.linked > 0 && built.stats.copied > 0 && built.stats.whiteouts > 0, 'each kind of entry was made');
    await built.clear();
    assert.deepEqual(await readdir(layer), [], 'nothing of the layer is left');
    assert.equal(await readFileText(same), 'same', 'the stored content is untouched');
    assert.equal(await readFileText(other), 'other');
    await built.clear(); // twice is harmless
  });

  it('clear() stops quietly at what it cannot remove, for the run folder\'s removal to finish', async () => {
    const same = await blob('same', 0o644);
    const built = await buildLayer({ layer: { files: [{ path: 'a/same.txt', contentPath: same, mode: 0o644 }], deletedFiles: [], deletedDirs: [] }, realRoot: real, dir: layer, whiteout });
    await writeFile(path.join(layer, 'a', 'stray.txt'), 'not made by the build');
    await built.clear();
    assert.deepEqual(await readdir(path.join(layer, 'a')), ['stray.txt'], 'its own file went; the folder stays for the walk');
  });
});
