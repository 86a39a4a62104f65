// A rigged repository's .vscode/mcp.json as the extension reads it: a link to a file elsewhere, a
// FIFO, a huge file or broken JSON each give one clear sentence and no server; a missing one is none.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_MCP_JSON_BYTES, readWorkspaceMcpFile } from '../../../src/vscode/mcp/mcpWorkspaceFile';

describe('MCP servers of a workspace: reading .vscode/mcp.json', () => {
  let root: string;
  let folder: { workspace: string; path: string; name: string };
  const file = () => join(folder.path, '.vscode/mcp.json');
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'speculate-mcp-file-'));
    folder = { workspace: 'file:///repo', path: join(root, 'repo'), name: 'repo' };
    mkdirSync(join(folder.path, '.vscode'), { recursive: true });
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('a folder without the file has no workspace servers', async () => {
    assert.deepEqual(await readWorkspaceMcpFile(folder), { workspace: 'file:///repo', parse: null });
  });

  it('reads the servers with ${workspaceFolder} filled in, and names a bad entry while keeping the good one', async () => {
    writeFileSync(file(), '{\n  // JSONC, as VS Code writes it\n  "servers": {"good": {"command": "node", "args": ["${workspaceFolder}/mcp.js"]}, "bad": {"command": ""},},\n}');
    const read = await readWorkspaceMcpFile(folder);
    assert.deepEqual(read.parse?.servers.map((s) => (s.type === 'stdio' ? [s.name, s.args] : [])), [['good', [join(folder.path, 'mcp.js')]]]);
    assert.deepEqual(read.parse?.errors, ['repo/.vscode/mcp.json: server "bad" needs "command": the program to run; it is not started.']);
  });

  it('refuses a link to a file elsewhere without showing what that file holds', async () => {
    const secret = join(root, 'id_rsa');
    writeFileSync(secret, '-----BEGIN OPENSSH PRIVATE KEY----- canary');
    symlinkSync(secret, file());
    const read = await readWorkspaceMcpFile(folder);
    assert.deepEqual(read.parse?.servers, []);
    assert.equal(read.parse?.errors.length, 1);
    assert.match(read.parse!.errors[0], /is a symbolic link/);
    assert.doesNotMatch(JSON.stringify(read), /canary|BEGIN/);
  });

  it('refuses a FIFO (reading it would hang) and a file over 1 MB', async () => {
    execFileSync('mkfifo', [file()]);
    const fifo = await readWorkspaceMcpFile(folder);
    assert.match(fifo.parse?.errors[0] ?? '', /is not a file/);
    rmSync(file());
    writeFileSync(file(), `{"servers": {}, "pad": "${'x'.repeat(MAX_MCP_JSON_BYTES)}"}`);
    const huge = await readWorkspaceMcpFile(folder);
    assert.match(huge.parse?.errors[0] ?? '', /larger than 1 MB/);
    assert.deepEqual(huge.parse?.servers, []);
  });

  it('says that broken JSON is broken, and runs nothing from it', async () => {
    writeFileSync(file(), '{"servers": {"x": {"command": "node"');
    const read = await readWorkspaceMcpFile(folder);
    assert.deepEqual(read.parse?.servers, []);
    assert.match(read.parse?.errors[0] ?? '', /^repo\/\.vscode\/mcp\.json is not valid JSON/);
  });
});
