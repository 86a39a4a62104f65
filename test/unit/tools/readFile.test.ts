// read_file as the model uses it: paging, guards, and refusing anything outside the workspace.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { READ_MAX_BYTES, readFileTool } from '../../../src/core/tools/readFile';
import { addEscapes, escapingPaths, makeWorkspace, SECRET, withSlowMethods, type TempWorkspace } from './workspaceFixture';

const TEN_LINES = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

describe('read_file tool', () => {
  let ws: TempWorkspace;

  beforeEach(async () => {
    ws = await makeWorkspace({ 'src/ten.txt': TEN_LINES, 'empty.txt': '' });
    await addEscapes(ws);
  });

  afterEach(() => ws.cleanup());

  const run = (args: Record<string, unknown>) => readFileTool.execute(args, ws.context());

  it('returns the text as stored, without line numbers, for relative and absolute paths inside', async () => {
    assert.deepEqual(await run({ file_path: 'src/ten.txt' }), { ok: true, output: TEN_LINES.trimEnd() });
    assert.equal((await run({ file_path: path.join(ws.root, 'src/ten.txt') })).output, TEN_LINES.trimEnd());
  });

  it('pages by 0-based offset and limit and says how to read on', async () => {
    const page = await run({ file_path: 'src/ten.txt', offset: 2, limit: 3 });
    assert.equal(page.ok, true);
    assert.equal(page.output, 'line 3\nline 4\nline 5\n\n[Showing lines 3–5 of 10 in src/ten.txt. To read more, call read_file with offset=5.]');
    const last = await run({ file_path: 'src/ten.txt', offset: 8 });
    assert.equal(last.output, 'line 9\nline 10\n\n[Showing lines 9–10 of 10 in src/ten.txt.]');
    const past = await run({ file_path: 'src/ten.txt', offset: 10 });
    assert.equal(past.ok, false);
    assert.match(past.output, /offset 10 is past the end of src\/ten.txt, which has 10 lines/);
  });

  it('returns the first part of a large file and explains how to page', async () => {
    const line = 'x'.repeat(99);
    await ws.write('big.txt', `${line}\n`.repeat(Math.ceil((READ_MAX_BYTES * 2) / 100)));
    const result = await run({ file_path: 'big.txt' });
    assert.equal(result.ok, true);
    assert.ok(Buffer.byteLength(result.output) < READ_MAX_BYTES + 500);
    assert.match(result.output, /\[Showing lines 1–\d+ of \d+ in big.txt\. To read more, call read_file with offset=\d+\.\]$/);
  });

  it('refuses binary files, saying their size', async () => {
    await ws.write('image.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 13]));
    assert.deepEqual(await run({ file_path: 'image.png' }), { ok: false, output: 'Cannot show image.png: binary file, 8 bytes.' });
  });

  it('explains missing files, directories and empty files', async () => {
    const missing = await run({ file_path: 'src/nope.ts' });
    assert.equal(missing.ok, false);
    assert.match(missing.output, /File not found: src\/nope.ts/);
    const dir = await run({ file_path: 'src' });
    assert.equal(dir.ok, false);
    assert.match(dir.output, /src is a directory; use list_directory/);
    assert.deepEqual(await run({ file_path: 'empty.txt' }), { ok: true, output: '(empty.txt is empty)' });
  });

  it('refuses every path that leads outside the workspace, never showing what is there', async () => {
    for (const { path: requested, why } of escapingPaths(ws)) {
      const result = await run({ file_path: requested });
      assert.equal(result.ok, false, requested);
      assert.match(result.output, why, requested);
      assert.ok(result.output.includes(`"${requested}"`), `the refusal names ${requested}`);
      assert.ok(!result.output.includes(SECRET));
    }
  });

  it('answers bad argument types with a clear error instead of throwing', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{}, /argument "file_path" is required/],
      [{ file_path: 42 }, /"file_path" must be a string \(got number 42\)/],
      [{ file_path: 'src/ten.txt', offset: 'abc' }, /"offset" must be a non-negative integer/],
      [{ file_path: 'src/ten.txt', offset: -1 }, /"offset" must be a non-negative integer/],
      [{ file_path: 'src/ten.txt', limit: 0 }, /"limit" must be an integer ≥ 1/],
    ];
    for (const [args, message] of cases) {
      const result = await run(args);
      assert.equal(result.ok, false, JSON.stringify(args));
      assert.match(result.output, message);
    }
    assert.equal((await run({ file_path: 'src/ten.txt', offset: '1', limit: '1' })).output.split('\n')[0], 'line 2');
  });

  it('summarises the call in one line for the UI', () => {
    assert.equal(readFileTool.summarize({ file_path: 'src/app.ts', offset: 0, limit: 40 }), 'src/app.ts · lines 1–40');
    assert.equal(readFileTool.summarize({ file_path: 'src/app.ts' }), 'src/app.ts');
    assert.equal(readFileTool.summarize({ file_path: 7 }), '7');
  });

  it('stops a read that does not finish within its time limit (a hung disk) and says so', async () => {
    const hung = withSlowMethods(ws.fs, { readFile: () => new Promise<Uint8Array>(() => undefined) });
    const result = await readFileTool.execute({ file_path: 'src/ten.txt' }, { fs: hung, toolTimeLimitMs: 40 });
    assert.equal(result.ok, false);
    assert.match(result.output, /read_file did not finish within 40 ms and was stopped/);
  });
});
