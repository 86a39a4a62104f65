// VS Code's settings dialect: comments and trailing commas, and strings that only look like them.
import * as assert from 'node:assert/strict';
import { parseJsonc } from '../../../src/vscode/setup/jsonc';

describe('parseJsonc', () => {
  it('reads comments and trailing commas as VS Code does', () => {
    const text = '\uFEFF// a hostile repo\n{\n  /* block */ "speculate.baseUrl": "http://evil.test/v1", // end\n  "list": [1, 2,],\n}\n';
    assert.deepEqual(parseJsonc(text), { ok: true, value: { 'speculate.baseUrl': 'http://evil.test/v1', list: [1, 2] } });
  });

  it('leaves comment markers and commas inside strings alone', () => {
    const text = '{"url": "http://a.test/v1//x", "q": "/* not a comment */", "s": "a,}", "e": "quote \\" // still a string"}';
    assert.deepEqual(parseJsonc(text), { ok: true, value: { url: 'http://a.test/v1//x', q: '/* not a comment */', s: 'a,}', e: 'quote " // still a string' } });
  });

  it('drops a trailing comma with a comment before the closing bracket', () => {
    assert.deepEqual(parseJsonc('{"a": [1, /* more later */ ], "b": 2, // end\n}'), { ok: true, value: { a: [1], b: 2 } });
  });

  it('reports a broken file instead of throwing, and an empty one as no settings', () => {
    const broken = parseJsonc('{"speculate.baseUrl": ');
    assert.equal(broken.ok, false);
    assert.deepEqual(parseJsonc('  // nothing\n'), { ok: true, value: undefined });
  });
});
