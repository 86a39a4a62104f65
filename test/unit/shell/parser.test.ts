// Loading the parser (lazy, shared, fail-closed) and keeping one call from influencing the next.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Language, Parser } from 'web-tree-sitter';
import { configureShellParser, isShellCommandReadOnly } from '../../../src/core/shell';
import { checkParsedScript } from '../../../src/core/shell/classify';
import { loadShellParser } from '../../../src/core/shell/parser';
import type { ParsedScript, SyntaxNode } from '../../../src/core/shell/syntaxTree';

/** Where the build put the wasm files (next to the compiled parser). */
const SHELL_OUT_DIR = join(__dirname, '..', '..', '..', 'src', 'core', 'shell');

describe('shell classifier: parser loading', () => {
  let temp: string | undefined;

  afterEach(() => {
    configureShellParser({});
    if (temp) rmSync(temp, { recursive: true, force: true });
    temp = undefined;
  });

  it('answers concurrent first calls in a fresh process, all from one load', () => {
    const script = `
      const shell = require(${JSON.stringify(join(SHELL_OUT_DIR, 'index.js'))});
      const parser = require(${JSON.stringify(join(SHELL_OUT_DIR, 'parser.js'))});
      const loads = [parser.loadShellParser(), parser.loadShellParser()];
      const commands = Array.from({ length: 20 }, (_, i) => (i % 2 ? 'rm -rf x' : 'ls -la'));
      Promise.all([...loads, ...commands.map((c) => shell.isShellCommandReadOnly(c))]).then((results) => {
        const [a, b, ...verdicts] = results;
        console.log(JSON.stringify({ same: a === b && loads[0] === loads[1], verdicts: verdicts.map((v) => v.readOnly) }));
      });`;
    const output = JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })) as { same: boolean; verdicts: boolean[] };
    assert.equal(output.same, true, 'concurrent callers share one load');
    assert.deepEqual(output.verdicts, Array.from({ length: 20 }, (_, i) => i % 2 === 0));
  });

  it('fails closed with a load reason when the wasm files are missing, and stays closed', async () => {
    temp = mkdtempSync(join(tmpdir(), 'shell-wasm-'));
    configureShellParser({ wasmDir: temp });
    const verdicts = await Promise.all(['ls', 'git status', 'pwd'].map((c) => isShellCommandReadOnly(c)));
    for (const verdict of verdicts) {
      assert.equal(verdict.readOnly, false);
      assert.match(verdict.reason, /^load: the shell parser could not be loaded/);
    }
    const later = await isShellCommandReadOnly('ls');
    assert.equal(later.readOnly, false);
    assert.match(later.reason, /^load: /);
  });

  it('fails closed when the grammar file is corrupt', async () => {
    temp = mkdtempSync(join(tmpdir(), 'shell-wasm-'));
    copyFileSync(join(SHELL_OUT_DIR, 'web-tree-sitter.wasm'), join(temp, 'web-tree-sitter.wasm'));
    writeFileSync(join(temp, 'tree-sitter-bash.wasm'), 'not a wasm module');
    configureShellParser({ wasmDir: temp });
    const verdict = await isShellCommandReadOnly('ls');
    assert.equal(verdict.readOnly, false);
    assert.match(verdict.reason, /^load: /);
  });

  it('loads again after being pointed back at the right folder', async () => {
    temp = mkdtempSync(join(tmpdir(), 'shell-wasm-'));
    configureShellParser({ wasmDir: temp });
    assert.equal((await isShellCommandReadOnly('ls')).readOnly, false);
    configureShellParser({ wasmDir: SHELL_OUT_DIR });
    assert.deepEqual(await isShellCommandReadOnly('ls'), { readOnly: true, reason: 'ok' });
  });
});

describe('shell classifier: no state between calls', () => {
  it('gives the same verdicts when refused and allowed commands alternate many times', async () => {
    const rounds: Array<[string, boolean]> = [
      ['rm -rf x', false],
      ['ls -la', true],
      ['echo "unterminated', false],
      ['git status', true],
      ['cat <<EOF\n$(rm x)\nEOF', false],
      ['grep -rn TODO src | wc -l', true],
      ['('.repeat(2000), false],
      ['pwd', true],
    ];
    for (let i = 0; i < 60; i++) {
      for (const [command, readOnly] of rounds) {
        const verdict = await isShellCommandReadOnly(command);
        assert.equal(verdict.readOnly, readOnly, `round ${i}: ${command.slice(0, 40)} → ${verdict.reason}`);
      }
    }
  });

  it('answers a burst of concurrent calls independently', async () => {
    const commands = Array.from({ length: 200 }, (_, i) => (i % 3 === 0 ? `cat f${i} > out${i}` : `head -n ${i} f${i}`));
    const verdicts = await Promise.all(commands.map((c) => isShellCommandReadOnly(c)));
    verdicts.forEach((verdict, i) => assert.equal(verdict.readOnly, i % 3 !== 0, commands[i]));
  });
});

