// The engine's state stays out of the workspace end to end: with TMPDIR inside the workspace a
// speculation keeps its overlay in a private folder outside (git and the user see nothing), and
// with no such folder left it fails with a message that says what to do.
import * as assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import * as path from 'node:path';
import { startSpeculation } from '../../../src/core/followup/speculation';
import { openWorkspaceServices } from '../../../src/core/workspaceServices';
import { fileEntry, makeWorld, treeSnapshot, type EngineWorld } from './engineKit';

describe('Engine end-to-end: overlays never live inside the workspace', function () {
  this.timeout(20_000);
  let world: EngineWorld;

  afterEach(async () => {
    await world.dispose();
  });

  async function speculateWith(tmpRoot: string, fallbackTmpRoots: string[]) {
    const services = await openWorkspaceServices(world.root, { tmpRoot, fallbackTmpRoots });
    world.server.setScript([{ toolCalls: [{ name: 'write_file', arguments: { file_path: 'src/new.ts', content: 'export const created = true;\n' } }] }, { text: 'Created src/new.ts.' }]);
    return startSpeculation('create src/new.ts', {
      llm: world.llm,
      params: world.params(),
      tools: services.tools,
      approvalMode: 'auto-edit',
      createOverlay: services.createOverlay,
      classifyShell: services.classifyShell,
      toolContext: services.toolContext,
    });
  }

  it('TMPDIR inside the workspace: the run completes, the workspace shows nothing until accept', async () => {
    world = await makeWorld({ 'src/a.ts': 'export const a = 1;\n', 'tmp/.keep': '' });
    const fallback = path.join(world.parent, 'fallback');
    await mkdir(fallback);
    const before = await treeSnapshot(world.root);
    const speculation = await speculateWith(path.join(world.root, 'tmp'), [fallback]);
    const final = await speculation.done;
    assert.equal(final.status, 'completed', final.error ?? '');
    assert.deepEqual(await treeSnapshot(world.root), before);
    assert.ok(speculation.overlayFs && !(speculation.overlayFs as unknown as { dir: string }).dir.startsWith(world.root));
    await speculation.apply();
    assert.deepEqual(await treeSnapshot(world.root), { ...before, 'src/new.ts': fileEntry('export const created = true;\n') });
    await speculation.disposeOverlay();
  });

  it('no private folder outside the workspace: the speculation fails and says to set TMPDIR', async () => {
    world = await makeWorld({ 'src/a.ts': 'export const a = 1;\n', 'tmp/.keep': '' });
    const before = await treeSnapshot(world.root);
    const speculation = await speculateWith(path.join(world.root, 'tmp'), []);
    const final = await speculation.done;
    assert.equal(final.status, 'failed');
    assert.match(final.error ?? '', /every fallback lie inside an open workspace\. Set TMPDIR to a folder outside it\./);
    assert.deepEqual(await treeSnapshot(world.root), before);
  });
});
