// The `@` list's ranking: what a person typing a few letters of a file name expects to see first.
import * as assert from 'node:assert/strict';
import { fuzzyScore, rankPaths } from '../../../src/vscode/chat/fuzzyMatch';

const PATHS = ['src/greet.ts', 'src/webview/main.ts', 'test/greet.test.ts', 'README.md', 'src/core/chat/conversation.ts', 'docs/guide/getting-started.md'];

describe('fuzzy path ranking', () => {
  it('matches letters in order, case-insensitively, and nothing else', () => {
    assert.notEqual(fuzzyScore('src/greet.ts', 'GRT'), undefined);
    assert.equal(fuzzyScore('src/greet.ts', 'tg'), undefined);
    assert.equal(fuzzyScore('src/greet.ts', 'greetx'), undefined);
  });

  it('puts the file whose name starts with the letters first', () => {
    assert.deepEqual(rankPaths(PATHS, 'greet', 2), ['src/greet.ts', 'test/greet.test.ts']);
    assert.equal(rankPaths(PATHS, 'conv', 1)[0], 'src/core/chat/conversation.ts');
    assert.equal(rankPaths(PATHS, 'gs', 1)[0], 'docs/guide/getting-started.md', 'initials of words');
    assert.equal(rankPaths(PATHS, 'main', 1)[0], 'src/webview/main.ts');
  });

  it('lists short paths first for an empty query and respects the limit', () => {
    assert.deepEqual(rankPaths(PATHS, '', 2), ['README.md', 'src/greet.ts']);
    assert.deepEqual(rankPaths(PATHS, 'zzz', 5), []);
  });
});
