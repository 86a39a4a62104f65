// Commit ahead through the engine's accept flow (SpeculationAcceptance, as Tab runs it): the commit
// and the file edit are applied together and the accept line knows what moved; the user committing
// first turns Tab into a live run with a notice, nothing changed; a failing hook is a boundary whose
// detail carries the hook's output; the checkpoint's undo and redo move the branch by compare-and-swap.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { CheckpointStore } from '../../../src/core/checkpoints';
import { SpeculationAcceptance } from '../../../src/core/followup/acceptance';
import { LinuxSandbox } from '../../../src/core/sandbox/linuxSandbox';
import { makeWorld, type EngineWorld } from '../engine/engineKit';
import { git, treeDigest, overlaySandboxAvailable } from './gitKit';

describe('commit ahead through the accept flow', function () {
  this.timeout(120_000);
  let world: EngineWorld;
  let available = false;
  before(async () => {
    available = await overlaySandboxAvailable();
  });
  beforeEach(async function () {
    if (!available) this.skip();
    world = await makeWorld({ 'a.txt': 'one\n' });
    world.services.toolContext.shellSandbox = new LinuxSandbox({ tmpRoot: world.tmpRoot, hostEnv: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: path.join(world.parent, 'home') } });
    git(world.root, 'init', '-q', '-b', 'main');
    git(world.root, 'config', 'user.name', 'Ada Tester');
    git(world.root, 'config', 'user.email', 'ada@example.com');
    git(world.root, 'add', '-A');
    git(world.root, 'commit', '-q', '-m', 'first');
  });
  afterEach(async () => world?.dispose());

  const editAndCommit = () =>
    world.server.setScript([
      { toolCalls: [{ name: 'edit', arguments: { file_path: 'a.txt', old_string: 'one', new_string: 'one\ntwo' } }] },
      { toolCalls: [{ name: 'run_shell_command', arguments: { command: "git commit -q -am 'Add two'" } }] },
      { text: 'Committed.' },
    ]);
  const store = () => CheckpointStore.open({ stateDir: path.join(world.parent, 'state'), workspaceRoot: world.root });

  it('Tab applies the edit and the commit; the accept knows what moved; undo and redo move the branch', async () => {
    // The commit -a sees the speculated edit: the overlay is the work tree git reads in the sandbox.
    editAndCommit();
    const first = git(world.root, 'rev-parse', 'main');
    const speculation = world.speculate('edit and commit');
    const final = await speculation.done;
    assert.equal(final.status, 'completed', JSON.stringify(final.boundary));
    assert.match(final.commitAhead?.moves.join('\n') ?? '', /^main: [0-9a-f]{7} → [0-9a-f]{7}$/m);
    assert.match(final.commitAhead?.log ?? '', /Add two[\s\S]*a\.txt \| 1 \+/);
    const checkpoints = await store();
    const step = await new SpeculationAcceptance(speculation, false, { inject: () => ({ ok: true }), checkpoints }).start();
    assert.equal(step.kind, 'injected');
    if (step.kind !== 'injected') return;
    assert.deepEqual(step.run.applied, ['a.txt']);
    assert.match(step.run.committedAhead?.moved.join() ?? '', /^main: /);
    assert.equal(git(world.root, 'show', 'HEAD:a.txt'), 'one\ntwo');
    assert.equal(git(world.root, 'status', '--porcelain'), '');
    const id = step.run.checkpoint?.id;
    assert.ok(id);
    const undone = await checkpoints.undo(id);
    assert.ok(undone.ok);
    assert.deepEqual(undone.restored.sort(), ['.git/refs/heads/main', 'a.txt']);
    assert.equal(git(world.root, 'rev-parse', 'main'), first);
    assert.equal(await world.read('a.txt'), 'one\n');
    const redone = await checkpoints.redo(id);
    assert.ok(redone.ok);
    assert.equal(git(world.root, 'log', '-1', '--format=%s'), 'Add two');
    assert.equal(await world.read('a.txt'), 'one\ntwo\n');
  });

  it('a later command of the speculation sees the commit made ahead (git log, git status), read-only', async () => {
    world.server.setScript([
      { toolCalls: [{ name: 'edit', arguments: { file_path: 'a.txt', old_string: 'one', new_string: 'one\ntwo' } }] },
      { toolCalls: [{ name: 'run_shell_command', arguments: { command: "git commit -q -am 'Add two'" } }] },
      { toolCalls: [{ name: 'run_shell_command', arguments: { command: 'git log -1 --format=%s && git status --porcelain && echo status-done' } }] },
      { text: 'Done.' },
    ]);
    const final = await world.speculate('edit, commit and check').done;
    assert.equal(final.status, 'completed', JSON.stringify(final.boundary));
    const last = String(final.messages.filter((m) => m.role === 'tool').pop()?.content);
    assert.match(last, /Exit code: 0\nOutput:\nAdd two\nstatus-done/);
    assert.equal(git(world.root, 'log', '-1', '--format=%s'), 'first');
  });

  it('the user committing first: Tab runs the request live with a notice, and nothing changed', async () => {
    editAndCommit();
    const speculation = world.speculate('edit and commit');
    assert.equal((await speculation.done).status, 'completed');
    await world.write('b.txt', 'mine\n');
    git(world.root, 'add', 'b.txt');
    git(world.root, 'commit', '-q', '-m', 'Mine');
    const before = await treeDigest(world.root);
    const step = await new SpeculationAcceptance(speculation, false, { inject: () => ({ ok: true }), checkpoints: await store() }).start();
    assert.equal(step.kind, 'run_live');
    if (step.kind !== 'run_live') return;
    assert.match(step.notice, /commit made ahead was not applied, and nothing was changed: main moved to [0-9a-f]{7}/);
    assert.equal(step.checkpoint, null);
    assert.equal(await treeDigest(world.root), before);
  });

  it('a failing pre-commit hook stops the speculation with the hook\'s output, and .git stays as it was', async () => {
    await world.write('.git/hooks/pre-commit', '#!/bin/sh\necho "lint: a.txt has 2 problems" >&2\nexit 1\n');
    const { chmod } = await import('node:fs/promises');
    await chmod(path.join(world.root, '.git/hooks/pre-commit'), 0o755);
    const before = await treeDigest(path.join(world.root, '.git'));
    editAndCommit();
    const final = await world.speculate('edit and commit').done;
    assert.equal(final.status, 'boundary');
    assert.match(final.boundary?.detail ?? '', /failed ahead \(exit code 1\):\nlint: a\.txt has 2 problems/);
    assert.equal(final.commitAhead ?? null, null);
    assert.equal(await treeDigest(path.join(world.root, '.git')), before);
  });
});
