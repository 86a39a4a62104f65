// The approval diff: applying it to the old text gives the new text exactly, it is as short as GNU
// diff's minimal one, and binary content, new files and huge diffs are described sensibly.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_SHOWN_DIFF_LINES, unifiedDiff } from '../../../src/core/tools/unifiedDiff';

/** Applies our unified diff to `before` (lines) and returns the result (lines). */
function applyDiff(before: string[], diff: string): string[] {
  const lines = diff.split('\n').slice(2);
  const out: string[] = [];
  let at = 0;
  for (let i = 0; i < lines.length; i++) {
    const header = /^@@ -(\d+),(\d+) \+(\d+),(\d+) @@$/.exec(lines[i]);
    if (!header) continue;
    const start = Number(header[2]) === 0 ? Number(header[1]) : Number(header[1]) - 1;
    while (at < start) out.push(before[at++]);
    for (i++; i < lines.length && !lines[i].startsWith('@@'); i++) {
      const [kind, text] = [lines[i][0], lines[i].slice(1)];
      if (kind === ' ') {
        assert.equal(before[at], text, 'context matches the old text');
        out.push(before[at++]);
      } else if (kind === '-') {
        assert.equal(before[at], text, 'a removed line is the old one');
        at++;
      } else if (kind === '+') {
        out.push(text);
      }
    }
    i--;
  }
  while (at < before.length) out.push(before[at++]);
  return out;
}

function changedLines(diff: string): number {
  return diff.split('\n').filter((line) => /^[-+](?![-+]{2} )/.test(line)).length;
}

/** A deterministic pseudo-random generator, so failures replay. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

describe('unifiedDiff', function () {
  // Spawns GNU diff 200 times: a hang guard for a loaded machine, not a speed assertion.
  this.timeout(60_000);

  it('round-trips and is minimal (as short as diff --minimal) on 200 random edits', () => {
    const dir = mkdtempSync(join(tmpdir(), 'speculate-diff-'));
    try {
      const next = random(7);
      for (let round = 0; round < 200; round++) {
        const vocabulary = ['a', 'b', 'c', 'd', 'x', '', '  indent', '}'];
        const before = Array.from({ length: Math.floor(next() * 30) }, () => vocabulary[Math.floor(next() * vocabulary.length)]);
        const after = [...before];
        for (let edits = Math.floor(next() * 6); edits > 0; edits--) {
          const at = Math.floor(next() * (after.length + 1));
          if (next() < 0.5 && after.length > 0) after.splice(Math.min(at, after.length - 1), 1);
          else after.splice(at, 0, vocabulary[Math.floor(next() * vocabulary.length)]);
        }
        const text = (lines: string[]) => lines.map((l) => `${l}\n`).join('');
        const diff = unifiedDiff('f.txt', Buffer.from(text(before)), Buffer.from(text(after)));
        if (text(before) === text(after)) continue;
        assert.deepEqual(applyDiff(before, diff), after, `round ${round}:\n${diff}`);
        writeFileSync(join(dir, 'a'), text(before));
        writeFileSync(join(dir, 'b'), text(after));
        let gnu = '';
        try {
          execFileSync('diff', ['--minimal', '-U3', join(dir, 'a'), join(dir, 'b')], { encoding: 'utf8' });
        } catch (error) {
          gnu = String((error as { stdout?: string }).stdout ?? '');
        }
        assert.equal(changedLines(diff), changedLines(gnu), `round ${round}: as few changed lines as GNU diff`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('diffs a new file against /dev/null, says when the last line has no newline, and describes binary content', () => {
    assert.equal(unifiedDiff('n.ts', undefined, Buffer.from('one\ntwo')), '--- /dev/null\n+++ b/n.ts\n@@ -0,0 +1,2 @@\n+one\n+two\n\\ No newline at end of the new file');
    assert.equal(unifiedDiff('b.bin', Buffer.from([1, 0, 2]), Buffer.from('text\n')), '--- a/b.bin\n+++ b/b.bin\nBinary or non-UTF-8 content: 3 bytes → 5 bytes');
    assert.equal(unifiedDiff('same.txt', Buffer.from('x\n'), Buffer.from('x\n')), '--- a/same.txt\n+++ b/same.txt\n(no change)');
  });

  it('cuts a very long diff and says how much is left out', () => {
    const after = Array.from({ length: 1000 }, (_, i) => `line ${i}`).join('\n') + '\n';
    const diff = unifiedDiff('big.txt', Buffer.from(''), Buffer.from(after));
    const lines = diff.split('\n');
    assert.equal(lines.length, MAX_SHOWN_DIFF_LINES + 1);
    assert.match(lines.at(-1) ?? '', /^… \d+ more lines of the diff not shown$/);
  });
});