describe('shell classifier: unknown node types', () => {
  const node = (type: string, children: SyntaxNode[] = [], field: string | null = null): SyntaxNode => ({
    type, named: true, field, start: 0, end: 2, children,
  });
  const script = (root: SyntaxNode): ParsedScript => ({ source: 'ls', root, hasError: false });
  const WORKSPACE = { root: process.cwd(), cwd: process.cwd(), searchPath: '/usr/bin:/bin', cwds: [process.cwd()], checkedVariables: new Map<string, string>() };

  it('refuses a statement type the grammar did not have', async () => {
    const parser = await loadShellParser();
    const verdict = checkParsedScript(script(node('program', [node('mystery_statement')])), parser, WORKSPACE);
    assert.equal(verdict.readOnly, false);
    assert.match(verdict.reason, /^syntax: unsupported shell construct \(mystery_statement\)/);
  });

  it('refuses an unknown word type inside an otherwise allowed command', async () => {
    const parser = await loadShellParser();
    const command = node('command', [node('command_name', [node('word')], 'name'), node('future_word', [], 'argument')]);
    const verdict = checkParsedScript(script(node('program', [command])), parser, WORKSPACE);
    assert.equal(verdict.readOnly, false);
    assert.match(verdict.reason, /^syntax: /);
  });

  it('accepts the same hand-made tree once the argument is an ordinary word', async () => {
    const parser = await loadShellParser();
    const command = node('command', [node('command_name', [node('word')], 'name'), node('word', [], 'argument')]);
    assert.equal(checkParsedScript(script(node('program', [command])), parser, WORKSPACE).readOnly, true);
  });

  it('refuses a tree that tree-sitter marked as having errors', async () => {
    const parser = await loadShellParser();
    const parsed: ParsedScript = { ...script(node('program', [])), hasError: true };
    assert.match(checkParsedScript(parsed, parser, WORKSPACE).reason, /^parse: /);
  });

});

describe('shell classifier: the copied syntax tree', () => {
  it('a command the parser could only complete with MISSING nodes is a syntax error, though no ERROR node is in it', async () => {
    const parser = await loadShellParser();
    for (const source of ['ls | ', 'ls ||', '( ls', '[ -f a', 'echo `ls', 'if [ a ]; then', 'select x in a; do']) {
      const parsed = parser.parse(source);
      const types: string[] = [];
      const walk = (n: SyntaxNode): void => {
        types.push(n.type);
        n.children.forEach(walk);
      };
      walk(parsed.root);
      assert.ok(!types.includes('ERROR'), `${source}: only MISSING nodes`);
      assert.equal(parsed.hasError, true, source);
      assert.match((await isShellCommandReadOnly(source)).reason, /^parse: /, source);
    }
  });

  it('copies every node with the type, named flag, field and span web-tree-sitter gives it', async () => {
    const ours = await loadShellParser(); // initialises the runtime both share
    const language = await Language.load(join(SHELL_OUT_DIR, 'tree-sitter-bash.wasm'));
    const reference = new Parser();
    reference.setLanguage(language);
    for (const source of ['ls -la "$HOME"/x | grep -v \'a b\' > /dev/null 2>&1', 'for f in *.ts; do wc -l "$f"; done', 'x=$(git log --oneline -1) && echo "${x%% *}"', '[[ -n $a ]] || { echo no; exit 1; }']) {
      const tree = reference.parse(source)!;
      const expected: string[] = [];
      const cursor = tree.walk();
      const visit = (): void => {
        expected.push(`${cursor.nodeType}|${cursor.nodeIsNamed}|${cursor.currentFieldName}|${cursor.startIndex}-${cursor.endIndex}`);
        if (cursor.gotoFirstChild()) {
          do visit();
          while (cursor.gotoNextSibling());
          cursor.gotoParent();
        }
      };
      visit();
      cursor.delete();
      tree.delete();
      const copied: string[] = [];
      const walk = (n: SyntaxNode): void => {
        copied.push(`${n.type}|${n.named}|${n.field}|${n.start}-${n.end}`);
        n.children.forEach(walk);
      };
      walk(ours.parse(source).root);
      assert.deepEqual(copied, expected, source);
      assert.ok(copied.some((line) => line.includes('|false|')) && copied.some((line) => line.includes('|true|')), 'named and anonymous nodes both met');
    }
    reference.delete();
  });
});
