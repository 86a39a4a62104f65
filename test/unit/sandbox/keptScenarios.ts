// Scenarios of one sandbox per speculation (real namespaces, real commands): the commands of a
// session share its namespaces, see what the earlier ones and the engine changed, read back exactly,
// keep their own cleanup, limits and time limit, and nothing of the session outlives it.
import * as assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import type { SandboxChange, SandboxLayer, SandboxSession } from '../../../src/core/sandbox/shellSandbox';
import { keeperProcesses, processesWith, sleep, sorted, type SandboxKit } from './sandboxKit';
import type { Scenario } from './scenarios';

let sessions = 0;

function newSession(): { session: SandboxSession; end: () => void } {
  const lifetime = new AbortController();
  return { session: { id: `test-session-${process.pid}-${++sessions}`, lifetime: lifetime.signal }, end: () => lifetime.abort() };
}

/** The user namespace the command ran in: the same for every command of a kept sandbox (a freed one's number may be reused, so only a live one is compared). */
const USER_NS = 'readlink /proc/self/ns/user';

async function waitUntilGone(marker: string): Promise<void> {
  for (let i = 0; i < 200 && processesWith(marker).length > 0; i++) await sleep(25);
  assert.deepEqual(processesWith(marker), [], `no process with ${marker} is left`);
}

/** The session's keeper has ended (its command line names the sandbox's temp folder) and left nothing behind. */
async function assertSessionGone(kit: SandboxKit): Promise<void> {
  await waitUntilGone(kit.sandboxTmp);
  for (let i = 0; i < 100; i++) {
    try {
      await kit.assertNothingLeft();
      return;
    } catch {
      await sleep(25);
    }
  }
  await kit.assertNothingLeft();
}

/**
 * What the engine's overlay does with a command's changes, over a plain layer: its writes become
 * written files (their bytes kept as blobs, since the run's folder goes), its deletions deleted files.
 */
async function taken(kit: SandboxKit, layer: SandboxLayer, changes: readonly SandboxChange[]): Promise<SandboxLayer> {
  const files = new Map(layer.files.map((file) => [file.path, file]));
  const deletedFiles = new Set(layer.deletedFiles);
  for (const change of changes) {
    if (change.kind === 'write') {
      files.set(change.path, { path: change.path, contentPath: await kit.blob(await readFile(change.contentPath, 'utf8'), change.mode), mode: change.mode });
      deletedFiles.delete(change.path);
    } else if (change.type === 'file') {
      files.delete(change.path);
      deletedFiles.add(change.path);
    }
  }
  return { files: [...files.values()], deletedFiles: [...deletedFiles], deletedDirs: [...layer.deletedDirs] };
}

