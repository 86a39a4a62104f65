// The read-only `speculation:` file system in the real workbench: the overlay merged over the
// workspace, change events as the run writes, read-only, and FileNotFound once the run is gone.
import * as assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { OverlayFs } from '../../src/core/followup/overlayFs';
import { NodeWorkspaceFs } from '../../src/core/fs/nodeWorkspaceFs';
import { speculateApi, workspaceRoot } from './api';

const RUN = 'itest-run';
/** The folder's name is the URI's first segment: speculation://<run>/<folder>/<path>. */
const FOLDER = vscode.workspace.workspaceFolders?.[0]?.name ?? 'workspace';
const uri = (path: string) => vscode.Uri.from({ scheme: 'speculation', authority: RUN, path: `/${FOLDER}/${path}` });

describe('speculation: file system', () => {
  let overlay: OverlayFs;

  before(async () => {
    const api = await speculateApi();
    const base = await NodeWorkspaceFs.open(workspaceRoot().fsPath);
    overlay = await OverlayFs.create({ base });
    await overlay.writeFile('src/greet.ts', 'export const speculated = true;\n');
    await overlay.writeFile('src/new.ts', 'export const added = 1;\n');
    api.fsProvider.addRun(RUN, { fs: overlay, folder: FOLDER, onDidChange: (listener) => overlay.onDidChange(listener) });
  });
  after(async () => {
    const api = await speculateApi();
    api.fsProvider.removeRun(RUN);
    await overlay.cleanup();
  });

  it('reads the speculated version of a written file and the real one of the rest', async () => {
    assert.equal(Buffer.from(await vscode.workspace.fs.readFile(uri('src/greet.ts'))).toString(), 'export const speculated = true;\n');
    assert.match(Buffer.from(await vscode.workspace.fs.readFile(uri('README.md'))).toString(), /Demo workspace/);
    const document = await vscode.workspace.openTextDocument(uri('src/new.ts'));
    assert.equal(document.getText(), 'export const added = 1;\n');
  });

  it('stats and lists the merged view: new files appear, the real workspace is untouched', async () => {
    const stat = await vscode.workspace.fs.stat(uri('src/new.ts'));
    assert.equal(stat.type, vscode.FileType.File);
    assert.equal(stat.permissions, vscode.FilePermission.Readonly);
    const entries = new Map(await vscode.workspace.fs.readDirectory(uri('src')));
    assert.equal(entries.get('new.ts'), vscode.FileType.File);
    assert.equal(entries.get('greet.ts'), vscode.FileType.File);
    assert.equal(existsSync(join(workspaceRoot().fsPath, 'src/new.ts')), false);
  });

  it('fires a change event when the running speculation writes', async () => {
    const api = await speculateApi();
    const changed = new Promise<vscode.Uri[]>((resolve) => {
      const subscription = api.fsProvider.onDidChangeFile((events) => {
        subscription.dispose();
        resolve(events.map((e) => e.uri));
      });
    });
    await overlay.writeFile('src/later.ts', 'later\n');
    const uris = await changed;
    assert.ok(uris.some((u) => u.toString() === uri('src/later.ts').toString()), uris.map(String).join(', '));
  });

  it('names the folder: the same path under another folder name is not this run\'s', async () => {
    const elsewhere = vscode.Uri.from({ scheme: 'speculation', authority: RUN, path: '/beta/src/greet.ts' });
    await assert.rejects(() => Promise.resolve(vscode.workspace.fs.stat(elsewhere)), (error: unknown) => error instanceof vscode.FileSystemError && error.code === 'FileNotFound');
  });

  it('refuses writes: a preview is read-only', async () => {
    await assert.rejects(() => Promise.resolve(vscode.workspace.fs.writeFile(uri('src/greet.ts'), Buffer.from('x'))));
    assert.equal(Buffer.from(await vscode.workspace.fs.readFile(uri('src/greet.ts'))).toString(), 'export const speculated = true;\n');
  });

  it('answers FileNotFound for a finished or unknown run', async () => {
    const api = await speculateApi();
    const stale = vscode.Uri.from({ scheme: 'speculation', authority: 'finished-run', path: `/${FOLDER}/src/greet.ts` });
    await assert.rejects(() => Promise.resolve(vscode.workspace.fs.stat(stale)), (error: unknown) => error instanceof vscode.FileSystemError && error.code === 'FileNotFound');
    api.fsProvider.addRun('short-lived', { fs: overlay, folder: FOLDER });
    await vscode.workspace.fs.stat(vscode.Uri.from({ scheme: 'speculation', authority: 'short-lived', path: `/${FOLDER}/src/new.ts` }));
    api.fsProvider.removeRun('short-lived');
    await assert.rejects(() => Promise.resolve(vscode.workspace.fs.stat(vscode.Uri.from({ scheme: 'speculation', authority: 'short-lived', path: `/${FOLDER}/src/new.ts` }))));
  });
});
