// A multi-root window's tools: paths are the chat folder's, `../beta/x` (or an absolute path) into
// another open folder is that folder's path, and everything else outside stays refused — including
// a symlink in the chat's folder that points into the other one. A speculation's overlay sits on the
// chat's folder alone, so reaching into another folder there stops at a boundary.
import * as assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { FolderRoutingFs } from '../../../src/core/fs/folderRoutingFs';
import { NodeWorkspaceFs } from '../../../src/core/fs/nodeWorkspaceFs';
import { PathOutsideWorkspaceError } from '../../../src/core/fs/workspaceFs';
import { OverlayFs } from '../../../src/core/followup/overlayFs';
import { gateToolCall } from '../../../src/core/followup/speculationToolGate';
import { globTool } from '../../../src/core/tools/glob';
import { grepSearchTool } from '../../../src/core/tools/grepSearch';
import { listDirectoryTool } from '../../../src/core/tools/listDirectory';
import { readFileTool } from '../../../src/core/tools/readFile';
import { editTool } from '../../../src/core/tools/edit';

describe('multi-root: paths into another open folder', () => {
  let scratch: string;
  let alpha: string;
  let beta: string;
  let fs: FolderRoutingFs;
  let alphaFs: NodeWorkspaceFs;

  beforeEach(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'speculate-multiroot-'));
    alpha = path.join(scratch, 'alpha');
    beta = path.join(scratch, 'beta');
    await mkdir(path.join(alpha, 'src'), { recursive: true });
    await mkdir(path.join(beta, 'src'), { recursive: true });
    await writeFile(path.join(alpha, 'src/a.ts'), 'export const a = 1;\n');
    await writeFile(path.join(beta, 'src/b.ts'), 'export const b = 2;\n');
    await writeFile(path.join(scratch, 'outside.txt'), 'not in any folder\n');
    await symlink(path.join(beta, 'src'), path.join(alpha, 'link-to-beta'));
    alphaFs = await NodeWorkspaceFs.open(alpha);
    fs = new FolderRoutingFs(alphaFs, [await NodeWorkspaceFs.open(beta)]);
  });
  afterEach(async () => rm(scratch, { recursive: true, force: true }));

  it('read ../beta/x works, as that folder\u2019s file, and keeps its name', async () => {
    const read = await readFileTool.execute({ file_path: '../beta/src/b.ts' }, { fs });
    assert.equal(read.ok, true, read.output);
    assert.match(read.output, /export const b = 2;/);
    assert.equal(await fs.resolve('../beta/src/b.ts'), '../beta/src/b.ts');
    assert.equal(await fs.resolve(path.join(beta, 'src/b.ts')), '../beta/src/b.ts', 'an absolute path gets the same name');
    assert.equal(await fs.resolve('src/a.ts'), 'src/a.ts');
  });

  it('edits, lists, globs and searches there; the chat folder is untouched', async () => {
    const edited = await editTool.execute({ file_path: '../beta/src/b.ts', old_string: 'b = 2', new_string: 'b = 3' }, { fs });
    assert.equal(edited.ok, true, edited.output);
    assert.equal(await readFile(path.join(beta, 'src/b.ts'), 'utf8'), 'export const b = 3;\n');
    assert.equal(await readFile(path.join(alpha, 'src/a.ts'), 'utf8'), 'export const a = 1;\n');
    const listed = await listDirectoryTool.execute({ path: '../beta/src' }, { fs });
    assert.match(listed.output, /b\.ts/);
    const globbed = await globTool.execute({ pattern: '**/*.ts', path: '../beta' }, { fs });
    assert.match(globbed.output, /\.\.\/beta\/src\/b\.ts/);
    const found = await grepSearchTool.execute({ pattern: 'b = 3', path: '../beta' }, { fs });
    assert.match(found.output, /\.\.\/beta\/src\/b\.ts/);
  });

  it('a path outside every folder stays refused, and so does a symlink into the other folder', async () => {
    await assert.rejects(() => fs.resolve('../outside.txt'), PathOutsideWorkspaceError);
    await assert.rejects(() => fs.resolve(path.join(scratch, 'outside.txt')), PathOutsideWorkspaceError);
    await assert.rejects(() => fs.resolve('link-to-beta/b.ts'), PathOutsideWorkspaceError);
    await assert.rejects(() => fs.rename('src/a.ts', '../beta/src/a.ts'), /another folder/);
    assert.equal(await readFile(path.join(alpha, 'src/a.ts'), 'utf8'), 'export const a = 1;\n');
  });

  it('a speculation\u2019s overlay on the chat folder refuses ../beta (a boundary), and writes nothing there', async () => {
    const overlay = await OverlayFs.create({ base: alphaFs, tmpRoot: path.join(scratch, 'tmp'), avoidRoots: [beta] });
    try {
      await assert.rejects(() => overlay.resolve('../beta/src/b.ts'), PathOutsideWorkspaceError);
      const context = { approvalMode: 'auto-edit' as const, fs: overlay, overlayHasWrites: false, classifyShell: async () => ({ readOnly: false, reason: 'not asked' }) };
      const decision = await gateToolCall('edit', editTool, { file_path: '../beta/src/b.ts', old_string: 'b', new_string: 'c' }, context);
      assert.equal(decision.decision, 'boundary');
      assert.equal(decision.decision === 'boundary' ? decision.boundary.type : '', 'path');
      assert.equal(await readFile(path.join(beta, 'src/b.ts'), 'utf8'), 'export const b = 2;\n');
    } finally {
      await overlay.cleanup();
    }
  });
});
