// .gitignore rules as git applies them to the paths our walks and searches visit.
import * as assert from 'node:assert/strict';
import { IgnoreStack, parseGitignore } from '../../../src/core/fs/gitignore';

function stack(files: Record<string, string>): IgnoreStack {
  let result = IgnoreStack.EMPTY;
  for (const [base, text] of Object.entries(files)) result = result.with(parseGitignore(text, base));
  return result;
}

describe('gitignore', () => {
  it('matches a name without slash at any depth', () => {
    const rules = stack({ '': '*.log\n' });
    assert.ok(rules.isIgnored('debug.log', false));
    assert.ok(rules.isIgnored('a/b/debug.log', false));
    assert.ok(!rules.isIgnored('debug.txt', false));
  });

  it('anchors patterns with a leading or middle slash to the .gitignore folder', () => {
    const rules = stack({ '': '/build\ndocs/*.tmp\n' });
    assert.ok(rules.isIgnored('build', true));
    assert.ok(!rules.isIgnored('src/build', true));
    assert.ok(rules.isIgnored('docs/a.tmp', false));
    assert.ok(!rules.isIgnored('x/docs/a.tmp', false));
  });

  it('applies a trailing slash to directories only', () => {
    const rules = stack({ '': 'dist/\n' });
    assert.ok(rules.isIgnored('dist', true));
    assert.ok(rules.isIgnored('pkg/dist', true));
    assert.ok(!rules.isIgnored('dist', false));
  });

  it('re-includes with ! and lets the last matching rule win', () => {
    const rules = stack({ '': '*.log\n!keep.log\n' });
    assert.ok(rules.isIgnored('a.log', false));
    assert.ok(!rules.isIgnored('keep.log', false));
    assert.ok(!rules.isIgnored('sub/keep.log', false));
  });

  it('supports ** forms', () => {
    const rules = stack({ '': '**/tmp\nlogs/**\na/**/z.txt\n' });
    assert.ok(rules.isIgnored('x/y/tmp', true));
    assert.ok(rules.isIgnored('logs/2024/x.txt', false));
    assert.ok(rules.isIgnored('a/z.txt', false));
    assert.ok(rules.isIgnored('a/b/c/z.txt', false));
    assert.ok(!rules.isIgnored('b/z.txt', false));
    const leading = stack({ '': '**foo\n' });
    assert.ok(leading.isIgnored('xfoo', false));
    assert.ok(leading.isIgnored('deep/er/xfoo', false), 'a pattern without slash matches at any depth');
  });

  it('scopes a nested .gitignore to its folder and lets it override the root', () => {
    const rules = stack({ '': '*.gen.ts\n', pkg: '/out\n!special.gen.ts\n' });
    assert.ok(rules.isIgnored('pkg/out', true));
    assert.ok(!rules.isIgnored('out', true));
    assert.ok(!rules.isIgnored('pkg/special.gen.ts', false));
    assert.ok(rules.isIgnored('special.gen.ts', false));
  });

  it('lets .rgignore beat .ignore beat .gitignore, whatever their depth', () => {
    let rules = IgnoreStack.EMPTY.with(parseGitignore('!keep.gen.ts\n', '', '.rgignore'));
    rules = rules.with(parseGitignore('*.gen.ts\n', 'src', '.gitignore'));
    assert.ok(!rules.isIgnored('src/keep.gen.ts', false));
    assert.ok(rules.isIgnored('src/other.gen.ts', false));
    const withIgnore = IgnoreStack.EMPTY.with(parseGitignore('!a.log\n', '', '.ignore')).with(parseGitignore('*.log\n', 'x', '.gitignore'));
    assert.ok(!withIgnore.isIgnored('x/a.log', false));
  });

  it('skips comments and blank lines, honours escapes and trims trailing spaces', () => {
    const rules = stack({ '': '# a comment\n\n\\#hash\n\\!bang\nspaced   \n' });
    assert.ok(rules.isIgnored('#hash', false));
    assert.ok(rules.isIgnored('!bang', false));
    assert.ok(rules.isIgnored('spaced', false));
    assert.ok(!rules.isIgnored('# a comment', false));
  });
});
