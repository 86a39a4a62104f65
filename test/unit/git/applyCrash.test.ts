// A crash at each step of a commit-ahead accept (SIGKILL of the accepting process): every ref is
// wholly old or wholly new, HEAD never points at a branch that does not exist, the repository
// passes fsck, and the recovery the next accept runs leaves no lock behind that would stop git.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { CheckpointStore } from '../../../src/core/checkpoints';
import { recoverGitApply } from '../../../src/core/git/applyGitLayer';
import { git, GitKit, overlaySandboxAvailable } from './gitKit';

const CHILD = path.join(__dirname, 'applyCrashChild.js');
/** Each step of the accept, and what the refs are after a crash right at it. */
const STEPS: { step: string; refs: 'old' | 'new'; head: 'old' | 'new' }[] = [
  { step: 'objects', refs: 'old', head: 'old' },
  { step: 'locked', refs: 'old', head: 'old' },
  { step: 'refs', refs: 'new', head: 'old' },
  { step: 'head', refs: 'new', head: 'new' },
  { step: 'index', refs: 'new', head: 'new' },
];

describe('commit ahead: a crash during the accept (SIGKILL at each step)', function () {
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

  for (const { step, refs, head } of STEPS) {
    // HEAD only moves with switch -c; committing on the current branch has no head step.
    const forms = step === 'head' ? (['switch -c'] as const) : (['switch -c', 'commit on the branch'] as const);
    for (const form of forms) {
      it(`at "${step}" (${form}): refs wholly ${refs}, HEAD ${head}, no lock left after recovery`, async function () {
        writeFileSync(path.join(kit.workspace, 'a.txt'), 'one\ntwo\n');
        const oldMain = git(kit.workspace, 'rev-parse', 'main');
        const command = form === 'switch -c' ? "git switch -q -c topic && git commit -q -am 'Ahead'" : "git commit -q -am 'Ahead'";
        const branch = form === 'switch -c' ? 'topic' : 'main';
        const child = spawnSync(process.execPath, [CHILD, kit.workspace, kit.state, step, command], { encoding: 'utf8' });
        assert.equal(child.signal, 'SIGKILL', `the child did not die at ${step}: ${child.stdout}${child.stderr}`);
        const speculated = JSON.parse(child.stdout.split('\n')[0]) as { refs: { name: string; oid: string }[] };
        const newValue = speculated.refs.find((ref) => ref.name === `refs/heads/${branch}`)!.oid;

        await recoverGitApply(kit.state);
        const locks = spawnSync('find', [path.join(kit.workspace, '.git'), '-name', '*.lock'], { encoding: 'utf8' }).stdout.trim();
        assert.equal(locks, '', 'a lock file was left behind');
        const now = spawnSync('git', ['rev-parse', '--verify', '-q', `refs/heads/${branch}`], { cwd: kit.workspace, encoding: 'utf8' }).stdout.trim();
        const expectedOld = branch === 'main' ? oldMain : '';
        assert.equal(now, refs === 'new' ? newValue : expectedOld);
        assert.equal(git(kit.workspace, 'rev-parse', 'main'), branch === 'main' && refs === 'new' ? newValue : oldMain);
        const headRef = git(kit.workspace, 'symbolic-ref', 'HEAD');
        assert.equal(headRef, form === 'switch -c' && head === 'new' ? 'refs/heads/topic' : 'refs/heads/main');
        assert.ok(existsSync(path.join(kit.workspace, '.git', headRef)) || git(kit.workspace, 'rev-parse', '--verify', '-q', headRef) !== '');
        assert.equal(spawnSync('git', ['fsck', '--no-dangling'], { cwd: kit.workspace, encoding: 'utf8' }).status, 0);
        // git works again: a live commit goes through.
        git(kit.workspace, 'commit', '-q', '--allow-empty', '-m', 'after the crash');
      });
    }
  }

  it('the next start (checkpoint recovery) removes the HEAD.lock an accept died holding', async () => {
    writeFileSync(path.join(kit.workspace, 'a.txt'), 'one\ntwo\n');
    const store = await CheckpointStore.open({ stateDir: kit.state, workspaceRoot: kit.workspace });
    const child = spawnSync(process.execPath, [CHILD, kit.workspace, store.journalsDir, 'locked', "git switch -q -c topic && git commit -q -am 'Ahead'"], { encoding: 'utf8' });
    assert.equal(child.signal, 'SIGKILL', child.stderr);
    assert.ok(existsSync(path.join(kit.workspace, '.git', 'HEAD.lock')), 'the accept died holding HEAD.lock');
    const report = await (await CheckpointStore.open({ stateDir: kit.state, workspaceRoot: kit.workspace })).recover();
    assert.deepEqual(report.failures, []);
    assert.equal(existsSync(path.join(kit.workspace, '.git', 'HEAD.lock')), false);
    assert.equal(git(kit.workspace, 'symbolic-ref', 'HEAD'), 'refs/heads/main');
    git(kit.workspace, 'commit', '-q', '-am', 'live after the crash');
  });
});
