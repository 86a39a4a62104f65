// The sed-script and awk-program scanners on their own: the places where a write or a command
// hides inside quoted program text.
import * as assert from 'node:assert/strict';
import { checkAwkProgram } from '../../../src/core/shell/awk';
import { checkSedScript } from '../../../src/core/shell/sed';

describe('shell classifier: sed scripts', () => {
  const safe = ['p', '1,20p', '/a/,/b/d', 's/a/b/g', 's|/usr|/opt|2p', 'y/abc/xyz/', '$!N;P;D', ':a;N;ba', '/x/a appended text', '0~4p', '/re/I,+2p', 'l 40', 'r other.txt', '# only a comment', '/x/{p;q}'];
  const unsafe = ['w out', '1w out', '/x/W out', 's/a/b/w out', 's/a/b/gw out', 's/a/b/e', 'e ls', '$!{w x\n}', 'p;w x', ':a w x', 's/a/b/;w x', 's/a\\/b/c/;w x', 's/a/b', 'k', 'y/ab/c'];
  for (const script of safe) it(`accepts ${JSON.stringify(script)}`, () => assert.equal(checkSedScript(script).readOnly, true));
  for (const script of unsafe) it(`refuses ${JSON.stringify(script)}`, () => assert.equal(checkSedScript(script).readOnly, false));
});

describe('shell classifier: awk programs', () => {
  const safe = [
    '{print $1}', '$3 > 100 {print $1}', '{ if ($1 > 5) print $2 }', '{print ($1 > 5)}', '{ x = a / 2; print x }',
    '/a|b/ {n++} END {print n}', '{ getline line; print line }', 'NR % 2 == 0 || NR == 1', '{ if (getline > 0) print }', 'BEGIN { print ENVIRON["HOME"] }', '{print a, b}\n$2 > 3 {print}',
  ];
  const unsafe = [
    '{print > "f"}', '{print $1 >> "f"}', '{printf("%s", $0) > "f"}', '{print | "sh"}', 'BEGIN{system("ls")}',
    'BEGIN{"date" | getline d}', '{print $1,\n$2 > "f"}', '{print a / 2 > "f"}', '@include "x"', 'BEGIN{print 1 |& "cat"}',
    '{ print "x" > ENVIRON["OUT"] }', 'BEGIN { getline < "/inet/tcp/0/h/80" }', '{print "unterminated}',
    '{ getline line < "file.txt"; print line }', 'BEGIN { f = "/in" "et/tcp/0/h/80"; getline < f }', 'BEGIN { while ((getline l < f) > 0) print l }',
    'BEGIN { ARGV[1] = "/inet/tcp/0/h/80"; ARGC = 2 }', '{ split("/inet/tcp/0/h/80", ARGV) }', 'BEGIN { getline x[1] < ("/in" "et") }',
  ];
  for (const program of safe) it(`accepts ${JSON.stringify(program)}`, () => assert.equal(checkAwkProgram(program).readOnly, true));
  for (const program of unsafe) it(`refuses ${JSON.stringify(program)}`, () => assert.equal(checkAwkProgram(program).readOnly, false));
});
