// Accept never loses the user's work, end to end: a scripted model reads, the user edits or deletes
// the file while the speculation runs, the model writes from what it read — accept reports a
// conflict and the user's version stays, byte for byte.
import * as assert from 'node:assert/strict';
import { unlink } from 'node:fs/promises';
import * as path from 'node:path';
import type { ScriptFunction } from '../../fixtures/scriptedServer';
import { makeWorld, stepOf, type EngineWorld } from './engineKit';

const ORIGINAL = 'export const answer = 41;\n';
const USER_EDIT = 'export const answer = 41; // the user is editing this line\n';

/** A run that reads `file`, lets `meanwhile` happen (the user at work), then writes the whole file from its read. */
function staleWriteScript(file: string, meanwhile: () => Promise<void>): ScriptFunction {
  return async (request) => {
    switch (stepOf(request)) {
      case 0:
        return { toolCalls: [{ name: 'read_file', arguments: { file_path: file } }] };
      case 1:
        await meanwhile();
        return { toolCalls: [{ name: 'write_file', arguments: { file_path: file, content: 'export const answer = 42;\n' } }] };
      default:
        return { text: 'Set the answer to 42.' };
    }
  };
}

describe('Engine end-to-end: accept keeps what the user changed while the speculation ran', function () {
  this.timeout(20_000);
  let world: EngineWorld;

  afterEach(async () => {
    await world.dispose();
  });

  it('a stale read followed by a full write is a conflict; the user edit stays', async () => {
    world = await makeWorld({ 'src/answer.ts': ORIGINAL });
    world.server.setScript(staleWriteScript('src/answer.ts', () => world.write('src/answer.ts', USER_EDIT)));
    const speculation = world.speculate('set the answer to 42');
    const final = await speculation.done;
    assert.equal(final.status, 'completed', final.error ?? '');
    const result = await speculation.apply();
    assert.deepEqual(result.applied, []);
    assert.deepEqual(result.conflicts.map((c) => [c.path, c.reason]), [['src/answer.ts', 'modified']]);
    assert.equal(await world.read('src/answer.ts'), USER_EDIT);
    await speculation.disposeOverlay();
  });

  it('a file the user deleted while the speculation ran is not re-created by accept', async () => {
    world = await makeWorld({ 'src/answer.ts': ORIGINAL });
    world.server.setScript(staleWriteScript('src/answer.ts', () => unlink(path.join(world.root, 'src/answer.ts'))));
    const speculation = world.speculate('set the answer to 42');
    assert.equal((await speculation.done).status, 'completed');
    const result = await speculation.apply();
    assert.deepEqual(result.conflicts.map((c) => [c.path, c.reason]), [['src/answer.ts', 'deleted']]);
    await assert.rejects(world.read('src/answer.ts'), /ENOENT/);
    await speculation.disposeOverlay();
  });

  it('with nobody else at work, the same run applies', async () => {
    world = await makeWorld({ 'src/answer.ts': ORIGINAL });
    world.server.setScript(staleWriteScript('src/answer.ts', async () => undefined));
    const speculation = world.speculate('set the answer to 42');
    assert.equal((await speculation.done).status, 'completed');
    assert.deepEqual(await speculation.apply(), { applied: ['src/answer.ts'], conflicts: [] });
    assert.equal(await world.read('src/answer.ts'), 'export const answer = 42;\n');
    await speculation.disposeOverlay();
  });
});
