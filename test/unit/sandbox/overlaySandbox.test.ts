// The overlay and the sandbox together (real namespaces): a command sees the speculation's earlier
// edits, its changes become ordinary overlay changes, and accept applies exactly those — holding each
// file against what the command found, so a user's change during the command is never overwritten.
import * as assert from 'node:assert/strict';
import { lstat, mkdir, rm, unlink, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { LinuxSandbox } from '../../../src/core/sandbox/linuxSandbox';
import type { SandboxResult } from '../../../src/core/sandbox/shellSandbox';
import type { OverlayFs } from '../../../src/core/followup/overlayFs';
import { buildLayer } from '../../../src/core/sandbox/layerBuilder';
import { makeWhiteout } from '../../../src/core/sandbox/scratch';
import { makeSandbox, makeSymlink, snapshot, text, thrown, type Sandbox } from '../followup/overlayKit';
import { fixtureSettled, processesWith, sleep } from './sandboxKit';

describe('the overlay with the sandbox', function () {
  this.timeout(30_000);
  let box: Sandbox;
  let sandbox: LinuxSandbox;

  beforeEach(async () => {
    box = await makeSandbox({
      'src/greet.js': 'exports.greet = (n) => `Hello, ${n}!`;\n',
      'test/greet.test.js': "const { test } = require('node:test'); const assert = require('node:assert');\nconst { farewell } = require('../src/greet.js');\ntest('farewell', () => assert.equal(farewell('A'), 'Goodbye, A!'));\n",
      'b.txt': 'b\n',
      'c.txt': 'c\n',
      'run.sh': { content: 'echo run\n', mode: 0o644 },
      'dist/old.js': 'old\n',
    });
    sandbox = new LinuxSandbox({ tmpRoot: box.tmpRoot, hostEnv: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: path.join(box.parent, 'home') } });
    await fixtureSettled();
  });
  afterEach(async () => {
    assert.deepEqual(await box.dispose(), []);
  });

  /** Waits until the sandboxed command is running (its marked process shows in /proc). */
  async function commandRunning(marker: string): Promise<void> {
    for (let i = 0; i < 1500 && processesWith(marker).length === 0; i++) await sleep(10);
    assert.ok(processesWith(marker).length > 0, 'the command started');
  }

  async function run(overlay: OverlayFs, command: string, during?: () => Promise<void>): Promise<SandboxResult> {
    const pending = sandbox.run({ command, cwd: box.ws, workspace: { root: box.ws, writable: true, layer: await overlay.sandboxLayer() }, limits: { timeoutMs: 20_000, maxOutputBytes: 64 * 1024, maxWriteBytes: 16 * 1024 * 1024 } });
    if (during) await during();
    const outcome = await pending;
    assert.ok(outcome.ok, outcome.ok ? '' : outcome.reason);
    return outcome.result;
  }

  it("a test passes only with the speculation's edit, and the command's changes are applied on accept exactly", async () => {
    const overlay = await box.open();
    await overlay.writeFile('src/greet.js', 'exports.greet = (n) => `Hello, ${n}!`;\nexports.farewell = (n) => `Goodbye, ${n}!`;\n');
    const before = await snapshot(box.ws);
    const result = await run(overlay, 'node --test && rm b.txt && mkdir -p moved/deep && mv c.txt moved/deep/c.txt && chmod +x run.sh && rm -rf dist && mkdir dist && echo new > dist/new.js');
    try {
      assert.equal(result.exitCode, 0, result.output);
      assert.match(result.output, /pass 1/);
      const changed = await overlay.applySandboxChanges(result.changes, result.startedAt);
      assert.deepEqual(changed.sort(), ['b.txt', 'c.txt', 'dist/new.js', 'dist/old.js', 'moved/deep/c.txt', 'run.sh']);
    } finally {
      await result.dispose();
    }
    assert.deepEqual(await snapshot(box.ws), before, 'nothing real changed before accept');
    assert.deepEqual(overlay.writtenFiles(), [
      { path: 'b.txt', kind: 'deleted' },
      { path: 'c.txt', kind: 'deleted' },
      { path: 'dist/new.js', kind: 'created' },
      { path: 'dist/old.js', kind: 'deleted' },
      { path: 'moved/deep/c.txt', kind: 'created' },
      { path: 'run.sh', kind: 'modified' },
      { path: 'src/greet.js', kind: 'modified' },
    ]);
    assert.equal(text(await overlay.readFile('moved/deep/c.txt')), 'c\n');
    const applied = await overlay.applyToReal();
    assert.deepEqual(applied.conflicts, []);
    const after = await snapshot(box.ws);
    assert.equal(after['b.txt'], undefined);
    assert.equal(after['c.txt'], undefined);
    assert.equal(after['dist/old.js'], undefined);
    assert.match(after['run.sh'], /^file 755 /);
    assert.equal(await box.read('moved/deep/c.txt'), 'c\n');
    assert.equal(await box.read('dist/new.js'), 'new\n');
    assert.match(await box.read('src/greet.js'), /farewell/);
  });

  it('a file the user changes while the command runs is a conflict on accept, and the user keeps it', async () => {
    const overlay = await box.open();
    const marker = `speculate-user-edit-${process.pid}-${Date.now()}`;
    const result = await run(overlay, `(exec -a ${marker} sleep 1); echo from-command > b.txt`, async () => {
      await commandRunning(marker);
      await box.write('b.txt', 'from-user\n');
    });
    try {
      await overlay.applySandboxChanges(result.changes, result.startedAt);
    } finally {
      await result.dispose();
    }
    const applied = await overlay.applyToReal();
    assert.deepEqual(applied.conflicts.map((conflict) => [conflict.path, conflict.reason]), [['b.txt', 'modified']]);
    assert.equal(await box.read('b.txt'), 'from-user\n');
  });

  it('a file the user deletes while the command changes it is a conflict, not re-created', async () => {
    const overlay = await box.open();
    const marker = `speculate-user-delete-${process.pid}-${Date.now()}`;
    const result = await run(overlay, `(exec -a ${marker} sleep 1); echo from-command >> c.txt`, async () => {
      await commandRunning(marker);
      await unlink(path.join(box.ws, 'c.txt'));
    });
    try {
      await overlay.applySandboxChanges(result.changes, result.startedAt);
    } finally {
      await result.dispose();
    }
    const applied = await overlay.applyToReal();
    assert.deepEqual(applied.conflicts.map((conflict) => [conflict.path, conflict.reason]), [['c.txt', 'deleted']]);
    await assert.rejects(lstat(path.join(box.ws, 'c.txt')));
  });

  it('files the command did not touch are held against what the speculation read before', async () => {
    const overlay = await box.open();
    assert.equal(text(await overlay.readFile('b.txt')), 'b\n');
    await box.write('b.txt', 'changed by the user before the command\n');
    const result = await run(overlay, 'echo from-command > b.txt');
    try {
      await overlay.applySandboxChanges(result.changes, result.startedAt);
    } finally {
      await result.dispose();
    }
    const applied = await overlay.applyToReal();
    assert.deepEqual(applied.conflicts.map((conflict) => conflict.path), ['b.txt'], 'the speculation read the old version');
  });

  it('a change through a symlink is refused whole, and nothing of it enters the overlay', async () => {
    const overlay = await box.open();
    await makeSymlink(box.outside, path.join(box.ws, 'out'));
    const content = path.join(box.parent, 'content.txt');
    await writeFile(content, 'x');
    const error = await thrown(() => overlay.applySandboxChanges([{ kind: 'write', path: 'fine.txt', mode: 0o644, size: 1, contentPath: content }, { kind: 'write', path: 'out/evil.txt', mode: 0o644, size: 1, contentPath: content }], Date.now()));
    assert.equal(error.name, 'PathOutsideWorkspaceError');
    assert.deepEqual(overlay.writtenFiles(), []);
  });

  it('the layer links the overlay blobs: when a command changes nothing, no file is copied', async () => {
    const overlay = await box.open();
    await overlay.writeFile('run.sh', 'echo speculated\n');
    await overlay.writeFile('src/new.js', 'new\n');
    const layer = await overlay.sandboxLayer();
    assert.deepEqual(layer.files.map((file) => [file.path, file.mode.toString(8)]).sort(), [['run.sh', '644'], ['src/new.js', '644']]);
    const dir = path.join(box.parent, 'layer');
    await mkdir(dir);
    const built = await buildLayer({ layer, realRoot: box.ws, dir, whiteout: () => makeWhiteout('/usr/bin/mknod', path.join(box.parent, 'wh')) });
    assert.deepEqual(built.stats, { linked: 2, copied: 0, whiteouts: 0 });
    const result = await run(overlay, 'cat run.sh src/new.js');
    assert.equal(result.output, 'echo speculated\nnew\n');
    assert.deepEqual(result.changes, []);
    await result.dispose();
    await rm(dir, { recursive: true });
  });
});
