// Accepting an overlay: exact, atomic, mode-preserving writes; conflicts that keep the user's edits;
// I/O failures that name the file; crashes recovered on the next start; stale overlays cleaned up.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdir, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { nodeApplyFs, type ApplyFs } from '../../../src/core/followup/overlay/applyFs';
import { JOURNAL_FILE } from '../../../src/core/followup/overlay/applyJournal';
import {
  cleanupStaleOverlays,
  isProcessAlive,
  OverlayApplyError,
  recoverInterruptedApplies,
  type ApplyStepHook,
  type HousekeepingOptions,
  type OverlayFs,
} from '../../../src/core/followup/overlayFs';
import { exists, makeSandbox, snapshot, tempFiles, text, thrown, type Sandbox } from './overlayKit';

const DEAD_PID = 3_999_999;
const onlyUsAlive = { isProcessAlive: (pid: number) => pid === process.pid };

/** Housekeeping of this sandbox only: its temp root (no fallbacks on the real machine), its workspace open. */
function housekeeping(box: Sandbox, extra: Partial<HousekeepingOptions> = {}): HousekeepingOptions {
  return { tmpRoot: box.tmpRoot, fallbackTmpRoots: [], workspaces: [box.ws], ...extra };
}

function simulatedError(code: string): Error {
  return Object.assign(new Error(`${code}: simulated failure`), { code });
}

/** node's fs with one operation failing for one file's accept temp while `armed`. */
function faultyFs(op: 'writeDurable' | 'rename', file: string, code: string): ApplyFs & { armed: boolean } {
  const fs = { ...nodeApplyFs, armed: true };
  const original = nodeApplyFs[op] as (...args: string[]) => Promise<void>;
  const wrapped = async (...args: string[]) => {
    if (fs.armed && args.some((arg) => typeof arg === 'string' && arg.includes(`/.${file}.speculate-`))) throw simulatedError(code);
    return original(...args);
  };
  return Object.assign(fs, { [op]: wrapped });
}

class Crash extends Error {}

function crashAfter(phase: 'staged' | 'committed', count: number): ApplyStepHook {
  let seen = 0;
  return (event) => {
    if (event.phase === phase && ++seen === count) throw new Crash(`simulated crash after ${count} ${phase}`);
  };
}

const ORIGINAL: Record<string, string> = {
  'a.txt': 'a original\n',
  'b.txt': 'b original\n',
  'c.txt': 'c original\n',
  'src/d.ts': 'd original\n',
  'gone.txt': 'to be deleted\n',
};
const SPECULATED: Record<string, string> = {
  'a.txt': 'a speculated, longer than before\n',
  'b.txt': 'b speculated\n',
  'c.txt': 'c\n',
  'src/d.ts': 'd speculated\n',
  'new/deep/e.txt': 'e created\n',
};

async function speculate(overlay: OverlayFs): Promise<void> {
  for (const [file, content] of Object.entries(SPECULATED)) await overlay.writeFile(file, content);
  await overlay.delete('gone.txt');
}

/** Every touched file is exactly old or exactly new — never anything in between. */
async function assertOldOrNew(box: Sandbox): Promise<'old' | 'new' | 'mixed'> {
  const states = new Set<string>();
  for (const file of new Set([...Object.keys(ORIGINAL), ...Object.keys(SPECULATED)])) {
    const current = (await exists(path.join(box.ws, file))) ? await box.read(file) : undefined;
    const old = ORIGINAL[file];
    const fresh = file === 'gone.txt' ? undefined : SPECULATED[file];
    assert.ok(current === old || current === fresh, `${file} is either old or new, got ${JSON.stringify(current)}`);
    if (old !== fresh) states.add(current === old ? 'old' : 'new');
  }
  return states.size === 1 ? ([...states][0] as 'old' | 'new') : 'mixed';
}

