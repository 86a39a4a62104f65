// grep_search through both search backends, and lsp with and without an editor behind it.
import * as assert from 'node:assert/strict';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { NodeWorkspaceFs } from '../../../src/core/fs/nodeWorkspaceFs';
import { findExecutable } from '../../../src/core/fs/ripgrep';
import { grepSearchTool } from '../../../src/core/tools/grepSearch';
import { lspTool } from '../../../src/core/tools/lsp';
import type { LspProvider } from '../../../src/core/tools/types';
import { addEscapes, escapingPaths, makeWorkspace, SECRET, type TempWorkspace } from './workspaceFixture';

describe('grep_search and lsp tools', () => {
  let ws: TempWorkspace;

  beforeEach(async () => {
    ws = await makeWorkspace({
      '.gitignore': 'gen/\n',
      'src/app.ts': 'import { parse } from "./parse";\nexport const app = parse("x");\n',
      'src/parse.ts': 'export function parse(text: string) {\n  return text;\n}\n',
      'docs/notes.md': 'parse is documented here\n',
      'gen/parse.js': 'function parse() {}\n',
      'data.bin': Buffer.from('parse\0\0binary'),
    });
    await addEscapes(ws);
  });

  afterEach(() => ws.cleanup());

  describe('grep_search', () => {
    it('groups matching lines by file with line numbers, the same with ripgrep and JavaScript', async () => {
      const rg = findExecutable('rg');
      assert.ok(rg, 'ripgrep (rg) must be on PATH for this test: apt-get install ripgrep');
      const outputs: string[] = [];
      for (const ripgrepPath of [null, rg]) {
        const fs = await NodeWorkspaceFs.open(ws.root, { ripgrepPath });
        const result = await grepSearchTool.execute({ pattern: 'parse' }, { fs });
        assert.equal(result.ok, true);
        outputs.push(result.output);
      }
      assert.equal(outputs[0], outputs[1]);
      assert.equal(
        outputs[0],
        '4 matches in 3 files for /parse/:\n' +
          'docs/notes.md\n  1: parse is documented here\n' +
          'src/app.ts\n  1: import { parse } from "./parse";\n  2: export const app = parse("x");\n' +
          'src/parse.ts\n  1: export function parse(text: string) {',
      );
    });

    it('narrows by path (relative or absolute) and by glob', async () => {
      const run = (args: Record<string, unknown>) => grepSearchTool.execute(args, ws.context());
      assert.equal((await run({ pattern: 'parse\\(', path: 'src' })).output, '2 matches in 2 files for /parse\\(/ in src:\nsrc/app.ts\n  2: export const app = parse("x");\nsrc/parse.ts\n  1: export function parse(text: string) {');
      assert.equal((await run({ pattern: 'return', path: path.join(ws.root, 'src/parse.ts') })).output, '1 match in 1 file for /return/ in src/parse.ts:\nsrc/parse.ts\n  2:   return text;');
      assert.equal((await run({ pattern: 'parse', glob: '*.md' })).output, '1 match in 1 file for /parse/ (files matching *.md):\ndocs/notes.md\n  1: parse is documented here');
      assert.equal((await run({ pattern: 'nothing here' })).output, 'No matches for /nothing here/.');
    });

    it('refuses search paths outside the workspace and never shows outside text', async () => {
      for (const { path: requested, why } of escapingPaths(ws)) {
        const result = await grepSearchTool.execute({ pattern: 'secret', path: requested }, ws.context());
        assert.equal(result.ok, false, requested);
        assert.match(result.output, why);
      }
      const everything = await grepSearchTool.execute({ pattern: 'outside' }, ws.context());
      assert.ok(!everything.output.includes(SECRET));
    });

    it('never starts an rg the workspace planted on the PATH it was started with', async () => {
      const marker = path.join(ws.outside, 'planted-rg-ran');
      const planted = `#!/bin/sh\necho ran > '${marker}'\n`;
      for (const dir of ['bin', 'node_modules/.bin', '']) {
        await mkdir(path.join(ws.root, dir), { recursive: true });
        await writeFile(path.join(ws.root, dir, 'rg'), planted);
        await chmod(path.join(ws.root, dir, 'rg'), 0o755);
      }
      const saved = process.env.PATH;
      // As a direnv or a project's terminal profile could have left it for the editor.
      process.env.PATH = ['bin', '.', '', path.join(ws.root, 'node_modules/.bin'), saved ?? '/usr/bin'].join(':');
      let fs: NodeWorkspaceFs;
      try {
        fs = await NodeWorkspaceFs.open(ws.root);
      } finally {
        process.env.PATH = saved;
      }
      assert.equal(fs.searchBackend, 'ripgrep', 'the system rg is found');
      const result = await grepSearchTool.execute({ pattern: 'documented' }, { fs });
      assert.equal(result.output, '1 match in 1 file for /documented/:\ndocs/notes.md\n  1: parse is documented here');
      assert.equal(existsSync(marker), false, 'the planted rg did not run');
      assert.equal(findExecutable('rg', [ws.root], `bin:.:${path.join(ws.root, 'bin')}`), findExecutable('rg', [], '/nonexistent'), 'only system folders are left to search');
    });

    it('explains an invalid pattern and bad arguments', async () => {
      const bad = await grepSearchTool.execute({ pattern: 'parse(' }, ws.context());
      assert.equal(bad.ok, false);
      assert.match(bad.output, /Invalid search pattern "parse\("/);
      assert.match((await grepSearchTool.execute({ pattern: 'x', glob: 3 }, ws.context())).output, /"glob" must be a string/);
      assert.match((await grepSearchTool.execute({ pattern: 'x', path: 'missing' }, ws.context())).output, /Path not found: missing/);
    });
  });

  describe('lsp', () => {
    it('says plainly when there is no editor to answer', async () => {
      const result = await lspTool.execute({ operation: 'hover', file_path: 'src/app.ts', line: 1, character: 10 }, ws.context());
      assert.equal(result.ok, false);
      assert.match(result.output, /Language features are not available here/);
    });

    it('asks the editor with the workspace-relative path', async () => {
      const asked: unknown[] = [];
      const lsp: LspProvider = {
        async query(request) {
          asked.push(request);
          return 'src/parse.ts:1:17';
        },
      };
      const result = await lspTool.execute({ operation: 'definition', file_path: path.join(ws.root, 'src/app.ts'), line: 2, character: 20 }, ws.context({ lsp }));
      assert.deepEqual(result, { ok: true, output: 'src/parse.ts:1:17' });
      assert.deepEqual(asked, [{ operation: 'definition', path: 'src/app.ts', line: 2, character: 20, query: undefined }]);
    });

    it('refuses outside paths and bad arguments before asking the editor', async () => {
      let asked = 0;
      const lsp: LspProvider = { query: async () => String(++asked) };
      for (const { path: requested, why } of escapingPaths(ws)) {
        const result = await lspTool.execute({ operation: 'symbols', file_path: requested }, ws.context({ lsp }));
        assert.equal(result.ok, false);
        assert.match(result.output, why);
      }
      assert.match((await lspTool.execute({ operation: 'rename', file_path: 'src/app.ts' }, ws.context({ lsp }))).output, /must be one of definition, references, hover, symbols/);
      assert.match((await lspTool.execute({ operation: 'hover', file_path: 'src/app.ts' }, ws.context({ lsp }))).output, /needs "line"/);
      assert.match((await lspTool.execute({ operation: 'hover', file_path: 'src/app.ts', line: 0 }, ws.context({ lsp }))).output, /"line" must be an integer ≥ 1/);
      assert.equal(asked, 0);
    });
  });
});
