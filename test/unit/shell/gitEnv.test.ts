// A repository whose own config tries to make read-only git commands run programs: with the
// environment from gitNeutralisingEnv, the commands the classifier accepts run none of them.
import * as assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GIT_FILTER_SETTINGS_QUERY, gitNeutralisingEnv, isShellCommandReadOnly } from '../../../src/core/shell';

describe('shell classifier: git environment', () => {
  let root: string;
  let repo: string;
  let marks: string;
  /** What the shell tool does: list the filter settings, then build the environment from them. */
  let neutral: () => Record<string, string>;

  /** The environment of this process without git variables, and without the user's git config. */
  function baseEnv(): Record<string, string> {
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('GIT_') && value !== undefined) env[key] = value;
    return { ...env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' };
  }

  function git(...args: string[]): void {
    execFileSync('git', args, { cwd: repo, env: baseEnv(), stdio: 'pipe' });
  }

  /** Runs a command the way the shell tool does and returns which planted programs ran. */
  function run(command: string, env: Record<string, string>): string[] {
    rmSync(marks, { force: true });
    try {
      execFileSync('bash', ['-c', command], { cwd: repo, env, stdio: 'pipe' });
    } catch {
      // Exit codes do not matter here, only whether a planted program ran.
    }
    return existsSync(marks) ? [...new Set(readFileSync(marks, 'utf8').split('\n').filter(Boolean))].sort() : [];
  }

  before(() => {
    root = mkdtempSync(join(tmpdir(), 'shell-git-'));
    repo = join(root, 'repo');
    marks = join(root, 'marks');
    mkdirSync(repo);
    const plant = (name: string) => {
      const path = join(root, name);
      writeFileSync(path, `#!/bin/sh\necho ${name} >> '${marks}'\ncat "$1" 2>/dev/null\nexit 0\n`);
      chmodSync(path, 0o755);
      return path;
    };
    git('init', '-q');
    git('config', 'user.email', 'test@example.com');
    git('config', 'user.name', 'Test');
    writeFileSync(join(repo, 'f.txt'), 'one\n');
    writeFileSync(join(repo, 'g.txt'), 'same\n');
    git('add', 'f.txt', 'g.txt');
    git('commit', '-qm', 'one');
    writeFileSync(join(repo, 'f.txt'), 'one\ntwo\n');
    git('commit', '-qam', 'two');
    writeFileSync(join(repo, 'f.txt'), 'one\ntwo\nthree\n');
    // The hostile configuration: every program slot a read-only command may reach.
    mkdirSync(join(root, 'hooks'));
    const hook = plant('hooks/post-index-change');
    git('config', 'core.hooksPath', join(root, 'hooks'));
    git('config', 'core.fsmonitor', plant('fsmonitor'));
    git('config', 'diff.external', plant('extdiff'));
    git('config', 'diff.evil.textconv', plant('textconv'));
    git('config', 'core.pager', plant('pager'));
    git('config', 'log.showSignature', 'true');
    git('config', 'gpg.program', plant('gpg'));
    git('config', 'filter.evil.clean', plant('clean'));
    git('config', 'filter.evil.process', plant('process'));
    writeFileSync(join(repo, '.git', 'info', 'attributes'), 'f.txt diff=evil\ng.txt filter=evil\n');
    assert.ok(existsSync(hook));
    neutral = () => {
      const query = spawnSync('git', GIT_FILTER_SETTINGS_QUERY, { cwd: repo, env: { ...baseEnv(), ...gitNeutralisingEnv() }, encoding: 'utf8' });
      return { ...baseEnv(), ...gitNeutralisingEnv(query.stdout.split('\n')) };
    };
  });

  /** Rewrites g.txt with the same bytes: git must re-read it (running its clean filter) to compare. */
  const touchClean = 'cp g.txt g.tmp && mv g.tmp g.txt && ';

  after(() => rmSync(root, { recursive: true, force: true }));

  it('the planted programs do run without the neutralising environment (the trap is real)', () => {
    const status = run(`${touchClean}git status`, baseEnv());
    assert.ok(status.includes('fsmonitor') && status.includes('process'), status.join(', '));
    assert.ok(run(`${touchClean}git status`, baseEnv()).includes('process'), 'a stat-dirty file runs the filter driver');
    assert.deepEqual(run('git diff HEAD~1 HEAD', baseEnv()), ['extdiff']);
    assert.deepEqual(run('git log -p -1', baseEnv()), ['textconv']);
  });

  const accepted = [
    'git status',
    'git status --porcelain',
    'git diff --stat',
    'git diff --name-only HEAD~1',
    'git diff --no-ext-diff --no-textconv',
    'git diff --no-ext-diff --no-textconv HEAD~1 HEAD',
    'git log --oneline',
    'git log --stat -2',
    'git log -p --no-textconv -2',
    'git show --no-textconv',
    'git show HEAD:f.txt',
    'git blame --no-textconv f.txt',
    'git ls-files -m',
    'git grep -n one',
    'git branch -v',
  ];
  for (const command of accepted) {
    it(`runs no planted program for the accepted ${JSON.stringify(command)}`, async () => {
      assert.equal((await isShellCommandReadOnly(command)).readOnly, true, 'the classifier accepts it');
      assert.deepEqual(run(`${touchClean}${command}`, neutral()), []);
    });
  }

  it('listing the filter settings runs no planted program itself', () => {
    rmSync(marks, { force: true });
    const listed = spawnSync('git', GIT_FILTER_SETTINGS_QUERY, { cwd: repo, env: { ...baseEnv(), ...gitNeutralisingEnv() }, encoding: 'utf8' });
    assert.deepEqual(listed.stdout.trim().split('\n').sort(), ['filter.evil.clean', 'filter.evil.process']);
    assert.equal(existsSync(marks), false);
  });

  it('refuses the forms that would still run a program, because the environment cannot stop them', async () => {
    const env = neutral();
    for (const [command, program] of [['git diff HEAD~1 HEAD', 'extdiff'], ['git log -p -1', 'textconv'], ['git show', 'textconv']]) {
      assert.equal((await isShellCommandReadOnly(command)).readOnly, false, command);
      assert.ok(run(command, env).includes(program), `${command} would run ${program}`);
    }
  });

  it('makes git choose cat as its pager', () => {
    const pager = execFileSync('git', ['var', 'GIT_PAGER'], { cwd: repo, env: neutral(), encoding: 'utf8' });
    assert.equal(pager.trim(), 'cat');
  });

  it('keeps git status from rewriting the index', () => {
    const index = join(repo, '.git', 'index');
    const before = readFileSync(index);
    writeFileSync(join(repo, 'f.txt'), readFileSync(join(repo, 'f.txt'))); // same content, new mtime
    run('git status', neutral());
    assert.deepEqual(readFileSync(index), before);
  });
});
