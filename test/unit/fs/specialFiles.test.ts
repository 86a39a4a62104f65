// FIFOs and sockets in a workspace: every file tool, on the real workspace and on the overlay,
// refuses them without opening them (opening a FIFO blocks until a writer comes), and never hangs.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { lstat } from 'node:fs/promises';
import * as net from 'node:net';
import * as path from 'node:path';
import { OverlayFs } from '../../../src/core/followup/overlayFs';
import { NodeWorkspaceFs } from '../../../src/core/fs/nodeWorkspaceFs';
import { findExecutable } from '../../../src/core/fs/ripgrep';
import { SpecialFileError, type WorkspaceFs } from '../../../src/core/fs/workspaceFs';
import { editTool } from '../../../src/core/tools/edit';
import { globTool } from '../../../src/core/tools/glob';
import { grepSearchTool } from '../../../src/core/tools/grepSearch';
import { listDirectoryTool } from '../../../src/core/tools/listDirectory';
import { readFileTool } from '../../../src/core/tools/readFile';
import type { Tool, ToolResult } from '../../../src/core/tools/types';
import { writeFileTool } from '../../../src/core/tools/writeFile';
import { makeWorkspace, type TempWorkspace } from '../tools/workspaceFixture';

/** Fails the test instead of hanging when a call does not settle (a FIFO opened for reading blocks). */
async function settlesSoon<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not return: it is blocked on a special file`)), 5_000);
  });
  try {
    return await Promise.race([work, hang]);
  } finally {
    clearTimeout(timer);
  }
}

describe('special files (FIFOs, sockets) in the workspace', () => {
  let ws: TempWorkspace;
  let server: net.Server;

  beforeEach(async () => {
    ws = await makeWorkspace({ 'src/app.ts': 'export const pipe = 1;\n', 'notes.md': 'pipe notes\n' });
    execFileSync('mkfifo', [path.join(ws.root, 'src/pipe.fifo')]);
    execFileSync('mkfifo', [path.join(ws.root, 'pipe.txt')]);
    await ws.link('src/link-to-fifo.txt', path.join(ws.root, 'src/pipe.fifo'));
    server = net.createServer();
    await new Promise<void>((resolve) => server.listen(path.join(ws.root, 'src/app.sock'), resolve));
  });

  afterEach(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await ws.cleanup();
  });

  async function fileSystems(): Promise<{ name: string; fs: WorkspaceFs; dispose(): Promise<void> }[]> {
    const rg = findExecutable('rg');
    assert.ok(rg, 'ripgrep (rg) must be on PATH for this test: apt-get install ripgrep');
    const withRg = await NodeWorkspaceFs.open(ws.root, { ripgrepPath: rg });
    const overlay = await OverlayFs.create({ base: ws.fs, tmpRoot: path.join(path.dirname(ws.root), 'tmp') });
    await overlay.writeFile('src/speculated.ts', 'export const speculated = "pipe";\n');
    return [
      { name: 'workspace (JavaScript search)', fs: ws.fs, dispose: async () => undefined },
      { name: 'workspace (ripgrep)', fs: withRg, dispose: async () => undefined },
      { name: 'overlay', fs: overlay, dispose: () => overlay.cleanup() },
    ];
  }

  const run = (tool: Tool, args: Record<string, unknown>, fs: WorkspaceFs): Promise<ToolResult> =>
    settlesSoon(tool.execute(args, { fs }), `${tool.name} ${JSON.stringify(args)}`);

  it('read_file, edit and write_file refuse a FIFO, a socket and a symlink to a FIFO, saying what it is', async () => {
    for (const { name, fs, dispose } of await fileSystems()) {
      for (const target of ['src/pipe.fifo', 'pipe.txt', 'src/link-to-fifo.txt', 'src/app.sock']) {
        const calls: [Tool, Record<string, unknown>][] = [
          [readFileTool, { file_path: target }],
          [editTool, { file_path: target, old_string: 'a', new_string: 'b' }],
          [editTool, { file_path: target, old_string: '', new_string: 'created' }],
          [writeFileTool, { file_path: target, content: 'replaced' }],
        ];
        for (const [tool, args] of calls) {
          const result = await run(tool, args, fs);
          assert.equal(result.ok, false, `${name}: ${tool.name} on ${target}`);
          assert.match(result.output, /not a regular file \(a named pipe, socket or device\)/, `${name}: ${tool.name} on ${target}: ${result.output}`);
        }
      }
      await dispose();
    }
    // Nothing was replaced: the FIFOs and the socket are still what they were.
    assert.ok((await lstat(path.join(ws.root, 'src/pipe.fifo'))).isFIFO());
    assert.ok((await lstat(path.join(ws.root, 'pipe.txt'))).isFIFO());
    assert.ok((await lstat(path.join(ws.root, 'src/app.sock'))).isSocket());
  });

  it('a device node in the workspace (an endless /dev/zero) is refused the same way', async () => {
    assert.equal(process.getuid?.(), 0, 'making a device node needs root (CI runs as root)');
    execFileSync('mknod', [path.join(ws.root, 'zero'), 'c', '1', '5']);
    for (const { name, fs, dispose } of await fileSystems()) {
      const read = await run(readFileTool, { file_path: 'zero' }, fs);
      assert.match(read.output, /not a regular file/, name);
      await assert.rejects(settlesSoon(fs.readFile('zero'), `${name} readFile`), (error: unknown) => error instanceof SpecialFileError && /character device/.test(error.message));
      await dispose();
    }
  });

  it('the file system ports refuse to open them too, with SpecialFileError', async () => {
    for (const { name, fs, dispose } of await fileSystems()) {
      await assert.rejects(settlesSoon(fs.readFile('src/pipe.fifo'), `${name} readFile`), (error: unknown) => error instanceof SpecialFileError && /named pipe \(FIFO\)/.test(error.message));
      await assert.rejects(settlesSoon(fs.writeFile('pipe.txt', 'x'), `${name} writeFile`), SpecialFileError);
      assert.equal((await fs.stat('src/app.sock'))?.type, 'special', name);
      await dispose();
    }
  });

  it('listings, globs and searches leave them out and return', async () => {
    for (const { name, fs, dispose } of await fileSystems()) {
      const listed = await run(listDirectoryTool, { path: 'src' }, fs);
      assert.equal(listed.ok, true, name);
      assert.doesNotMatch(listed.output, /pipe\.fifo|app\.sock|link-to-fifo/, name);
      const globbed = await run(globTool, { pattern: '**/*' }, fs);
      assert.doesNotMatch(globbed.output, /pipe\.fifo|pipe\.txt|app\.sock|link-to-fifo/, name);
      assert.match(globbed.output, /src\/app\.ts/, name);
      const searched = await run(grepSearchTool, { pattern: 'pipe' }, fs);
      assert.equal(searched.ok, true, `${name}: ${searched.output}`);
      assert.match(searched.output, /src\/app\.ts/, name);
      assert.doesNotMatch(searched.output, /pipe\.fifo|pipe\.txt|app\.sock/, name);
      const inPipe = await run(grepSearchTool, { pattern: 'pipe', path: 'src/pipe.fifo' }, fs);
      assert.doesNotMatch(inPipe.output, /pipe\.fifo:\d/, `${name}: searching the FIFO itself finds nothing in it`);
      const listPipe = await run(listDirectoryTool, { path: 'pipe.txt' }, fs);
      assert.match(listPipe.output, /not a regular file/, name);
      await dispose();
    }
  });
});
