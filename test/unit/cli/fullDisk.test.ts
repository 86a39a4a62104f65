// `speculate --accept` onto a full disk (a small tmpfs mounted for the test, filled to the last
// page): the accept is refused with the disk named, and the workspace stays byte for byte as it was.
import * as assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoReply } from '../../fixtures/scripted/demoScript';
import { ScriptedServer } from '../../fixtures/scriptedServer';
import { mountSmallDisk, type SmallDisk } from '../fs/smallDisk';
import { repo, runCli as run, tree } from './cliKit';

describe('headless CLI: speculate --accept onto a full disk', function () {
  this.timeout(60_000);
  let disk: SmallDisk;
  let model: ScriptedServer;
  let scratch: string;

  before(async () => {
    disk = await mountSmallDisk(256);
    model = new ScriptedServer({ script: (request) => demoReply(request.body ?? {}) });
    await model.start();
    scratch = mkdtempSync(join(tmpdir(), 'cli-full-'));
    mkdirSync(join(scratch, 'tmp'));
  });
  after(async () => {
    await model.close();
    await disk.unmount();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('refuses the accept naming the disk and what was needed; nothing in the workspace changes', async () => {
    const workspace = join(disk.dir, 'ws');
    cpSync(join(repo, 'test/fixtures/workspaces/demo'), workspace, { recursive: true });
    // Fill the disk to its last byte: the accept's temp file then finds no room.
    try {
      writeFileSync(join(disk.dir, 'filler'), Buffer.alloc(await disk.freeBytes()));
    } catch {
      // ENOSPC on the very last page is what we want.
    }
    const before = tree(workspace);
    const result = await run(
      ['speculate', '--workspace', workspace, '--base-url', model.baseUrl, '--model', 'demo', '--suggestion', 'read src/greet.ts and add a farewell', '--approval-mode', 'auto-edit', '--accept', '--state-dir', join(scratch, 'state')],
      { TMPDIR: join(scratch, 'tmp') },
    );
    assert.equal(result.code, 0, result.stderr);
    const out = JSON.parse(result.stdout) as { status: string; applied: unknown; error: string | null };
    assert.equal(out.status, 'completed');
    assert.match(out.error ?? '', new RegExp(`accept failed: Accepting the speculation failed while preparing "src/greet\\.ts": the disk holding ${workspace}/src \\(mounted at ${disk.dir}\\) is full: [\\d.]+ (bytes|KB) needed, 0 bytes free; no file in the workspace was changed`));
    assert.deepEqual(tree(workspace), before);
  });
});
