// The kept sandbox's layer brought up to date by difference: what it holds after any sequence of
// updates is what a layer built anew from the same state holds, and it is rebuilt only when it must be.
import * as assert from 'node:assert/strict';
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildLayer } from '../../../src/core/sandbox/layerBuilder';
import { makeWhiteout } from '../../../src/core/sandbox/scratch';
import { SessionLayer } from '../../../src/core/sandbox/sessionLayer';
import type { SandboxLayer } from '../../../src/core/sandbox/shellSandbox';

/** A folder's tree as text: each entry with its kind, mode and (for files) content; whiteouts as such. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (at: string, prefix: string) => {
    for (const name of readdirSync(at).sort()) {
      const full = path.join(at, name);
      const info = lstatSync(full);
      const key = prefix ? `${prefix}/${name}` : name;
      const mode = (info.mode & 0o7777).toString(8);
      if (info.isDirectory()) {
        out[key] = `dir ${mode}`;
        walk(full, key);
      } else if (info.isCharacterDevice()) out[key] = 'whiteout';
      else out[key] = `file ${mode} ${readFileSync(full, 'utf8')}`;
    }
  };
  walk(dir, '');
  return out;
}

describe('kept sandbox layer (updated by difference)', () => {
  let dir: string;
  let real: string;
  let session: string;
  let blobs = 0;
  let made: Promise<string> | undefined;
  const whiteout = () => (made ??= makeWhiteout('/usr/bin/mknod', path.join(dir, 'whiteout')));

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'speculate-session-layer-')));
    real = path.join(dir, 'real');
    session = path.join(dir, 'session');
    await mkdir(path.join(real, 'src'), { recursive: true });
    await mkdir(path.join(real, 'private'), { mode: 0o700 });
    await chmod(path.join(real, 'private'), 0o700);
    await writeFile(path.join(real, 'src', 'a.ts'), 'real a');
    await writeFile(path.join(real, 'old.txt'), 'old');
    await mkdir(session);
  });
  afterEach(async () => {
    made = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  const blob = async (content: string, mode = 0o644) => {
    const file = path.join(dir, `blob-${++blobs}`);
    await writeFile(file, content);
    await chmod(file, mode);
    return file;
  };

  /** What buildLayer makes of the same state, for comparison. */
  async function builtAnew(layer: SandboxLayer): Promise<Record<string, string>> {
    const fresh = path.join(dir, `anew-${++blobs}`);
    await mkdir(fresh);
    await buildLayer({ layer, realRoot: real, dir: fresh, whiteout });
    return tree(fresh);
  }

  it('adds, replaces and deletes files in place, and holds what a layer built anew holds at every step', async () => {
    const kept = new SessionLayer({ dir: session, realRoot: real, whiteout });
    const a1 = { path: 'src/a.ts', contentPath: await blob('engine a'), mode: 0o644 };
    let state: SandboxLayer = { files: [a1], deletedFiles: ['old.txt'], deletedDirs: [] };
    const first = await kept.update(state);
    assert.equal(first.how, 'rebuilt');
    assert.deepEqual(tree(first.dir!), await builtAnew(state));

    const again = await kept.update(state);
    assert.deepEqual([again.how, again.dir], ['unchanged', first.dir]);

    // A command wrote a file in a new folder and an executable; the engine rewrote a.ts; a file was deleted.
    state = {
      files: [{ path: 'src/a.ts', contentPath: await blob('engine a, again'), mode: 0o644 }, { path: 'gen/deep/out.js', contentPath: await blob('out'), mode: 0o644 }, { path: 'private/run.sh', contentPath: await blob('run', 0o755), mode: 0o755 }, { path: 'odd.txt', contentPath: await blob('odd'), mode: 0o600 }],
      deletedFiles: ['old.txt', 'src/b.ts'],
      deletedDirs: [],
    };
    const second = await kept.update(state);
    assert.deepEqual([second.how, second.dir, second.placed], ['incremental', first.dir, 5]);
    assert.deepEqual(tree(second.dir!), await builtAnew(state));
    assert.equal(tree(second.dir!).private, 'dir 700', "a folder keeps the real folder's mode");

    // A deleted file written again, a written file deleted.
    state = { files: [...state.files.filter((file) => file.path !== 'odd.txt'), { path: 'old.txt', contentPath: await blob('old again'), mode: 0o644 }], deletedFiles: ['src/b.ts', 'odd.txt'], deletedDirs: [] };
    const third = await kept.update(state);
    assert.equal(third.how, 'incremental');
    assert.deepEqual(tree(third.dir!), await builtAnew(state));
  });

  it('is built anew for a revert, a deleted folder or a file where a folder was, and still holds the same', async () => {
    const kept = new SessionLayer({ dir: session, realRoot: real, whiteout });
    const states: SandboxLayer[] = [
      { files: [{ path: 'x/y.txt', contentPath: await blob('y'), mode: 0o644 }, { path: 'z.txt', contentPath: await blob('z'), mode: 0o644 }], deletedFiles: [], deletedDirs: [] },
      // z.txt reverted (dropped by the engine).
      { files: [{ path: 'x/y.txt', contentPath: await blob('y'), mode: 0o644 }], deletedFiles: [], deletedDirs: [] },
      // src deleted as a folder, with a new file in it.
      { files: [{ path: 'src/new.ts', contentPath: await blob('new'), mode: 0o644 }], deletedFiles: ['src/a.ts'], deletedDirs: ['src'] },
      // x/y.txt gone, and x is now a file.
      { files: [{ path: 'x', contentPath: await blob('x is a file'), mode: 0o644 }], deletedFiles: [], deletedDirs: [] },
    ];
    const hows: string[] = [];
    let last: string | undefined;
    for (const state of states) {
      const update = await kept.update(state);
      hows.push(update.how);
      assert.deepEqual(tree(update.dir!), await builtAnew(state));
      last = update.dir;
    }
    assert.deepEqual(hows, ['rebuilt', 'rebuilt', 'rebuilt', 'rebuilt']);
    assert.deepEqual(readdirSync(session).filter((name) => name.startsWith('layer-')), [path.basename(last!)], 'older layers are removed');
    assert.deepEqual(await kept.update({ files: [], deletedFiles: [], deletedDirs: [] }), { dir: undefined, how: 'empty', placed: 0 });
  });
});
