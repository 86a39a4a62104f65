// What a glob pattern means, as every path matcher in the engine applies it.
import * as assert from 'node:assert/strict';
import { globToRegExp, literalPrefix, matchGlob, maxGlobDepth } from '../../../src/core/fs/globMatch';

describe('globMatch', () => {
  it('keeps * and ? within one path segment', () => {
    assert.ok(matchGlob('*.ts', 'app.ts'));
    assert.ok(!matchGlob('*.ts', 'src/app.ts'));
    assert.ok(matchGlob('src/?.ts', 'src/a.ts'));
    assert.ok(!matchGlob('src/?.ts', 'src/ab.ts'));
    assert.ok(!matchGlob('a?b', 'a/b'));
  });

  it('lets ** span any number of folders, including none', () => {
    for (const file of ['a.ts', 'src/a.ts', 'src/x/y/a.ts']) assert.ok(matchGlob('**/*.ts', file), file);
    assert.ok(matchGlob('src/**/*.ts', 'src/a.ts'));
    assert.ok(matchGlob('src/**/*.ts', 'src/deep/er/a.ts'));
    assert.ok(!matchGlob('src/**/*.ts', 'lib/a.ts'));
    assert.ok(matchGlob('src/**', 'src/a/b.txt'));
    assert.ok(!matchGlob('src/**', 'srcx/a'));
    assert.ok(matchGlob('**', 'any/thing'));
  });

  it('treats ** inside a name like *', () => {
    assert.ok(matchGlob('a**b', 'axxb'));
    assert.ok(!matchGlob('a**b', 'a/b'));
  });

  it('supports classes, negated classes and ranges, never matching /', () => {
    assert.ok(matchGlob('file[abc].txt', 'fileb.txt'));
    assert.ok(!matchGlob('file[abc].txt', 'filed.txt'));
    assert.ok(matchGlob('file[!abc].txt', 'filed.txt'));
    assert.ok(matchGlob('file[^abc].txt', 'filed.txt'));
    assert.ok(matchGlob('v[0-9].md', 'v7.md'));
    assert.ok(!matchGlob('a[!x]b', 'a/b'));
    assert.ok(matchGlob('a[.txt', 'a[.txt'), 'an unclosed [ is literal');
  });

  it('expands {a,b} alternatives, nested and combined with **', () => {
    const regex = globToRegExp('{src,test}/**/*.{ts,tsx}');
    for (const file of ['src/a.ts', 'test/unit/b.tsx']) assert.ok(regex.test(file), file);
    for (const file of ['lib/a.ts', 'src/a.js']) assert.ok(!regex.test(file), file);
    assert.ok(matchGlob('*.{json,{md,txt}}', 'notes.txt'));
    assert.ok(matchGlob('{a}.txt', '{a}.txt'), 'a group without a comma is literal');
  });

  it('matches regex special characters literally and dot files like any name', () => {
    assert.ok(!matchGlob('a.b', 'axb'));
    assert.ok(matchGlob('(x)+$.txt', '(x)+$.txt'));
    assert.ok(matchGlob('*', '.eslintrc'));
    assert.ok(matchGlob('**/*.yml', '.github/workflows/ci.yml'));
    assert.ok(matchGlob('\\*.txt', '*.txt'));
    assert.ok(!matchGlob('\\*.txt', 'a.txt'));
  });

  it('finds the literal folder to start a walk at and how deep a match can go', () => {
    assert.deepEqual(literalPrefix('src/lib/**/*.ts'), { prefix: 'src/lib', rest: '**/*.ts' });
    assert.deepEqual(literalPrefix('*.ts'), { prefix: '', rest: '*.ts' });
    assert.deepEqual(literalPrefix('src/app.ts'), { prefix: 'src', rest: 'app.ts' });
    assert.equal(maxGlobDepth('*.ts'), 1);
    assert.equal(maxGlobDepth('src/*/x.ts'), 3);
    assert.equal(maxGlobDepth('src/**/x.ts'), Infinity);
  });
});
