// A full disk loses nothing: on a 256 KB tmpfs mounted for the test, a live write_file or edit
// that does not fit leaves the old file byte for byte (no truncation, no temp, no new folders) and
// says which disk is full and how much was needed; an accept is refused the same way (and marked
// as one the live path would hit too); a full temp folder fails the overlay, never the model's call.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { OverlayApplyError, OverlayFs, OverlayStorageError } from '../../../src/core/followup/overlayFs';
import { NodeWorkspaceFs } from '../../../src/core/fs/nodeWorkspaceFs';
import { editTool } from '../../../src/core/tools/edit';
import { writeFileTool } from '../../../src/core/tools/writeFile';
import { snapshot, thrown } from '../followup/overlayKit';
import { mountSmallDisk, type SmallDisk } from './smallDisk';

const KEEP = 'precious user content\n'.repeat(200);
const TOO_BIG = 'x'.repeat(400 * 1024);

describe('a full disk', function () {
  this.timeout(20_000);
  let disk: SmallDisk;
  let elsewhere: string;

  before(async () => {
    disk = await mountSmallDisk(256);
  });
  after(async () => {
    await disk.unmount();
  });
  beforeEach(async () => {
    elsewhere = await realpath(await mkdtemp(path.join(os.tmpdir(), 'speculate-full-')));
  });
  afterEach(async () => {
    for (const name of await readdir(disk.dir)) await rm(path.join(disk.dir, name), { recursive: true, force: true });
    await rm(elsewhere, { recursive: true, force: true });
  });

  async function workspaceOnDisk(): Promise<{ ws: string; fs: NodeWorkspaceFs }> {
    const ws = path.join(disk.dir, 'ws');
    await mkdir(path.join(ws, 'src'), { recursive: true });
    await writeFile(path.join(ws, 'src/keep.txt'), KEEP);
    return { ws, fs: await NodeWorkspaceFs.open(ws, { ripgrepPath: null }) };
  }

  it('a live write_file that does not fit leaves the old file whole and says which disk and how much', async () => {
    const { ws, fs } = await workspaceOnDisk();
    const before = await snapshot(ws);
    const free = await disk.freeBytes();
    const result = await writeFileTool.execute({ file_path: 'src/keep.txt', content: TOO_BIG }, { fs });
    assert.equal(result.ok, false);
    assert.match(
      result.output,
      new RegExp(`Could not write src/keep\\.txt: the disk holding ${ws}/src \\(mounted at ${disk.dir}\\) is full: 400\\.0 KB needed, [\\d.]+ KB free\\. src/keep\\.txt was not changed; free some space and try again\\.`),
    );
    assert.deepEqual(await snapshot(ws), before, 'no truncated file, no temp');
    assert.equal(await readFile(path.join(ws, 'src/keep.txt'), 'utf8'), KEEP);
    assert.equal(await disk.freeBytes(), free, 'the space the attempt took is free again');
  });

  it('a live edit that does not fit, and a new file in new folders, leave nothing behind', async () => {
    const { ws, fs } = await workspaceOnDisk();
    const before = await snapshot(ws);
    const edit = await editTool.execute({ file_path: 'src/keep.txt', old_string: 'precious', new_string: TOO_BIG.slice(0, 2048), replace_all: true }, { fs });
    assert.equal(edit.ok, false);
    assert.match(edit.output, /is full: [\d.]+ KB needed/);
    const created = await writeFileTool.execute({ file_path: 'new/deep/big.txt', content: TOO_BIG }, { fs });
    assert.equal(created.ok, false);
    assert.match(created.output, /Could not write new\/deep\/big\.txt: the disk holding .* is full/);
    assert.deepEqual(await snapshot(ws), before, 'the folders made for the file are gone again');
  });

  it('an accept that does not fit changes nothing, names the disk, and counts as one the live path would hit too', async () => {
    const { ws, fs } = await workspaceOnDisk();
    const overlay = await OverlayFs.create({ base: fs, tmpRoot: elsewhere, fallbackTmpRoots: [] });
    await overlay.writeFile('src/keep.txt', 'small speculated change\n');
    await overlay.writeFile('src/big.txt', TOO_BIG);
    const before = await snapshot(ws);
    const error = await thrown(() => overlay.applyToReal());
    assert.ok(error instanceof OverlayApplyError, String(error));
    assert.equal(error.liveWouldFail, true);
    assert.match(error.message, new RegExp(`while preparing "src/[a-z]+\\.txt": the disk holding ${ws}/src \\(mounted at ${disk.dir}\\) is full: 400\\.0 KB needed, [\\d.]+ KB free; no file in the workspace was changed\\. Free some space, then accept again\\.`));
    assert.deepEqual(await snapshot(ws), before);
    assert.equal(overlay.writtenFiles().length, 2, 'everything stays in the overlay for a retry');
    await overlay.cleanup();
  });

  it('a temp folder on a read-only disk fails the overlay with its own words, the old overlay files kept readable', async () => {
    const ws = path.join(elsewhere, 'ws');
    await mkdir(ws);
    const fs = await NodeWorkspaceFs.open(ws, { ripgrepPath: null });
    const overlay = await OverlayFs.create({ base: fs, tmpRoot: disk.dir, fallbackTmpRoots: [] });
    await overlay.writeFile('first.txt', 'stored before the disk went read-only\n');
    execFileSync('mount', ['-o', 'remount,ro', disk.dir]);
    try {
      const error = await thrown(() => overlay.writeFile('second.txt', 'x'));
      assert.ok(error instanceof OverlayStorageError, String(error));
      assert.match(error.message, /^Couldn't run ahead: the temp folder is on a read-only disk\. Point TMPDIR at a writable folder/);
      assert.equal(Buffer.from(await overlay.readFile('first.txt')).toString(), 'stored before the disk went read-only\n');
    } finally {
      execFileSync('mount', ['-o', 'remount,rw', disk.dir]);
    }
    await overlay.cleanup();
  });

  it('a full temp folder fails the overlay write itself (the speculation), never as a result for the model', async () => {
    const ws = path.join(elsewhere, 'ws');
    await mkdir(ws);
    const fs = await NodeWorkspaceFs.open(ws, { ripgrepPath: null });
    const overlay = await OverlayFs.create({ base: fs, tmpRoot: disk.dir, fallbackTmpRoots: [] });
    const direct = await thrown(() => overlay.writeFile('big.txt', TOO_BIG));
    assert.ok(direct instanceof OverlayStorageError, String(direct));
    assert.match(direct.message, /^Couldn't run ahead: the temp folder is full\. Free some space there \(or point TMPDIR at a roomier folder\); the next suggestion will try again\.$/);
    // Through the tool, the failure goes to the caller (the speculation), not into a tool result.
    const viaTool = await thrown(() => writeFileTool.execute({ file_path: 'big.txt', content: TOO_BIG }, { fs: overlay }));
    assert.ok(viaTool instanceof OverlayStorageError);
    assert.deepEqual(overlay.writtenFiles(), []);
    assert.deepEqual(await readdir(ws), []);
    await overlay.cleanup();
  });
});
