// Paths are used exactly as given: "a.txt " is not "a.txt", nothing is trimmed, and a new file
// or folder whose name begins or ends with whitespace (or holds a control character) is refused.
import * as assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { OverlayFs } from '../../../src/core/followup/overlayFs';
import { UnsafeNameError, type WorkspaceFs } from '../../../src/core/fs/workspaceFs';
import { editTool } from '../../../src/core/tools/edit';
import { globTool } from '../../../src/core/tools/glob';
import { readFileTool } from '../../../src/core/tools/readFile';
import { writeFileTool } from '../../../src/core/tools/writeFile';
import { makeWorkspace, type TempWorkspace } from '../tools/workspaceFixture';

describe('paths are used exactly as given', () => {
  let ws: TempWorkspace;
  let overlay: OverlayFs;

  beforeEach(async () => {
    ws = await makeWorkspace({ 'a.txt': 'the real a\n', 'spaced .txt': 'a name that really ends in a space before the dot\n', 'b.txt ': 'b with a trailing space\n', 'src/x.ts': 'x\n' });
    overlay = await OverlayFs.create({ base: ws.fs, tmpRoot: path.join(path.dirname(ws.root), 'tmp') });
  });

  afterEach(async () => {
    await overlay.cleanup();
    await ws.cleanup();
  });

  const both = (): [string, WorkspaceFs][] => [
    ['workspace', ws.fs],
    ['overlay', overlay],
  ];

  it('write_file "a.txt " does not touch a.txt, and refuses to create a name ending in a space', async () => {
    for (const [name, fs] of both()) {
      const result = await writeFileTool.execute({ file_path: 'a.txt ', content: 'clobbered' }, { fs });
      assert.equal(result.ok, false, name);
      assert.match(result.output, /Refusing to create "a\.txt ": the name begins or ends with whitespace/, name);
      assert.equal(Buffer.from(await fs.readFile('a.txt')).toString(), 'the real a\n', name);
    }
    assert.equal(await readFile(path.join(ws.root, 'a.txt'), 'utf8'), 'the real a\n');
    assert.deepEqual((await readdir(ws.root)).sort(), ['a.txt', 'b.txt ', 'spaced .txt', 'src']);
  });

  it('refuses new names with leading spaces, newlines or tabs, in files and in folders', async () => {
    for (const [name, fs] of both()) {
      for (const bad of [' a.txt', 'src/new\nline.ts', 'tab\t/x.ts', 'new dir /x.ts', 'src/ lead/x.ts']) {
        await assert.rejects(fs.writeFile(bad, 'x'), UnsafeNameError, `${name}: ${JSON.stringify(bad)}`);
      }
      await assert.rejects(fs.rename('src/x.ts', 'src/x.ts '), UnsafeNameError, name);
    }
    assert.deepEqual((await readdir(ws.root)).sort(), ['a.txt', 'b.txt ', 'spaced .txt', 'src']);
    assert.deepEqual(await readdir(path.join(ws.root, 'src')), ['x.ts']);
  });

  it('reads, edits and overwrites a file that really has such a name, by that exact name', async () => {
    // The overlay first: its edit stays in the overlay, so the workspace's run still sees the original.
    for (const [name, fs] of both().reverse()) {
      const read = await readFileTool.execute({ file_path: 'b.txt ' }, { fs });
      assert.deepEqual(read, { ok: true, output: 'b with a trailing space' }, name);
      const edited = await editTool.execute({ file_path: 'b.txt ', old_string: 'trailing', new_string: 'kept' }, { fs });
      assert.equal(edited.ok, true, `${name}: ${edited.output}`);
      assert.equal(Buffer.from(await fs.readFile('b.txt ')).toString(), 'b with a kept space\n', name);
    }
    const missing = await readFileTool.execute({ file_path: ' a.txt' }, { fs: ws.fs });
    assert.equal(missing.ok, false);
    assert.match(missing.output, /not found: {2}a\.txt/);
  });

  it('does not trim glob patterns either', async () => {
    for (const [name, fs] of both()) {
      assert.match((await globTool.execute({ pattern: ' *.txt' }, { fs })).output, /No files match " \*\.txt"/, name);
      assert.match((await globTool.execute({ pattern: '*.txt' }, { fs })).output, /a\.txt/, name);
      assert.match((await globTool.execute({ pattern: '* .txt' }, { fs })).output, /^1 file matches[^\n]*\nspaced \.txt$/, name);
    }
  });
});
