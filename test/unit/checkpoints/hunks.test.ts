// Hunk splitting and re-application: what Keep / Drop on one change of a diff writes, byte for byte.
import * as assert from 'node:assert/strict';
import { planHunkUndo } from '../../../src/core/checkpoints/hunkUndo';
import { applyHunks, BinaryFileError, describeHunk, dropHunks, splitFileHunks, splitHunks, splitLines, StaleHunkError, textForHunks } from '../../../src/core/checkpoints/hunks';

const FILE = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight'].map((line) => `${line}\n`).join('');

/** Every subset of the hunks, applied, must equal the edit of only those lines. */
function subsets<T>(items: readonly T[]): T[][] {
  return items.reduce<T[][]>((all, item) => [...all, ...all.map((set) => [...set, item])], [[]]);
}

describe('checkpoints: hunks', () => {
  it('splits two separate changes into two hunks and re-applies each alone', () => {
    const after = FILE.replace('two\n', 'TWO\n').replace('seven\n', 'seven\nseven and a half\n');
    const hunks = splitHunks(FILE, after);
    assert.equal(hunks.length, 2);
    assert.deepEqual(hunks[0].oldLines, ['two\n']);
    assert.deepEqual(hunks[0].newLines, ['TWO\n']);
    assert.deepEqual(hunks[1].oldLines, []);
    assert.deepEqual(hunks[1].newLines, ['seven and a half\n']);
    assert.equal(applyHunks(FILE, after, new Set([hunks[0].id])), FILE.replace('two\n', 'TWO\n'));
    assert.equal(applyHunks(FILE, after, new Set([hunks[1].id])), FILE.replace('seven\n', 'seven\nseven and a half\n'));
    assert.equal(applyHunks(FILE, after, new Set(hunks.map((h) => h.id))), after);
    assert.equal(applyHunks(FILE, after, new Set()), FILE);
    assert.equal(dropHunks(FILE, after, new Set([hunks[0].id])), FILE.replace('seven\n', 'seven\nseven and a half\n'));
    assert.equal(describeHunk(hunks[0]), 'line 2');
  });

  it('keeps ids stable: after one hunk is dropped, the other has the same id', () => {
    const after = FILE.replace('one\n', 'ONE\n').replace('five\n', 'FIVE\n').replace('eight\n', 'EIGHT\n');
    const [first, second, third] = splitHunks(FILE, after);
    const without = dropHunks(FILE, after, new Set([second.id]));
    assert.deepEqual(splitHunks(FILE, without).map((h) => h.id), [first.id, third.id]);
    assert.throws(() => dropHunks(FILE, without, new Set([second.id]), 'a.ts'), (error: unknown) => error instanceof StaleHunkError && /a\.ts/.test(error.message));
  });

  it('gives two identical changes different ids, so dropping one leaves the other', () => {
    const before = 'x\nsame\ny\nsame\nz\n';
    const after = 'x\nSAME\ny\nSAME\nz\n';
    const hunks = splitHunks(before, after);
    assert.equal(hunks.length, 2);
    assert.notEqual(hunks[0].id, hunks[1].id);
    assert.equal(dropHunks(before, after, new Set([hunks[0].id])), 'x\nsame\ny\nSAME\nz\n');
  });

  it('tells adjacent hunks apart (one unchanged line between) and applies every subset exactly', () => {
    const before = 'a\nb\nc\nd\ne\n';
    const after = 'A\nb\nC\nd\nE\nf\n';
    const hunks = splitHunks(before, after);
    assert.equal(hunks.length, 3, 'a, c and e+f are three hunks one line apart');
    const byLine = (kept: readonly string[]) => ['a', 'b', 'c', 'd', 'e'].map((line, i) => {
      if (i === 0 && kept.includes(hunks[0].id)) return 'A\n';
      if (i === 2 && kept.includes(hunks[1].id)) return 'C\n';
      if (i === 4 && kept.includes(hunks[2].id)) return 'E\nf\n';
      return `${line}\n`;
    }).join('');
    for (const kept of subsets(hunks.map((h) => h.id))) assert.equal(applyHunks(before, after, new Set(kept)), byLine(kept), `kept ${kept.length}`);
  });

  it('reads "edit a function, add another after its closing line" as two hunks, as the diff editor shows it', () => {
    const before = 'export function greet() {\n  return 1;\n}\n';
    const after = '// top\nexport function greet() {\n  return 2;\n}\n\nexport function farewell() {\n  return 3;\n}\n';
    const hunks = splitHunks(before, after);
    assert.deepEqual(hunks.map((h) => [h.oldLines, h.newLines]), [
      [[], ['// top\n']],
      [['  return 1;\n'], ['  return 2;\n']],
      [[], ['\n', 'export function farewell() {\n', '  return 3;\n', '}\n']],
    ]);
    for (const kept of subsets(hunks.map((h) => h.id))) {
      const text = applyHunks(before, after, new Set(kept));
      assert.equal(splitHunks(before, text).length, kept.length, 'each subset re-splits into exactly the hunks kept');
    }
    assert.equal(applyHunks(before, after, new Set(hunks.map((h) => h.id))), after);
    // Moved next to a following change, the two join into one hunk.
    assert.equal(splitHunks('a\n}\nb\n', 'A\n}\nx\n}\nB\n').length, 2);
  });

  it('keeps CRLF line endings as the file has them', () => {
    const before = 'one\r\ntwo\r\nthree\r\nfour\r\n';
    const after = 'one\r\nTWO\r\nthree\r\nFOUR\r\n';
    assert.deepEqual(splitLines(before), ['one\r\n', 'two\r\n', 'three\r\n', 'four\r\n']);
    const hunks = splitHunks(before, after);
    assert.equal(hunks.length, 2);
    assert.equal(dropHunks(before, after, new Set([hunks[1].id])), 'one\r\nTWO\r\nthree\r\nfour\r\n');
    assert.equal(dropHunks(before, after, new Set([hunks[0].id])), 'one\r\ntwo\r\nthree\r\nFOUR\r\n');
  });

  it('handles a file with no final newline and a hunk at its end', () => {
    const before = 'a\nb\nc';
    const after = 'A\nb\nc\nd';
    const hunks = splitHunks(before, after);
    assert.equal(hunks.length, 2);
    assert.deepEqual(hunks[1].oldLines, ['c']);
    assert.deepEqual(hunks[1].newLines, ['c\n', 'd']);
    assert.equal(dropHunks(before, after, new Set([hunks[1].id])), 'A\nb\nc', 'the last line stays unterminated');
    assert.equal(dropHunks(before, after, new Set([hunks[0].id])), 'a\nb\nc\nd');
    // A final newline added is a change of its own, re-applied as such.
    const newline = splitHunks('a\nb', 'a\nb\n');
    assert.equal(newline.length, 1);
    assert.equal(applyHunks('a\nb', 'a\nb\n', new Set()), 'a\nb');
  });

  it('handles a hunk that deletes the end of the file, and empty texts', () => {
    const hunks = splitHunks('a\nb\nc\n', 'a\n');
    assert.equal(hunks.length, 1);
    assert.equal(describeHunk(hunks[0]), 'lines 2–3');
    assert.equal(applyHunks('a\nb\nc\n', 'a\n', new Set()), 'a\nb\nc\n');
    assert.deepEqual(splitHunks('', ''), []);
    assert.equal(splitHunks('', 'new\n').length, 1);
  });

  it('refuses binary files with an error that says what to do', () => {
    assert.throws(() => splitFileHunks(Uint8Array.from([0x89, 0x50, 0x00, 0x47]), Buffer.from('text\n'), 'logo.png'), (error: unknown) =>
      error instanceof BinaryFileError && /logo\.png is binary/.test(error.message) && /whole file/.test(error.message));
    assert.throws(() => textForHunks(Uint8Array.from([0xff, 0xfe, 0x41]), 'latin1.txt'), BinaryFileError, 'bytes that are not UTF-8 are refused, never re-encoded');
    assert.equal(splitFileHunks(Buffer.from('a\n'), Buffer.from('b\n')).length, 1);
  });

  it('splits a huge rewrite without quadratic cost, still re-applying exactly', () => {
    const before = Array.from({ length: 20_000 }, (_, i) => `old ${i}\n`).join('');
    const after = Array.from({ length: 20_000 }, (_, i) => (i % 2 ? `old ${i}\n` : `new ${i}\n`)).join('');
    const hunks = splitHunks(before, after);
    assert.ok(hunks.length >= 1);
    assert.equal(applyHunks(before, after, new Set(hunks.map((h) => h.id))), after);
    assert.equal(applyHunks(before, after, new Set()), before);
  });
});

