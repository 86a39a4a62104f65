// list_directory and glob: what the model sees of the workspace's shape.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { globTool } from '../../../src/core/tools/glob';
import { listDirectoryTool } from '../../../src/core/tools/listDirectory';
import { addEscapes, escapingPaths, makeWorkspace, SECRET, type TempWorkspace } from './workspaceFixture';

describe('list_directory and glob tools', () => {
  let ws: TempWorkspace;

  beforeEach(async () => {
    ws = await makeWorkspace({
      '.gitignore': 'build/\n',
      'src/app.ts': '',
      'src/app.test.ts': '',
      'src/lib/util.ts': '',
      'build/out.js': '',
      'notes.log': '',
      'README.md': '',
      '.git/HEAD': '',
    });
    await addEscapes(ws);
  });

  afterEach(() => ws.cleanup());

  describe('list_directory', () => {
    const run = (args: Record<string, unknown>) => listDirectoryTool.execute(args, ws.context());

    it('lists folders first with a slash, then files, leaving out .git and what ignore names', async () => {
      const result = await run({ path: '.', ignore: ['*.log'] });
      assert.equal(result.ok, true);
      // Symlinks leading outside (and dangling ones) are not listed at all.
      assert.equal(result.output, 'Directory . (4 entries):\nbuild/\nsrc/\n.gitignore\nREADME.md');
    });

    it('lists a subfolder given relatively or absolutely', async () => {
      const expected = 'Directory src (3 entries):\nlib/\napp.test.ts\napp.ts';
      assert.equal((await run({ path: 'src' })).output, expected);
      assert.equal((await run({ path: path.join(ws.root, 'src') })).output, expected);
    });

    it('refuses paths outside, and explains missing folders and files', async () => {
      for (const { path: requested, why } of escapingPaths(ws)) {
        const result = await run({ path: requested });
        assert.equal(result.ok, false, requested);
        assert.match(result.output, why);
      }
      const outsideDir = await run({ path: 'linkdir-out' });
      assert.equal(outsideDir.ok, false);
      assert.ok(!outsideDir.output.includes('secret.txt'));
      assert.match((await run({ path: 'nope' })).output, /Directory not found: nope/);
      assert.match((await run({ path: 'README.md' })).output, /README.md is a file/);
    });

    it('answers bad arguments clearly', async () => {
      assert.match((await run({})).output, /argument "path" is required/);
      assert.match((await run({ path: '.', ignore: 'x' })).output, /"ignore" must be an array of strings/);
      assert.match((await run({ path: ['src'] })).output, /"path" must be a string \(got an array\)/);
    });
  });

  describe('glob', () => {
    const run = (args: Record<string, unknown>) => globTool.execute(args, ws.context());

    it('finds files by pattern, honouring .gitignore, with workspace-relative paths', async () => {
      const result = await run({ pattern: '**/*.ts' });
      assert.deepEqual(result, { ok: true, output: '3 files match "**/*.ts":\nsrc/app.test.ts\nsrc/app.ts\nsrc/lib/util.ts' });
      assert.equal((await run({ pattern: '**/*.js' })).output, 'No files match "**/*.js".');
    });

    it('searches below path, which may be absolute inside the workspace', async () => {
      assert.equal((await run({ pattern: '*.ts', path: 'src' })).output, '2 files match "*.ts" in src:\nsrc/app.test.ts\nsrc/app.ts');
      assert.equal((await run({ pattern: '**/util.ts', path: path.join(ws.root, 'src') })).output, '1 file matches "**/util.ts" in src:\nsrc/lib/util.ts');
    });

    it('refuses paths and patterns that lead outside the workspace', async () => {
      for (const { path: requested, why } of escapingPaths(ws)) {
        const result = await run({ pattern: '*', path: requested });
        assert.equal(result.ok, false, requested);
        assert.match(result.output, why);
      }
      for (const pattern of ['../outside/*', path.join(ws.outside, '*'), '/etc/pass*']) {
        const result = await run({ pattern });
        assert.equal(result.ok, false, pattern);
        assert.ok(result.output.includes(`"${pattern}"`));
        assert.ok(!result.output.includes('secret.txt'));
      }
      assert.ok(!(await run({ pattern: '**/*' })).output.includes(SECRET));
    });

    it('answers bad arguments clearly', async () => {
      assert.match((await run({})).output, /argument "pattern" is required/);
      assert.match((await run({ pattern: 5 })).output, /"pattern" must be a string/);
      assert.match((await run({ pattern: '*', path: 'README.md' })).output, /README.md is a file/);
    });

    it('summarises the call', () => {
      assert.equal(globTool.summarize({ pattern: '**/*.ts', path: 'src' }), '**/*.ts in src');
      assert.equal(listDirectoryTool.summarize({ path: 'src' }), 'src');
    });
  });
});
