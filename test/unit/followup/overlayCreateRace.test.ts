// Overlays of one process share a pid folder that cleanup() removes once it is empty: creating one
// overlay while another is cleaned up must never fail because that folder vanished mid-create.
import * as assert from 'node:assert/strict';
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { NodeWorkspaceFs } from '../../../src/core/fs/nodeWorkspaceFs';
import { OverlayFs } from '../../../src/core/followup/overlayFs';
import { OVERLAY_PARENT } from '../../../src/core/followup/overlay/recovery';
import { exists } from './overlayKit';

describe('OverlayFs create while another overlay is cleaned up', () => {
  let parent: string;

  beforeEach(async () => {
    parent = await realpath(await mkdtemp(path.join(os.tmpdir(), 'speculate-overlay-race-')));
  });

  afterEach(() => rm(parent, { recursive: true, force: true }));

  it('creates every overlay of many overlapping create/cleanup pairs', async () => {
    await mkdir(path.join(parent, 'ws'));
    const base = await NodeWorkspaceFs.open(path.join(parent, 'ws'));
    const tmpRoot = path.join(parent, 'tmp');
    const failures: string[] = [];
    let created = 0;
    // Two loops out of step: one's cleanup (which removes the then empty pid folder) keeps landing
    // between the other's "ensure the pid folder" and "make my folder". Before the fix about 1 create
    // in 15 failed here with ENOENT.
    const loop = async (name: string) => {
      for (let i = 0; i < 150; i++) {
        let overlay: OverlayFs;
        try {
          overlay = await OverlayFs.create({ base, tmpRoot, fallbackTmpRoots: [] });
        } catch (error) {
          failures.push(error instanceof Error ? error.message : String(error));
          continue;
        }
        created++;
        await overlay.writeFile(`${name}.txt`, String(i));
        assert.equal(Buffer.from(await overlay.readFile(`${name}.txt`)).toString(), String(i));
        await overlay.cleanup();
      }
    };
    await Promise.all([loop('a'), loop('b')]);
    assert.deepEqual(failures, []);
    assert.equal(created, 300);
    assert.equal(await exists(path.join(tmpRoot, OVERLAY_PARENT, String(process.pid))), false, 'the last cleanup removes the pid folder');
  });
});
