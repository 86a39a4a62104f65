// Line counts as a diff shows them, and a write tool run against the dry-run file system: the
// exact content it would write, nothing on disk.
import * as assert from 'node:assert/strict';
import { DryRunWorkspaceFs } from '../../../src/core/checkpoints/dryRunFs';
import { lineChangeCounts, looksBinary } from '../../../src/core/checkpoints/lineDiff';
import { createToolRegistry } from '../../../src/core/tools';
import { makeCheckpointBox } from './checkpointKit';

describe('checkpoints: line counts and dry runs', () => {
  it('counts added and removed lines like a diff', () => {
    assert.deepEqual(lineChangeCounts('', ''), { added: 0, removed: 0 });
    assert.deepEqual(lineChangeCounts('', 'a\nb\n'), { added: 2, removed: 0 });
    assert.deepEqual(lineChangeCounts('a\nb\nc\n', 'a\nc\n'), { added: 0, removed: 1 });
    assert.deepEqual(lineChangeCounts('a\nb\nc\n', 'a\nB\nc\nd\n'), { added: 2, removed: 1 });
    assert.deepEqual(lineChangeCounts('x\ny\n', 'y\nx\n'), { added: 1, removed: 1 }, 'a swap is one line out, one in');
    assert.deepEqual(lineChangeCounts('a\nb', 'a\nb\n'), { added: 0, removed: 0 }, 'a final newline is not a line');
  });

  it('estimates a huge rewrite without taking quadratic time', () => {
    const before = Array.from({ length: 20_000 }, (_, i) => `old ${i}`).join('\n');
    const after = Array.from({ length: 20_000 }, (_, i) => (i % 2 ? `old ${i}` : `new ${i}`)).join('\n');
    assert.deepEqual(lineChangeCounts(before, after), { added: 10_000, removed: 10_000 });
  });

  it('tells binary content by a NUL byte', () => {
    assert.equal(looksBinary(Buffer.from('plain text\n')), false);
    assert.equal(looksBinary(Uint8Array.from([0x89, 0x50, 0x00, 0x47])), true);
  });

  it('runs edit against the dry-run fs: the exact result, the workspace untouched', async () => {
    const box = await makeCheckpointBox({ 'src/a.ts': 'export const a = 1;\r\nexport const b = 2;\r\n' });
    try {
      const fs = new DryRunWorkspaceFs(box.base);
      const edit = createToolRegistry().get('edit')!;
      const result = await edit.execute({ file_path: 'src/a.ts', old_string: 'export const a = 1;\n', new_string: 'export const a = 10;\n' }, { fs });
      assert.equal(result.ok, true, result.output);
      assert.equal(Buffer.from(fs.writes.get('src/a.ts')!).toString(), 'export const a = 10;\r\nexport const b = 2;\r\n', 'the tool kept the CRLF file CRLF');
      assert.equal(await box.read('src/a.ts'), 'export const a = 1;\r\nexport const b = 2;\r\n');
      const created = await createToolRegistry().get('write_file')!.execute({ file_path: 'new/b.ts', content: 'b\n' }, { fs });
      assert.equal(created.ok, true, created.output);
      assert.equal(Buffer.from(fs.writes.get('new/b.ts')!).toString(), 'b\n');
    } finally {
      await box.dispose();
    }
  });
});
