// Line counts as a diff shows them (the +/− beside each speculated file), and binary content told apart.
import * as assert from 'node:assert/strict';
import { lineChangeCounts, looksBinary } from '../../../src/core/checkpoints/lineDiff';

describe('checkpoints: line counts', () => {
  it('counts added and removed lines like a diff', () => {
    assert.deepEqual(lineChangeCounts('', ''), { added: 0, removed: 0 });
    assert.deepEqual(lineChangeCounts('', 'a\nb\n'), { added: 2, removed: 0 });
    assert.deepEqual(lineChangeCounts('a\nb\nc\n', 'a\nc\n'), { added: 0, removed: 1 });
    assert.deepEqual(lineChangeCounts('a\nb\nc\n', 'a\nB\nc\nd\n'), { added: 2, removed: 1 });
    assert.deepEqual(lineChangeCounts('x\ny\n', 'y\nx\n'), { added: 1, removed: 1 }, 'a swap is one line out, one in');
    assert.deepEqual(lineChangeCounts('a\nb', 'a\nb\n'), { added: 0, removed: 0 }, 'a final newline is not a line');
  });

  it('estimates a huge rewrite without taking quadratic time', () => {
    const before = Array.from({ length: 20_000 }, (_, i) => `old ${i}`).join('\n');
    const after = Array.from({ length: 20_000 }, (_, i) => (i % 2 ? `old ${i}` : `new ${i}`)).join('\n');
    assert.deepEqual(lineChangeCounts(before, after), { added: 10_000, removed: 10_000 });
  });

  it('tells binary content by a NUL byte', () => {
    assert.equal(looksBinary(Buffer.from('plain text\n')), false);
    assert.equal(looksBinary(Uint8Array.from([0x89, 0x50, 0x00, 0x47])), true);
  });
});
