// Reads one folder's .vscode/mcp.json as untrusted input: a real file only (not a link to elsewhere),
// bounded in size, every problem a sentence naming the file. Node only (no vscode import), so tests run it.
import { lstat, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseMcpConfigText } from '../../core/mcp';
import type { WorkspaceMcpFile } from './mcpAllowList';

/** A workspace's mcp.json larger than this is not read (it is configuration, not data). */
export const MAX_MCP_JSON_BYTES = 1024 * 1024;

export interface McpFolder {
  /** The folder's key in the allow-list (its URI). */
  workspace: string;
  /** Its path on disk. */
  path: string;
  /** Its name, for the file's label ("<name>/.vscode/mcp.json"). */
  name: string;
}

export async function readWorkspaceMcpFile(folder: McpFolder, env: Record<string, string | undefined> = process.env): Promise<WorkspaceMcpFile> {
  const { workspace } = folder;
  const path = join(folder.path, '.vscode', 'mcp.json');
  const source = `${folder.name}/.vscode/mcp.json`;
  const refused = (error: string): WorkspaceMcpFile => ({ workspace, parse: { servers: [], errors: [error] } });
  let text: string;
  try {
    const info = await lstat(path);
    // A link could make the list show (in its parse error) a file from elsewhere on the machine.
    if (info.isSymbolicLink()) return refused(`${source} is a symbolic link; Speculate reads only a real file there, so none of its servers is offered.`);
    if (!info.isFile()) return refused(`${source} is not a file, so none of its servers is offered.`);
    if (info.size > MAX_MCP_JSON_BYTES) return refused(`${source} is larger than 1 MB and was not read, so none of its servers is offered.`);
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { workspace, parse: null };
    return refused(`${source} could not be read (${code ?? (error as Error).message}), so none of its servers is offered.`);
  }
  return { workspace, parse: parseMcpConfigText(text, source, { workspaceFolder: folder.path, userHome: homedir(), env }) };
}