describe('checkpoints: undoing one hunk', () => {
  const BEFORE = 'a\nb\nc\nd\ne\nf\ng\n';
  const AFTER = 'A\nb\nc\nd\ne\nf\nG\n';

  it('takes back one hunk of an untouched file, keeping the other', () => {
    const [first, second] = splitHunks(BEFORE, AFTER);
    assert.deepEqual(planHunkUndo(BEFORE, AFTER, AFTER, second.id), { ok: true, hunk: second, text: 'A\nb\nc\nd\ne\nf\ng\n', touched: false });
    assert.equal(planHunkUndo(BEFORE, AFTER, AFTER, first.id).text, 'a\nb\nc\nd\ne\nf\nG\n');
  });

  it('keeps the user\'s later edits elsewhere in the file, with lines shifted by them', () => {
    const [first, second] = splitHunks(BEFORE, AFTER);
    const current = 'A\nb\nmine 1\nmine 2\nc\nd\ne\nf\nG\n';
    assert.deepEqual(planHunkUndo(BEFORE, AFTER, current, second.id), { ok: true, hunk: second, text: 'A\nb\nmine 1\nmine 2\nc\nd\ne\nf\ng\n', touched: false });
    const plan = planHunkUndo(BEFORE, AFTER, 'A\nb\nc\nd\ne\nf\nG\nmore\n'.replace('d\n', ''), first.id);
    assert.equal(plan.touched, false);
    assert.equal(plan.text, 'a\nb\nc\ne\nf\nG\nmore\n');
  });

  it('says when the user changed the hunk\'s lines (or the next one) since; undo anyway restores that region only', () => {
    const [, second] = splitHunks(BEFORE, AFTER);
    const inside = planHunkUndo(BEFORE, AFTER, 'A\nb\nc\nd\ne\nf\nG!\n', second.id);
    assert.equal(inside.touched, true);
    assert.equal(inside.text, 'A\nb\nc\nd\ne\nf\ng\n', 'the region back as before the change; the other hunk stays');
    const next = planHunkUndo(BEFORE, AFTER, 'A\nb\nc\nd\ne\nF\nG\n', second.id);
    assert.equal(next.touched, true, 'an edit right next to the hunk is asked about too');
    assert.equal(next.text, 'A\nb\nc\nd\ne\nf\ng\n');
  });

  it('refuses a hunk the checkpoint does not have', () => {
    assert.throws(() => planHunkUndo(BEFORE, AFTER, AFTER, 'nope', 'a.ts'), StaleHunkError);
  });

  it('keeps CRLF and a missing final newline when undoing', () => {
    const before = 'one\r\ntwo\r\nthree';
    const after = 'ONE\r\ntwo\r\nTHREE';
    const [, last] = splitHunks(before, after);
    assert.equal(planHunkUndo(before, after, after, last.id).text, 'ONE\r\ntwo\r\nthree');
  });
});

describe('checkpoints: hunks keep a byte-order mark', () => {
  it('re-applies a file with a BOM to the same bytes', () => {
    const before = Buffer.from('\ufeffa\nb\n', 'utf8');
    const text = textForHunks(before);
    assert.deepEqual(Buffer.from(text, 'utf8'), before);
  });
});