export const KEPT_SCENARIOS: Record<string, Scenario> = {
  async "a speculation's commands share one sandbox and see the earlier commands' writes and deletions and the engine's writes between them; each reads back exactly"(kit) {
    await kit.write('src/a.txt', 'real a\n');
    await kit.write('b.txt', 'b\n');
    await kit.write('gone.txt', 'gone\n');
    await kit.write('dir/old.txt', 'old\n');
    const { session, end } = newSession();
    let layer: SandboxLayer = { files: [{ path: 'src/a.txt', contentPath: await kit.blob('engine 1\n'), mode: 0o644 }], deletedFiles: ['gone.txt'], deletedDirs: [] };

    const first = await kit.run(`${USER_NS}; cat src/a.txt; test ! -e gone.txt && echo no-gone; echo one > one.txt; rm b.txt`, { session, layer });
    const namespace = first.output.split('\n')[0];
    assert.equal(first.output, `${namespace}\nengine 1\nno-gone\n`);
    assert.deepEqual(sorted(first.changes), ['delete file b.txt', 'write one.txt 644']);
    layer = await taken(kit, layer, first.changes);
    await first.dispose();

    // The engine's own edits between the commands: a file written again, a new one.
    layer = {
      ...layer,
      files: [...layer.files.filter((file) => file.path !== 'src/a.txt'), { path: 'src/a.txt', contentPath: await kit.blob('engine 2\n'), mode: 0o644 }, { path: 'two.txt', contentPath: await kit.blob('two\n', 0o755), mode: 0o755 }],
    };
    const second = await kit.run(`${USER_NS}; cat src/a.txt one.txt two.txt; stat -c %a two.txt; test ! -e b.txt && test ! -e gone.txt && echo gone-both; echo more >> one.txt; rm -rf dir && mkdir dir && echo n > dir/new.txt`, { session, layer });
    assert.equal(second.output, `${namespace}\nengine 2\none\ntwo\n755\ngone-both\n`, 'the same namespaces, and every earlier change');
    assert.deepEqual(sorted(second.changes), ['delete file dir/old.txt', 'write dir/new.txt 644', 'write one.txt 644']);
    const one = second.changes.find((change) => change.path === 'one.txt');
    assert.ok(one?.kind === 'write');
    assert.equal(await readFile(one.contentPath, 'utf8'), 'one\nmore\n');
    layer = await taken(kit, layer, second.changes);
    await second.dispose();

    // A revert (the engine dropped two.txt) and a deleted folder: the layer is rebuilt, still right.
    const only = { path: 'dir/only.txt', contentPath: await kit.blob('only\n'), mode: 0o644 };
    layer = { files: [...layer.files.filter((file) => file.path !== 'two.txt' && !file.path.startsWith('dir/')), only], deletedFiles: layer.deletedFiles.filter((file) => !file.startsWith('dir/')), deletedDirs: ['dir'] };
    const third = await kit.run(`${USER_NS}; test ! -e two.txt && echo no-two; ls -A dir; cat one.txt`, { session, layer });
    assert.equal(third.output, `${namespace}\nno-two\nonly.txt\none\nmore\n`);
    assert.deepEqual(third.changes, []);
    await third.dispose();

    const fresh = await kit.run(USER_NS);
    assert.notEqual(fresh.output.trim(), namespace, 'a run without a session gets a sandbox of its own');
    await fresh.dispose();
    assert.equal(await kit.read('b.txt'), 'b\n', 'the real workspace is untouched');
    assert.equal(await kit.read('dir/old.txt'), 'old\n');
    end();
    await assertSessionGone(kit);
  },

  async "in a kept sandbox, what a command started ends with it, and each command gets a fresh /tmp and HOME and its own PID 1"(kit) {
    const { session, end } = newSession();
    const marker = `speculate-kept-daemon-${process.pid}-${Date.now()}`;
    const first = await kit.run(`(exec -a ${marker} sleep 60) & echo left > /tmp/left; echo left > ~/left; echo $$`, { session });
    assert.equal(first.output, '2\n', 'bash is the second process of its own pid namespace');
    await first.dispose();
    await waitUntilGone(marker);
    const second = await kit.run('test ! -e /tmp/left && test ! -e ~/left && echo fresh; echo $$', { session });
    assert.equal(second.output, 'fresh\n2\n', 'a pid namespace of its own again, and nothing the first command left');
    await second.dispose();
    end();
    await assertSessionGone(kit);
  },

  async 'a command of a kept sandbox stopped at its time limit ends with everything it started; the next runs in the same sandbox'(kit) {
    const { session, end } = newSession();
    const marker = `speculate-kept-timeout-${process.pid}-${Date.now()}`;
    const namespace = (await kit.runOnceIn(session, USER_NS)).trim();
    const stopped = await kit.run(`(exec -a ${marker} sleep 60) & exec -a ${marker} sleep 60`, { session, limits: { timeoutMs: 1500 } });
    assert.equal(stopped.timedOut, true);
    assert.deepEqual(stopped.changes, []);
    await stopped.dispose();
    await waitUntilGone(marker);
    assert.equal((await kit.runOnceIn(session, USER_NS)).trim(), namespace);
    end();
    await assertSessionGone(kit);
  },

  async 'aborting a command of a kept sandbox ends it at once; ending the speculation ends the keeper and every process'(kit) {
    const { session, end } = newSession();
    const marker = `speculate-kept-abort-${process.pid}-${Date.now()}`;
    const abort = new AbortController();
    const pending = kit.outcome(`echo x > written.txt; (exec -a ${marker} sleep 60) & exec -a ${marker} sleep 60`, { session, signal: abort.signal });
    for (let i = 0; i < 400 && processesWith(marker).length < 2; i++) await sleep(25);
    assert.equal(processesWith(marker).length, 2, 'the command runs');
    abort.abort();
    const outcome = await pending;
    assert.ok(!outcome.ok && outcome.aborted);
    await waitUntilGone(marker);
    // A command running when the speculation ends goes with the keeper.
    const late = `${marker}-late`;
    const running = kit.outcome(`exec -a ${late} sleep 60`, { session });
    for (let i = 0; i < 400 && processesWith(late).length === 0; i++) await sleep(25);
    assert.ok(processesWith(late).length > 0 && processesWith(kit.sandboxTmp).length > 0, 'the command and the keeper run');
    end();
    const ended = await running;
    assert.ok(!ended.ok && ended.aborted, 'the command ended with the speculation');
    await waitUntilGone(late);
    await assertSessionGone(kit);
    assert.equal(await kit.read('written.txt').catch(() => 'absent'), 'absent');
  },

  async 'a fork bomb in a kept sandbox ends as a process-limit problem, and the sandbox goes on'(kit) {
    const { session, end } = newSession();
    const marker = `speculate-kept-bomb-${process.pid}-${Date.now()}`;
    const limits = { maxProcesses: 32, timeoutMs: 30_000 };
    const namespace = (await kit.runOnceIn(session, USER_NS, limits)).trim();
    const bomb = await kit.run(`bomb() { bomb | bomb & }; bomb; sleep 25 # ${marker}`, { session, limits });
    assert.equal(bomb.timedOut, false, 'stopped by the process limit, not by the timer');
    assert.equal(bomb.problems[0]?.kind, 'limit', JSON.stringify(bomb.problems));
    assert.match(bomb.problems[0].detail, /the process limit, 32/);
    await bomb.dispose();
    await waitUntilGone(marker);
    assert.equal((await kit.runOnceIn(session, USER_NS, limits)).trim(), namespace);
    end();
    await assertSessionGone(kit);
  },

  async "a session prepared ahead has its keeper running before the first command, which runs inside it, and takes in the engine's writes ahead of the next; once ended, nothing of it is left"(kit) {
    const { session, end } = newSession();
    kit.sandbox.prepareSession(session, kit.workspace, { timeoutMs: 20_000, maxOutputBytes: 0, maxWriteBytes: 64 * 1024 * 1024 });
    for (let i = 0; i < 400 && keeperProcesses(kit.sandboxTmp).length === 0; i++) await sleep(25);
    assert.ok(keeperProcesses(kit.sandboxTmp).length > 0, 'the keeper runs before any command');
    const first = await kit.runOnceIn(session, USER_NS);
    // The engine wrote a file after the first command: the layer takes it in ahead of the next one.
    const layer: SandboxLayer = { files: [{ path: 'ahead.txt', contentPath: await kit.blob('ahead\n'), mode: 0o644 }], deletedFiles: [], deletedDirs: [] };
    await kit.sandbox.prepareSession(session, kit.workspace, { timeoutMs: 20_000, maxOutputBytes: 0, maxWriteBytes: 64 * 1024 * 1024 }, layer);
    const second = await kit.run(`${USER_NS}; cat ahead.txt`, { session, layer });
    assert.equal(second.output, `${first}ahead\n`, 'the prepared sandbox, and the file taken in ahead');
    await second.dispose();
    end();
    await kit.sandbox.sessionEnded(session.id);
    assert.deepEqual(keeperProcesses(kit.sandboxTmp), [], 'no process is left once the session has ended');
    await kit.assertNothingLeft();
  },

  async "when the keeper cannot start, a session's commands run in fresh sandboxes, each correct"(kit) {
    const broken = kit.sandboxWith({ keeper: '/bin/false' });
    const { session, end } = newSession();
    const first = await kit.run('echo one > one.txt', { session }, broken);
    assert.deepEqual(sorted(first.changes), ['write one.txt 644']);
    await first.dispose();
    const second = await kit.run('echo two > two.txt', { session }, broken);
    assert.deepEqual(sorted(second.changes), ['write two.txt 644']);
    await second.dispose();
    assert.match(broken.keptSandboxUnusable ?? '', /keeper/);
    end();
    await kit.assertNothingLeft();
  },
};
