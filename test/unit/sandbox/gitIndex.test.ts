// Telling git's index refresh from a real index change, on indexes written by the real git.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, realpath, rm, utimes, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { sameIndexEntries } from '../../../src/core/sandbox/gitIndex';

describe('git index comparison', () => {
  let dir: string;
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], { cwd: dir, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent', GIT_CONFIG_NOSYSTEM: '1' } });
  const index = () => readFile(path.join(dir, '.git', 'index'));

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'speculate-gitindex-')));
    git('init', '-q');
    await writeFile(path.join(dir, 'a.txt'), 'a\n');
    await writeFile(path.join(dir, 'b.txt'), 'b\n');
    git('add', 'a.txt', 'b.txt');
    git('commit', '-q', '-m', 'init');
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  for (const version of ['2', '3', '4']) {
    it(`a stat refresh keeps the entries the same (index version ${version})`, async () => {
      git('update-index', '--index-version', version);
      const before = await index();
      await utimes(path.join(dir, 'a.txt'), new Date(2001, 1, 1), new Date(2001, 1, 1));
      git('update-index', '--refresh');
      const after = await index();
      assert.ok(!before.equals(after), 'git rewrote the index');
      assert.equal(sameIndexEntries(before, after), true);
    });

    it(`git add and git rm --cached change the entries (index version ${version})`, async () => {
      git('update-index', '--index-version', version);
      const before = await index();
      await writeFile(path.join(dir, 'a.txt'), 'changed\n');
      git('add', 'a.txt');
      assert.equal(sameIndexEntries(before, await index()), false);
      const added = await index();
      git('rm', '-q', '--cached', 'b.txt');
      assert.equal(sameIndexEntries(added, await index()), false);
    });
  }

  it('an unreadable index is never a refresh', async () => {
    const before = await index();
    assert.equal(sameIndexEntries(before, Buffer.from('garbage')), false);
    assert.equal(sameIndexEntries(before.subarray(0, before.length - 30), before), false);
  });
});