describe('OverlayFs accept', () => {
  let box: Sandbox;

  beforeEach(async () => {
    box = await makeSandbox({
      ...ORIGINAL,
      'untouched.txt': 'never touched\n',
      'scripts/run.sh': { content: '#!/bin/sh\necho run\n', mode: 0o755 },
      'readonly.txt': { content: 'read only\n', mode: 0o444 },
      'olddir/only.txt': 'only\n',
    });
  });

  afterEach(async () => {
    assert.deepEqual(await box.dispose(), [], 'no overlay folder is left behind');
  });

  it('applies exactly what was written, keeps modes, and touches nothing else', async () => {
    const overlay = await box.open();
    await speculate(overlay);
    await overlay.writeFile('scripts/run.sh', '#!/bin/sh\necho faster\n');
    await overlay.writeFile('readonly.txt', 'still read only\n');
    await overlay.rename('scripts/run.sh', 'bin/run.sh');
    await overlay.delete('olddir/only.txt');
    await overlay.delete('olddir');
    const before = await snapshot(box.ws);

    const result = await overlay.applyToReal();
    // A file the user made read-only is never rewritten (not even by root): a conflict with its reason.
    assert.deepEqual(result.conflicts.map((c) => [c.path, c.reason, c.canOverwrite]), [['readonly.txt', 'read-only', false]]);
    assert.equal(await box.read('readonly.txt'), 'read only\n');
    await overlay.discard('readonly.txt');
    assert.deepEqual(result.applied.sort(), ['a.txt', 'b.txt', 'bin/run.sh', 'c.txt', 'gone.txt', 'new/deep/e.txt', 'olddir/only.txt', 'scripts/run.sh', 'src/d.ts']);
    for (const [file, content] of Object.entries(SPECULATED)) assert.equal(await box.read(file), content);
    assert.equal(await box.read('bin/run.sh'), '#!/bin/sh\necho faster\n');
    assert.equal((await stat(path.join(box.ws, 'bin/run.sh'))).mode & 0o777, 0o755);
    assert.equal((await stat(path.join(box.ws, 'readonly.txt'))).mode & 0o777, 0o444, 'and keeps its mode');
    assert.equal((await stat(path.join(box.ws, 'new/deep/e.txt'))).mode & 0o777, 0o666 & ~process.umask());
    for (const gone of ['gone.txt', 'scripts/run.sh', 'olddir']) assert.equal(await exists(path.join(box.ws, gone)), false, `${gone} is gone`);

    const after = await snapshot(box.ws);
    const touched = (key: string) => result.applied.some((file) => key === file || file.startsWith(`${key}/`) || key.startsWith('olddir'));
    for (const key of Object.keys(before)) if (!touched(key)) assert.equal(after[key], before[key], `${key} is unchanged`);
    for (const key of Object.keys(after)) assert.ok(key in before || touched(key), `${key} was created by the accept`);
    assert.deepEqual(await tempFiles(box.ws), []);
    assert.equal(await exists(path.join(overlay.dir, JOURNAL_FILE)), false);
    assert.deepEqual(overlay.writtenFiles(), [], 'applied files leave the overlay');
    assert.equal(await box.read('untouched.txt'), 'never touched\n');
  });

  it('keeps the user edit made after the overlay copied the file, and reports it', async () => {
    const overlay = await box.open();
    await speculate(overlay);
    await box.write('a.txt', 'the user typed this\n');
    const changes: string[][] = [];
    overlay.onDidChange((paths) => changes.push(paths));

    const result = await overlay.applyToReal();
    assert.deepEqual(result.conflicts.map((c) => [c.path, c.reason, c.canOverwrite]), [['a.txt', 'modified', true]]);
    assert.match(result.conflicts[0].message, /"a\.txt" was changed in the workspace.*your version was kept/);
    assert.equal(await box.read('a.txt'), 'the user typed this\n');
    assert.equal(await box.read('b.txt'), SPECULATED['b.txt']);
    assert.deepEqual(overlay.writtenFiles(), [{ path: 'a.txt', kind: 'modified' }]);
    assert.ok(changes[0].includes('b.txt'), 'listeners hear about applied files');

    // Accepting again still protects the edit; Overwrite forces this one file.
    assert.deepEqual((await overlay.applyToReal()).conflicts.map((c) => c.path), ['a.txt']);
    assert.deepEqual(await overlay.applyFile('a.txt', { force: true }), { applied: ['a.txt'], conflicts: [] });
    assert.equal(await box.read('a.txt'), SPECULATED['a.txt']);
    assert.deepEqual(overlay.writtenFiles(), []);
  });

  it('detects an edit that keeps the size and the modification time', async () => {
    const overlay = await box.open();
    await overlay.writeFile('b.txt', 'speculated');
    const file = path.join(box.ws, 'b.txt');
    const { mtime, atime } = await stat(file);
    await writeFile(file, 'B ORIGINAL\n');
    await utimes(file, atime, mtime);
    const result = await overlay.applyToReal();
    assert.deepEqual(result.conflicts.map((c) => c.reason), ['modified']);
    assert.equal(await box.read('b.txt'), 'B ORIGINAL\n');
  });

  it('reports files created, deleted or replaced by a folder meanwhile, and forces on request', async () => {
    const overlay = await box.open();
    await overlay.writeFile('fresh.txt', 'speculated fresh\n');
    await overlay.writeFile('c.txt', 'speculated c\n');
    await overlay.writeFile('folder-now.txt', 'x');
    await box.write('fresh.txt', 'user fresh\n');
    await unlink(path.join(box.ws, 'c.txt'));
    await mkdir(path.join(box.ws, 'folder-now.txt'));

    const result = await overlay.applyToReal();
    assert.deepEqual(result.conflicts.map((c) => [c.path, c.reason, c.canOverwrite]), [
      ['c.txt', 'deleted', true],
      ['folder-now.txt', 'not-a-file', false],
      ['fresh.txt', 'created', true],
    ]);
    assert.equal(await box.read('fresh.txt'), 'user fresh\n');
    assert.equal(await exists(path.join(box.ws, 'c.txt')), false);

    const forced = await overlay.applyToReal({ overwrite: ['fresh.txt', 'c.txt'], skip: ['folder-now.txt'] });
    assert.deepEqual(forced, { applied: ['c.txt', 'fresh.txt'], conflicts: [] });
    assert.equal(await box.read('fresh.txt'), 'speculated fresh\n');
    assert.equal(await box.read('c.txt'), 'speculated c\n');
    await overlay.discard('folder-now.txt');
    assert.deepEqual(overlay.writtenFiles(), []);
  });

  it('does not delete a file the user changed after the speculation deleted it', async () => {
    const overlay = await box.open();
    await overlay.delete('gone.txt');
    await box.write('gone.txt', 'user still needs this\n');
    const result = await overlay.applyToReal();
    assert.deepEqual(result.conflicts.map((c) => [c.path, c.reason]), [['gone.txt', 'modified']]);
    assert.match(result.conflicts[0].message, /decided to delete it; your file was kept/);
    assert.equal(await box.read('gone.txt'), 'user still needs this\n');
    await overlay.discard('gone.txt');
    assert.deepEqual(await overlay.applyToReal(), { applied: [], conflicts: [] });
    assert.equal(await box.read('gone.txt'), 'user still needs this\n');
  });

  it('treats a real file that already holds the speculated content as applied', async () => {
    const overlay = await box.open();
    await overlay.writeFile('a.txt', 'same result\n');
    await box.write('a.txt', 'same result\n');
    assert.deepEqual(await overlay.applyToReal(), { applied: ['a.txt'], conflicts: [] });
  });

  it('leaves the workspace untouched when staging fails, and names the file', async () => {
    const fs = faultyFs('writeDurable', 'b.txt', 'ENOSPC');
    const overlay = await box.open({ applyFs: fs });
    await speculate(overlay);
    const before = await snapshot(box.ws);

    const error = await thrown(() => overlay.applyToReal());
    assert.ok(error instanceof OverlayApplyError);
    assert.equal(error.path, 'b.txt');
    assert.match(error.message, /while preparing "b\.txt": the disk holding .*\/ws \(mounted at \/[^)]*\) is full: \d+ bytes needed, [\d.]+ [KMG]?B free; no file in the workspace was changed/);
    assert.equal(error.liveWouldFail, true, 'a full workspace disk would stop the live run too');
    assert.ok(!error.message.includes(overlay.dir));
    assert.deepEqual(await snapshot(box.ws), before, 'no temp, no new folder, no partial file');
    assert.equal(await exists(path.join(overlay.dir, JOURNAL_FILE)), false);
    assert.equal(overlay.writtenFiles().length, 6, 'everything stays in the overlay for a retry');

    fs.armed = false;
    assert.equal((await overlay.applyToReal()).applied.length, 6);
    assert.equal(await assertOldOrNew(box), 'new');
  });

  it('stops before writing anything when a real file cannot be read for the check', async () => {
    const unreadable: ApplyFs = {
      ...nodeApplyFs,
      readFile: async (absolute) => {
        if (absolute.endsWith(`${path.sep}c.txt`)) throw simulatedError('EACCES');
        return nodeApplyFs.readFile(absolute);
      },
    };
    const overlay = await box.open({ applyFs: unreadable });
    await speculate(overlay);
    const before = await snapshot(box.ws);
    const error = await thrown(() => overlay.applyToReal());
    assert.ok(error instanceof OverlayApplyError);
    assert.match(error.message, /while checking "c\.txt" \(EACCES\); no file in the workspace was changed/);
    assert.deepEqual(await snapshot(box.ws), before);
  });

  it('applies the other files when one rename fails, and reports both', async () => {
    const fs = faultyFs('rename', 'b.txt', 'EACCES');
    const overlay = await box.open({ applyFs: fs });
    await speculate(overlay);

    const error = await thrown(() => overlay.applyToReal());
    assert.ok(error instanceof OverlayApplyError);
    assert.equal(error.path, 'b.txt');
    assert.deepEqual(error.failed, [{ path: 'b.txt', code: 'EACCES' }]);
    assert.deepEqual(error.applied.sort(), ['a.txt', 'c.txt', 'gone.txt', 'new/deep/e.txt', 'src/d.ts']);
    assert.match(error.message, /failed for "b\.txt" \(EACCES\); 5 other file\(s\) were applied/);
    assert.equal(await box.read('b.txt'), ORIGINAL['b.txt']);
    assert.equal(await box.read('a.txt'), SPECULATED['a.txt']);
    assert.deepEqual(await tempFiles(box.ws), []);
    assert.deepEqual(overlay.writtenFiles(), [{ path: 'b.txt', kind: 'modified' }]);

    fs.armed = false;
    assert.deepEqual(await overlay.applyToReal(), { applied: ['b.txt'], conflicts: [] });
  });

  for (const crashPoint of [1, 3, 6]) {
    it(`rolls an accept that crashed after ${crashPoint} committed file(s) forward on the next start`, async () => {
      const overlay = await box.open({ pid: DEAD_PID, onApplyStep: crashAfter('committed', crashPoint) });
      await speculate(overlay);
      assert.ok((await thrown(() => overlay.applyToReal())) instanceof Crash);
      await assertOldOrNew(box);
      assert.ok(await exists(path.join(overlay.dir, JOURNAL_FILE)), 'the journal survives the crash');

      const outcomes = await recoverInterruptedApplies(housekeeping(box, onlyUsAlive));
      assert.deepEqual(outcomes.map((o) => [o.outcome, o.workspaceRoot, o.pid, o.kept]), [['rolled-forward', box.ws, DEAD_PID, []]]);
      assert.equal(outcomes[0].applied.length, 6);
      assert.equal(await assertOldOrNew(box), 'new');
      assert.equal(await exists(path.join(box.ws, 'gone.txt')), false);
      assert.deepEqual(await tempFiles(box.ws), []);
      assert.equal(await exists(path.join(overlay.dir, JOURNAL_FILE)), false);
    });
  }

  it('rolls an accept that crashed while staging back on the next start', async () => {
    const overlay = await box.open({ pid: DEAD_PID, onApplyStep: crashAfter('staged', 3) });
    await speculate(overlay);
    const before = await snapshot(box.ws);
    assert.ok((await thrown(() => overlay.applyToReal())) instanceof Crash);
    assert.ok((await tempFiles(box.ws)).length > 0, 'the crash left temps behind');

    const outcomes = await recoverInterruptedApplies(housekeeping(box, onlyUsAlive));
    assert.deepEqual(outcomes.map((o) => o.outcome), ['rolled-back']);
    assert.equal(await assertOldOrNew(box), 'old');
    assert.deepEqual(await snapshot(box.ws), before, 'temps and created folders are gone');
    assert.equal(await exists(path.join(overlay.dir, JOURNAL_FILE)), false);
  });

  it('keeps a change the user made between the crash and the recovery', async () => {
    const overlay = await box.open({ pid: DEAD_PID, onApplyStep: crashAfter('committed', 1) });
    await speculate(overlay);
    await thrown(() => overlay.applyToReal());
    await box.write('c.txt', 'edited after the crash\n');
    await box.write('gone.txt', 'edited after the crash too\n');
    const [outcome] = await recoverInterruptedApplies(housekeeping(box, onlyUsAlive));
    assert.equal(outcome.outcome, 'rolled-forward');
    assert.deepEqual(outcome.kept.sort(), ['c.txt', 'gone.txt']);
    assert.equal(await box.read('c.txt'), 'edited after the crash\n');
    assert.equal(await box.read('gone.txt'), 'edited after the crash too\n');
    assert.equal(await box.read('b.txt'), SPECULATED['b.txt']);
    assert.deepEqual(await tempFiles(box.ws), []);
  });

  it('leaves journals of running processes alone', async () => {
    const overlay = await box.open({ onApplyStep: crashAfter('committed', 1) });
    await speculate(overlay);
    await thrown(() => overlay.applyToReal());
    assert.deepEqual(await recoverInterruptedApplies(housekeeping(box, onlyUsAlive)), []);
    assert.deepEqual((await cleanupStaleOverlays(housekeeping(box, onlyUsAlive))).removed, []);
    assert.ok(await exists(path.join(overlay.dir, JOURNAL_FILE)));
    // Once this process counts as gone, the accept is finished.
    const report = await cleanupStaleOverlays(housekeeping(box, { isProcessAlive: () => false }));
    assert.deepEqual(report.recovery.map((r) => r.outcome), ['rolled-forward']);
    assert.equal(await assertOldOrNew(box), 'new');
  });

  it('removes overlays of dead processes after recovering them, and keeps live ones', async () => {
    const live = await box.open();
    await live.writeFile('a.txt', 'live speculation');
    const idle = await box.open({ pid: DEAD_PID });
    await idle.writeFile('b.txt', 'abandoned');
    const crashed = await box.open({ pid: DEAD_PID - 1, onApplyStep: crashAfter('committed', 1) });
    await crashed.writeFile('c.txt', 'crashed accept\n');
    await crashed.writeFile('src/d.ts', 'crashed accept too\n');
    await thrown(() => crashed.applyToReal());

    const report = await cleanupStaleOverlays(housekeeping(box, onlyUsAlive));
    assert.deepEqual(report.removed.sort(), [DEAD_PID - 1, DEAD_PID]);
    assert.deepEqual(report.kept, []);
    assert.deepEqual(report.recovery.map((r) => [r.pid, r.outcome]), [[DEAD_PID - 1, 'rolled-forward']]);
    assert.equal(await box.read('src/d.ts'), 'crashed accept too\n');
    assert.equal(await exists(idle.dir), false);
    assert.equal(await exists(crashed.dir), false);
    assert.equal(text(await live.readFile('a.txt')), 'live speculation');
    assert.equal(await box.read('b.txt'), ORIGINAL['b.txt'], 'an abandoned speculation is never applied');
  });

  it('keeps a dead overlay whose recovery failed, and finishes it on a later start', async () => {
    const overlay = await box.open({ pid: DEAD_PID, onApplyStep: crashAfter('committed', 1) });
    await speculate(overlay);
    await thrown(() => overlay.applyToReal());
    const broken = faultyFs('rename', 'b.txt', 'EIO');
    const report = await cleanupStaleOverlays(housekeeping(box, { ...onlyUsAlive, fs: broken }));
    assert.deepEqual(report.kept, [DEAD_PID]);
    assert.equal(report.recovery[0].outcome, 'failed');
    assert.match(report.recovery[0].message ?? '', /EIO.*tried again on the next start/);
    assert.ok(await exists(path.join(overlay.dir, JOURNAL_FILE)));

    const retry = await cleanupStaleOverlays(housekeeping(box, onlyUsAlive));
    assert.deepEqual(retry.removed, [DEAD_PID]);
    assert.equal(await assertOldOrNew(box), 'new');
  });

  it('ignores a journal it cannot read instead of acting on it', async () => {
    const overlay = await box.open({ pid: DEAD_PID });
    await writeFile(path.join(overlay.dir, JOURNAL_FILE), '{"version":1,"workspaceRoot":"/","steps":[{"path":"../../etc/passwd"}]}');
    const report = await cleanupStaleOverlays(housekeeping(box, onlyUsAlive));
    assert.deepEqual(report.recovery.map((r) => r.outcome), ['abandoned']);
    assert.deepEqual(report.removed, [DEAD_PID]);
  });

  it('knows a running process from one that has exited', () => {
    const child = spawnSync(process.execPath, ['-e', '0']);
    assert.equal(isProcessAlive(process.pid), true);
    assert.equal(isProcessAlive(child.pid as number), false);
  });

  it('accepts files whose names use the whole 255-byte limit, and recovers them after a crash', async () => {
    const names = ['n'.repeat(244), 'x'.repeat(255), `${'é'.repeat(127)}.`, `deep/${'ü'.repeat(120)}.txt`];
    for (const name of names) assert.ok(Buffer.byteLength(path.posix.basename(name)) <= 255 && Buffer.byteLength(path.posix.basename(name)) >= 244, name);
    const overlay = await box.open();
    for (const name of names) await overlay.writeFile(name, `content of ${name.length}\n`);
    assert.deepEqual((await overlay.applyToReal()).applied.sort(), [...names].sort());
    for (const name of names) assert.equal(await box.read(name), `content of ${name.length}\n`);
    assert.deepEqual(await tempFiles(box.ws), []);

    const crashed = await box.open({ pid: DEAD_PID, onApplyStep: crashAfter('committed', 2) });
    for (const name of names) await crashed.writeFile(name, 'second version\n');
    assert.ok((await thrown(() => crashed.applyToReal())) instanceof Crash);
    const [outcome] = await recoverInterruptedApplies(housekeeping(box, onlyUsAlive));
    assert.equal(outcome.outcome, 'rolled-forward', outcome.message);
    assert.deepEqual(outcome.applied.sort(), [...names].sort());
    for (const name of names) assert.equal(await box.read(name), 'second version\n');
    assert.deepEqual(await tempFiles(box.ws), []);
  });

  it('reports the conflicts an accept would have without writing anything', async () => {
    const overlay = await box.open();
    await speculate(overlay);
    await box.write('b.txt', 'user\n');
    const before = await snapshot(box.ws);
    assert.deepEqual((await overlay.checkConflicts()).map((c) => [c.path, c.reason]), [['b.txt', 'modified']]);
    assert.deepEqual(await snapshot(box.ws), before);
    assert.equal(overlay.writtenFiles().length, 6);
  });
});
