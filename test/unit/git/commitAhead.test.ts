// Commit ahead with real git in the namespace sandbox: a speculated commit applied on Tab equals
// the live one; the repository moving first is a conflict that changes nothing; nothing under the
// real .git changes before Tab; undo moves the refs back by the same compare-and-swap.
import * as assert from 'node:assert/strict';
import { readFile, utimes, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { undoGitMoves } from '../../../src/core/git/applyGitLayer';
import { assertSameCommit, git, GitKit, overlaySandboxAvailable } from './gitKit';

describe('commit ahead (real git, namespace sandbox)', function () {
  this.timeout(120_000);
  let kit: GitKit;
  let available = false;

  before(async () => {
    available = await overlaySandboxAvailable();
  });
  beforeEach(async function () {
    if (!available) this.skip();
    kit = await GitKit.create();
  });
  afterEach(async () => kit?.cleanup());

  it('a speculated commit applied on Tab equals the commit made live, and .git is untouched before Tab', async () => {
    await writeFile(path.join(kit.workspace, 'a.txt'), 'one\ntwo\n');
    const twin = kit.twin();
    const before = await kit.gitDigest();
    const speculated = await kit.open();
    const { result, absorbed } = await kit.ahead(speculated, "git add a.txt && git commit -q -m 'Add two'");
    assert.equal(result.exitCode, 0, result.output);
    assert.ok(absorbed?.ok, JSON.stringify(absorbed));
    assert.equal(await kit.gitDigest(), before, 'the real .git changed before Tab');
    const preview = absorbed.ok ? absorbed.preview : null;
    assert.ok(preview);
    assert.match(preview.moves.join('\n'), /^main: [0-9a-f]{7} → [0-9a-f]{7}$/m);
    assert.match(preview.log, /Add two/);
    assert.match(preview.log, /Author: Ada Tester <ada@example.com>/);
    assert.match(preview.log, /a\.txt \| 1 \+/);
    assert.match(preview.diff, /\+two/);
    assert.match(preview.note, /dates/);

    git(twin, 'add', 'a.txt');
    git(twin, 'commit', '-q', '-m', 'Add two');
    const applied = await speculated.apply({ lock: kit.lock(), journalDir: kit.state });
    assert.ok(applied?.ok, JSON.stringify(applied));
    assert.equal(applied.indexUpdated, true);
    assertSameCommit(kit.workspace, twin);
    assert.equal(git(kit.workspace, 'status', '--porcelain'), '', 'the index matches the commit');
    assert.equal(git(kit.workspace, 'fsck', '--no-dangling'), '');
    assert.match(git(kit.workspace, 'reflog', '-1', 'main'), /commit: Add two/);
    await speculated.dispose();
  });

  it('a later command sees the earlier speculated commit (the layer stacks)', async () => {
    const speculated = await kit.open();
    await writeFile(path.join(kit.workspace, 'b.txt'), 'b\n');
    assert.equal((await kit.ahead(speculated, "git add b.txt && git commit -q -m 'Add b'")).result.exitCode, 0);
    const second = await kit.ahead(speculated, "git log --format=%s -1 && git switch -q -c feature && git tag v1");
    assert.equal(second.result.exitCode, 0, second.result.output);
    assert.match(second.result.output, /Add b/);
    const applied = await speculated.apply({ lock: kit.lock(), journalDir: kit.state });
    assert.ok(applied?.ok, JSON.stringify(applied));
    assert.equal(git(kit.workspace, 'symbolic-ref', 'HEAD'), 'refs/heads/feature');
    assert.equal(git(kit.workspace, 'rev-parse', 'feature'), git(kit.workspace, 'rev-parse', 'main'));
    assert.equal(git(kit.workspace, 'rev-parse', 'v1'), git(kit.workspace, 'rev-parse', 'main'));
    assert.equal(git(kit.workspace, 'log', '-1', '--format=%s'), 'Add b');
    await speculated.dispose();
  });

  it('the user committing first makes Tab a conflict that changes nothing', async () => {
    await writeFile(path.join(kit.workspace, 'a.txt'), 'one\ntwo\n');
    const speculated = await kit.open();
    assert.equal((await kit.ahead(speculated, "git commit -q -am 'Ahead'")).result.exitCode, 0);
    git(kit.workspace, 'commit', '-q', '-am', 'Mine');
    const before = await kit.gitDigest();
    const applied = await speculated.apply({ lock: kit.lock(), journalDir: kit.state });
    assert.ok(applied && !applied.ok);
    assert.match(applied.conflict, /main moved to [0-9a-f]{7} since the speculation looked/);
    assert.equal(await kit.gitDigest(), before);
    assert.equal(git(kit.workspace, 'log', '-1', '--format=%s'), 'Mine');
    await speculated.dispose();
  });

  it('the user switching branches first makes Tab a conflict that changes nothing', async () => {
    await writeFile(path.join(kit.workspace, 'a.txt'), 'one\ntwo\n');
    const speculated = await kit.open();
    assert.equal((await kit.ahead(speculated, "git commit -q -am 'Ahead'")).result.exitCode, 0);
    git(kit.workspace, 'switch', '-q', '-c', 'elsewhere');
    const before = await kit.gitDigest();
    const applied = await speculated.apply({ lock: kit.lock(), journalDir: kit.state });
    assert.ok(applied && !applied.ok);
    assert.match(applied.conflict, /HEAD is now on branch elsewhere/);
    assert.equal(await kit.gitDigest(), before);
    await speculated.dispose();
  });

  it('the user staging first: the commit applies, the index stays theirs and Tab says so', async () => {
    await writeFile(path.join(kit.workspace, 'a.txt'), 'one\ntwo\n');
    await writeFile(path.join(kit.workspace, 'c.txt'), 'c\n');
    const speculated = await kit.open();
    assert.equal((await kit.ahead(speculated, "git commit -q -am 'Ahead'")).result.exitCode, 0);
    git(kit.workspace, 'add', 'c.txt');
    const index = await readFile(path.join(kit.workspace, '.git', 'index'));
    const applied = await speculated.apply({ lock: kit.lock(), journalDir: kit.state });
    assert.ok(applied?.ok);
    assert.equal(applied.indexUpdated, false);
    assert.match(applied.indexNote ?? '', /you changed it/);
    assert.deepEqual(await readFile(path.join(kit.workspace, '.git', 'index')), index);
    await speculated.dispose();
  });

  it('a refresh of the index (git status after a touch) is not a change: Tab still updates the index', async () => {
    await writeFile(path.join(kit.workspace, 'b.txt'), 'b\n');
    git(kit.workspace, 'add', 'b.txt');
    git(kit.workspace, 'commit', '-q', '-m', 'b');
    await writeFile(path.join(kit.workspace, 'a.txt'), 'one\ntwo\n');
    await writeFile(path.join(kit.workspace, 'c.txt'), 'c\n');
    const speculated = await kit.open();
    assert.equal((await kit.ahead(speculated, "git add c.txt && git commit -q -am 'Ahead'")).result.exitCode, 0);
    const index = await readFile(path.join(kit.workspace, '.git', 'index'));
    // b.txt unchanged but touched: the refresh rewrites only its cached stat data.
    await utimes(path.join(kit.workspace, 'b.txt'), new Date(Date.now() + 5000), new Date(Date.now() + 5000));
    git(kit.workspace, 'update-index', '-q', '--refresh');
    assert.notDeepEqual(await readFile(path.join(kit.workspace, '.git', 'index')), index, 'the refresh rewrote the index');
    const applied = await speculated.apply({ lock: kit.lock(), journalDir: kit.state });
    assert.ok(applied?.ok);
    assert.equal(applied.indexUpdated, true, applied.indexNote);
    assert.equal(git(kit.workspace, 'status', '--porcelain'), '');
    await speculated.dispose();
  });

  it('a failing pre-commit hook fails the command with its output and adds nothing to the layer', async () => {
    await writeFile(path.join(kit.workspace, '.git', 'hooks', 'pre-commit'), '#!/bin/sh\necho "lint: 3 problems in a.txt"\nexit 1\n', { mode: 0o755 });
    await writeFile(path.join(kit.workspace, 'a.txt'), 'one\ntwo\n');
    const speculated = await kit.open();
    const before = await kit.gitDigest();
    const { result, absorbed } = await kit.ahead(speculated, "git commit -q -am 'Ahead'");
    assert.notEqual(result.exitCode, 0);
    assert.match(result.output, /lint: 3 problems in a\.txt/);
    assert.equal(absorbed, undefined);
    assert.equal(await speculated.hasChanges(), false);
    assert.equal(await kit.gitDigest(), before);
    await speculated.dispose();
  });

  it('undo moves the refs and HEAD back, and refuses when they moved since', async () => {
    await writeFile(path.join(kit.workspace, 'a.txt'), 'one\ntwo\n');
    const first = git(kit.workspace, 'rev-parse', 'main');
    const speculated = await kit.open();
    assert.equal((await kit.ahead(speculated, "git switch -q -c topic && git commit -q -am 'Ahead'")).result.exitCode, 0);
    const applied = await speculated.apply({ lock: kit.lock(), journalDir: kit.state });
    assert.ok(applied?.ok, JSON.stringify(applied));
    assert.equal(git(kit.workspace, 'symbolic-ref', 'HEAD'), 'refs/heads/topic');
    const undone = await undoGitMoves({ repository: speculated.repository, moves: applied.moves, lock: kit.lock(), journalDir: kit.state });
    assert.deepEqual(undone, { ok: true });
    assert.equal(git(kit.workspace, 'symbolic-ref', 'HEAD'), 'refs/heads/main');
    assert.equal(git(kit.workspace, 'rev-parse', 'main'), first);
    assert.equal(git(kit.workspace, 'branch', '--list', 'topic'), '');
    const again = await undoGitMoves({ repository: speculated.repository, moves: applied.moves, lock: kit.lock(), journalDir: kit.state });
    assert.ok(!again.ok);
    await speculated.dispose();
  });

  it('what a command leaves in .git is checked before it joins the layer: a ref over a missing object, a damaged object, an index naming a missing blob', async () => {
    const speculated = await kit.open();
    const ghost = 'deadbeef'.repeat(5);
    const rigged = [
      [`echo ${ghost} > .git/refs/heads/evil`, /reaches objects that do not exist/],
      ['mkdir -p .git/objects/ab && echo garbage > .git/objects/ab/' + 'c'.repeat(38), /damaged object/],
      [`git update-index --add --cacheinfo 100644,${ghost},ghost.txt`, /names an object that does not exist/],
      ['git config user.name Mallory', /wrote \.git\/config/],
      ['rm .git/description', /it removed \.git\/description/],
    ] as const;
    for (const [command, reason] of rigged) {
      const { result, absorbed } = await kit.ahead(speculated, command);
      assert.equal(result.exitCode, 0, `${command}: ${result.output}`);
      assert.ok(absorbed && !absorbed.ok, command);
      assert.match(absorbed.detail, reason, command);
    }
    assert.equal(await speculated.hasChanges(), false, 'nothing joined the layer');
    await speculated.dispose();
  });
});
