// Line matching shared by the search backends: what counts as a matching line and how files are filtered.
import * as assert from 'node:assert/strict';
import { compileSearchPattern, matchLines, searchGlobFilter, SearchPatternError } from '../../../src/core/fs/textSearch';

describe('textSearch', () => {
  it('matches line by line, 1-based, without line ends', () => {
    assert.deepEqual(matchLines('a.txt', 'one\r\ntwo\r\nthree', /o$/, 10), [{ path: 'a.txt', line: 2, text: 'two' }]);
    assert.deepEqual(matchLines('a.txt', 'x\nfoo\n', /^foo$/, 10), [{ path: 'a.txt', line: 2, text: 'foo' }]);
    assert.deepEqual(matchLines('a.txt', 'a\na\na\n', /a/, 2).map((match) => match.line), [1, 2]);
  });

  it('finds per-line matches that the whole text would hide', () => {
    assert.equal(matchLines('a', 'foo\nbar', /foo(?!\n)/, 10).length, 1);
    assert.equal(matchLines('a', 'a\nb', /(?<!\n)b/, 10).length, 1);
    assert.equal(matchLines('a', 'no match here\nnor here', /zzz/, 10).length, 0);
  });

  it('filters files by name when the glob has no slash, by path when it has one', () => {
    const byName = searchGlobFilter('*.ts', '');
    assert.ok(byName('src/deep/a.ts'));
    assert.ok(!byName('src/a.js'));
    const byPath = searchGlobFilter('lib/**/*.ts', 'src');
    assert.ok(byPath('lib/x/a.ts'), 'relative to the workspace');
    assert.ok(byPath('src/lib/a.ts'), 'relative to the searched folder');
    assert.ok(!byPath('other/lib/a.ts'));
    assert.ok(searchGlobFilter(undefined, '')('anything'));
  });

  it('explains an invalid pattern', () => {
    assert.throws(() => compileSearchPattern('a[b'), (error: Error) => error instanceof SearchPatternError && /Invalid search pattern "a\[b"/.test(error.message));
  });
});
