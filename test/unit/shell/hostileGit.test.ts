// A rigged repository: every program slot git's config and attributes offer points at a marker
// program, in the repository, in a submodule and in a nested repository. Each git command the
// classifier accepts runs through the real run_shell_command path as an unattended command would:
// no marker may appear, the index must keep its bytes, and nothing from outside may be shown.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { NodeProcessRunner } from '../../../src/core/process/nodeProcessRunner';
import { isShellCommandReadOnly } from '../../../src/core/shell';
import { runShellCommandTool } from '../../../src/core/tools/runShellCommand';
import { makeWorkspace, type TempWorkspace } from '../tools/workspaceFixture';

const OUTSIDE_CONFIG_SECRET = 'sk-outside-config-token';

describe('git in a hostile repository, run without approval', () => {
  let ws: TempWorkspace;
  let marks: string;
  const processRunner = new NodeProcessRunner({ killGraceMs: 200 });

  /** This process's environment without git variables or the user's git config (setup only). */
  function setupEnv(): Record<string, string> {
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('GIT_') && value !== undefined) env[key] = value;
    return { ...env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' };
  }

  function git(cwd: string, ...args: string[]): string {
    return execFileSync('git', ['-c', 'protocol.file.allow=always', ...args], { cwd, env: setupEnv(), stdio: 'pipe', encoding: 'utf8' });
  }

  function plant(name: string): string {
    const file = path.join(ws.outside, 'plants', name);
    mkdirSync(path.dirname(file), { recursive: true });
    // Prints what a well-behaved program would (the file, for textconv and filters), and leaves a mark.
    writeFileSync(file, `#!/bin/sh\necho ${name} >> '${marks}'\ncat "$1" 2>/dev/null || cat\nexit 0\n`);
    chmodSync(file, 0o755);
    return file;
  }

  /** Plants every program slot in the repository at `dir`, its names tagged with `tag`. */
  function rig(dir: string, tag: string): void {
    git(dir, 'config', 'core.fsmonitor', plant(`${tag}fsmonitor`));
    git(dir, 'config', 'diff.external', plant(`${tag}extdiff`));
    git(dir, 'config', 'diff.evil.textconv', plant(`${tag}textconv`));
    git(dir, 'config', 'diff.cmd.command', plant(`${tag}diffcommand`));
    git(dir, 'config', 'filter.evil.clean', plant(`${tag}clean`));
    git(dir, 'config', 'filter.evil.smudge', plant(`${tag}smudge`));
    git(dir, 'config', 'filter.evil.process', plant(`${tag}process`));
    git(dir, 'config', 'merge.evil.driver', plant(`${tag}merge`));
    // -m and --diff-merges=on then re-merge, which runs the merge driver.
    git(dir, 'config', 'log.diffMerges', 'remerge');
    git(dir, 'config', 'core.pager', plant(`${tag}pager`));
    git(dir, 'config', 'pager.log', plant(`${tag}pagerlog`));
    git(dir, 'config', 'log.showSignature', 'true');
    git(dir, 'config', 'gpg.program', plant(`${tag}gpg`));
    git(dir, 'config', 'diff.submodule', 'diff');
    git(dir, 'config', 'status.submoduleSummary', 'true');
    const hooks = path.join(ws.outside, 'plants', `${tag}hooks`);
    mkdirSync(hooks, { recursive: true });
    writeFileSync(path.join(hooks, 'post-index-change'), `#!/bin/sh\necho ${tag}hook >> '${marks}'\n`);
    chmodSync(path.join(hooks, 'post-index-change'), 0o755);
    git(dir, 'config', 'core.hooksPath', hooks);
    const info = git(dir, 'rev-parse', '--git-path', 'info').trim();
    mkdirSync(path.resolve(dir, info), { recursive: true });
    writeFileSync(path.join(path.resolve(dir, info), 'attributes'), '*.txt diff=evil filter=evil merge=evil\n*.dat diff=cmd\n');
  }

  /** A repository at `dir` with two commits, a merge, and files each driver applies to. */
  function makeRepo(dir: string): void {
    mkdirSync(dir, { recursive: true });
    git(dir, 'init', '-q', '-b', 'main');
    git(dir, 'config', 'user.email', 'test@example.com');
    git(dir, 'config', 'user.name', 'Test');
    writeFileSync(path.join(dir, 'f.txt'), 'one\ntwo\nthree\nfour\nfive\n');
    writeFileSync(path.join(dir, 'g.dat'), 'data\n');
    // Never changed: with a new mtime git must re-read it through its filter to compare.
    writeFileSync(path.join(dir, 'same.txt'), 'same\n');
    writeFileSync(path.join(dir, '.gitattributes'), '*.txt diff=evil filter=evil\n');
    git(dir, 'add', '.');
    git(dir, 'commit', '-qm', 'one');
    git(dir, 'checkout', '-qb', 'side');
    writeFileSync(path.join(dir, 'f.txt'), 'side\ntwo\nthree\nfour\nfive\n');
    git(dir, 'commit', '-qam', 'side');
    git(dir, 'checkout', '-q', 'main');
    // Both sides change f.txt (apart), so re-merging it runs a merge driver.
    writeFileSync(path.join(dir, 'f.txt'), 'one\ntwo\nthree\nfour\nmain\n');
    writeFileSync(path.join(dir, 'g.dat'), 'data\nmain\n');
    git(dir, 'commit', '-qam', 'main');
    git(dir, 'merge', '-q', '--no-edit', 'side');
    writeFileSync(path.join(dir, 'f.txt'), 'side\ntwo\nthree\nfour\nmain\nworking\n');
    writeFileSync(path.join(dir, 'g.dat'), 'data\nmain\nworking\n');
  }

  /** New mtimes for unchanged tracked files: git must re-read (and filter) them to compare. */
  function makeStatDirty(): void {
    const when = Date.now() / 1000 + 120;
    for (const file of ['same.txt', 'g.dat', 'sub/same.txt', 'nested/same.txt']) {
      if (existsSync(path.join(ws.root, file))) utimesSync(path.join(ws.root, file), when, when);
    }
  }

  function ran(): string[] {
    const text = existsSync(marks) ? readFileSync(marks, 'utf8') : '';
    rmSync(marks, { force: true });
    return [...new Set(text.split('\n').filter(Boolean))].sort();
  }

  async function unattended(command: string): Promise<{ ok: boolean; output: string }> {
    return runShellCommandTool.execute({ command }, ws.context({ processRunner, approvedAsReadOnly: true }));
  }

  before(async function () {
    this.timeout(30_000);
    ws = await makeWorkspace();
    marks = path.join(ws.outside, 'marks');
    // The submodule's source, outside the workspace, rigged in its own config once it is cloned.
    makeRepo(path.join(ws.outside, 'subsource'));
    makeRepo(ws.root);
    git(ws.root, 'submodule', '-q', 'add', path.join(ws.outside, 'subsource'), 'sub');
    git(ws.root, 'commit', '-qm', 'add the submodule');
    writeFileSync(path.join(ws.root, 'sub', 'f.txt'), 'sub working\n');
    makeRepo(path.join(ws.root, 'nested'));
    rig(ws.root, '');
    rig(path.join(ws.root, 'sub'), 'sub-');
    rig(path.join(ws.root, 'nested'), 'nested-');
    // A config include can name any file; `git config --list` would print what it parses.
    writeFileSync(path.join(ws.outside, 'credentials'), `[default]\n\ttoken = ${OUTSIDE_CONFIG_SECRET}\n`);
    git(ws.root, 'config', 'include.path', path.join(ws.outside, 'credentials'));
    writeFileSync(path.join(ws.outside, 'revs'), `${OUTSIDE_CONFIG_SECRET}\n`);
    git(ws.root, 'config', 'blame.ignoreRevsFile', path.join(ws.outside, 'revs'));
    ran();
  });

  after(() => ws.cleanup());

  it('the traps are real: run as git normally would, the planted programs run', async function () {
    this.timeout(20_000);
    const run = (command: string) => {
      try {
        execFileSync('bash', ['-c', command], { cwd: ws.root, env: setupEnv(), stdio: 'pipe' });
      } catch {
        // only the marks matter
      }
      return ran();
    };
    makeStatDirty();
    assert.ok(run('git status').includes('fsmonitor'));
    makeStatDirty();
    const status = run('git -c core.fsmonitor=false status');
    for (const program of ['process', 'sub-process']) assert.ok(status.includes(program), `${program} in ${status.join(', ')}`);
    assert.ok(run('git diff HEAD~1 HEAD').includes('extdiff'));
    assert.ok(run('git log -p -1 --no-ext-diff side').includes('textconv'));
    assert.ok(run('git diff --no-ext-diff --no-textconv --submodule=diff').includes('sub-extdiff'));
    assert.ok(run('git status -vv').includes('textconv'));
    assert.ok(run('git -C nested status').includes('nested-process'));
    assert.ok(run('git log --remerge-diff -1 --no-ext-diff --no-textconv HEAD~1').includes('merge'));
    assert.ok(run('git log -m -p -1 --no-ext-diff --no-textconv HEAD~1').includes('merge'), 'log.diffMerges=remerge makes -m re-merge');
  });

  const accepted = [
    'git status',
    'git status --porcelain',
    'git -C sub status',
    'git -C nested status --short',
    'git diff',
    'git diff HEAD~1',
    'git diff --cached',
    'git diff --stat',
    'git diff --stat HEAD~2',
    'git diff HEAD~1 HEAD -- g.dat',
    'git diff --submodule=log',
    'git diff --submodule',
    'git show',
    'git show HEAD~1',
    'git show :/side',
    'git show HEAD:f.txt',
    'git log -p -2',
    'git log -p --cc -1',
    'git log --diff-merges=separate -p -1',
    'git log -m -p -1',
    'git log -m -p -1 HEAD~1',
    'git show -m HEAD~1',
    'git log --diff-merges=on -p -1 HEAD~1',
    'git log --stat --oneline',
    'git log -L1,2:f.txt',
    'git whatchanged -p -1',
    'git blame f.txt',
    'git annotate g.dat',
    'git grep -n one',
    'git ls-files -m',
    'git stash list -p',
    'git reflog -p -2',
    'git reflog show -p -1',
    'git branch -vv',
    'git config --list',
    'git config --get default.token',
    'git remote -v',
    'git -C sub log -p -1',
    'git -C sub diff',
    'env git diff',
    "bash -c 'git diff'",
    'command git diff',
    'nice git log -p -1',
    'timeout 10 git status',
  ];

  for (const command of accepted) {
    it(`runs no planted program for ${JSON.stringify(command)} and leaves the index as it was`, async function () {
      this.timeout(20_000);
      assert.equal((await isShellCommandReadOnly(command)).readOnly, true, 'the classifier accepts it');
      makeStatDirty();
      const indexes = ['.git/index', '.git/modules/sub/index', 'nested/.git/index'].map((file) => readFileSync(path.join(ws.root, file)));
      const result = await unattended(command);
      assert.deepEqual(ran(), [], `${command}: ${result.output.slice(0, 400)}`);
      assert.doesNotMatch(result.output, /git was not run/);
      assert.ok(!result.output.includes(OUTSIDE_CONFIG_SECRET), 'nothing from outside the workspace is shown');
      const after = ['.git/index', '.git/modules/sub/index', 'nested/.git/index'].map((file) => readFileSync(path.join(ws.root, file)));
      assert.deepEqual(after, indexes, 'the index files keep their bytes');
    });
  }

  it('still shows real patches (not an empty or program-made diff)', async function () {
    this.timeout(20_000);
    const diff = await unattended('git diff -- f.txt');
    assert.match(diff.output, /^\+working$/m);
    const log = await unattended('git log -p -1 HEAD~1 -- g.dat');
    assert.match(log.output, /^\+main$/m);
    const blame = await unattended('git blame f.txt');
    assert.match(blame.output, /Test/);
    assert.deepEqual(ran(), []);
  });

  const refused: Array<[string, RegExp]> = [
    ['git diff --submodule=diff', /submodule's own diff programs/],
    ['git log --remerge-diff -1', /merge drivers/],
    ['git log --diff-merges=remerge -p', /merge drivers/],
    ['git log --diff-merges=r -p', /merge drivers/],
    ['git log --diff-merges remerge -p', /merge drivers/],
    ['git status -v', /textconv/],
    ['git status -sv', /textconv/],
    ['git status --verbose', /textconv/],
    ['git status --verb', /textconv/],
    ['/usr/bin/git diff', /safe git wrapper/],
    ['git log --ext-diff -p', /external diff/],
    ['git log --textconv -p', /textconv/],
    ['git -c diff.external=x diff', /overrides configuration/],
  ];
  for (const [command, why] of refused) {
    it(`refuses ${JSON.stringify(command)}`, async () => {
      const verdict = await isShellCommandReadOnly(command);
      assert.equal(verdict.readOnly, false);
      assert.match(verdict.reason, why);
    });
  }

  it('refuses to show a work tree or repository data from outside the workspace', async function () {
    this.timeout(20_000);
    // A repository elsewhere that the workspace's .git file or core.worktree points git at.
    const elsewhere = path.join(ws.outside, 'private');
    mkdirSync(elsewhere);
    git(elsewhere, 'init', '-q');
    writeFileSync(path.join(elsewhere, 'secret.txt'), 'private text\n');
    git(elsewhere, 'add', '.');
    git(elsewhere, '-c', 'user.email=a@b', '-c', 'user.name=a', 'commit', '-qm', 'private');
    const planted = path.join(ws.root, 'planted');
    mkdirSync(planted);
    writeFileSync(path.join(planted, '.git'), `gitdir: ${path.join(elsewhere, '.git')}\n`);
    const viaGitFile = await unattended('git -C planted log -p');
    assert.match(viaGitFile.output, /git was not run: the repository's (data|work tree)/);
    assert.ok(!viaGitFile.output.includes('private text'));

    git(path.join(ws.root, 'nested'), 'config', 'core.worktree', elsewhere);
    try {
      const viaWorktree = await unattended('git -C nested status');
      assert.match(viaWorktree.output, /git was not run: the repository's work tree/);
    } finally {
      git(path.join(ws.root, 'nested'), 'config', '--unset', 'core.worktree');
    }
    assert.deepEqual(ran(), []);
  });

  it('refuses a repository that borrows objects from outside the workspace, or whose object store leads out through a symlink', async function () {
    this.timeout(30_000);
    const BORROWED = 'borrowed private text';
    const lender = path.join(ws.outside, 'lender');
    mkdirSync(lender);
    git(lender, 'init', '-q');
    writeFileSync(path.join(lender, 'private.txt'), `${BORROWED}\n`);
    git(lender, 'add', '.');
    git(lender, '-c', 'user.email=a@b', '-c', 'user.name=a', 'commit', '-qm', 'private');
    const borrower = path.join(ws.root, 'borrower');
    makeRepo(borrower);
    const objects = path.join(borrower, '.git', 'objects');
    const alternates = path.join(objects, 'info', 'alternates');
    const dump = 'git -C borrower cat-file --batch-all-objects --batch';
    // The trap is real: with the lender's objects borrowed, git itself prints the private text.
    writeFileSync(alternates, `${path.join(lender, '.git', 'objects')}\n`);
    assert.match(execFileSync('git', ['-C', borrower, 'cat-file', '--batch-all-objects', '--batch'], { encoding: 'utf8' }), new RegExp(BORROWED));
    try {
      for (const line of [path.join(lender, '.git', 'objects'), path.relative(objects, path.join(lender, '.git', 'objects'))]) {
        writeFileSync(alternates, `# borrowed\n${line}\n`);
        const result = await unattended(dump);
        assert.match(result.output, /git was not run: .*borrows objects from .*lender.*outside the workspace/, line);
        assert.ok(!result.output.includes(BORROWED), line);
      }

      // Borrowing from a repository inside the workspace is what `git clone --shared` of a
      // neighbour does: allowed.
      writeFileSync(alternates, `${path.join(ws.root, 'nested', '.git', 'objects')}\n`);
      const inside = await unattended('git -C borrower log --oneline -1');
      assert.ok(!inside.output.includes('git was not run'), inside.output);
      rmSync(alternates);

      // A pack folder that is a link to the lender's.
      const pack = path.join(objects, 'pack');
      rmSync(pack, { recursive: true, force: true });
      git(lender, 'gc', '-q');
      symlinkSync(path.join(lender, '.git', 'objects', 'pack'), pack);
      const linked = await unattended(dump);
      assert.match(linked.output, /git was not run: .*symlink/);
      assert.ok(!linked.output.includes(BORROWED));
      rmSync(pack);
      mkdirSync(pack);

      // A checked-out submodule that borrows from outside stops git in the superproject too.
      const subObjects = git(ws.root, '-C', 'sub', 'rev-parse', '--path-format=absolute', '--git-common-dir').trim();
      const subAlternates = path.join(subObjects, 'objects', 'info', 'alternates');
      writeFileSync(subAlternates, `${path.join(lender, '.git', 'objects')}\n`);
      try {
        const status = await unattended('git status');
        assert.match(status.output, /git was not run: .*submodule sub.*borrows objects/);
      } finally {
        rmSync(subAlternates);
      }
    } finally {
      rmSync(borrower, { recursive: true, force: true });
    }

    // A linked worktree in the workspace that a repository elsewhere registered is that
    // repository's own: its objects are read as before.
    git(lender, 'worktree', 'add', '-q', path.join(ws.root, 'linked'));
    try {
      const linked = await unattended('git -C linked log --oneline -1');
      assert.match(linked.output, /private/);
      assert.doesNotMatch(linked.output, /git was not run/);
    } finally {
      git(lender, 'worktree', 'remove', '--force', path.join(ws.root, 'linked'));
    }
    assert.deepEqual(ran(), []);
  });
});
