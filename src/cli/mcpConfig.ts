// `--mcp-config FILE` of `chat` and `speculate` (HEADLESS-CLI.md): MCP servers in the shape of VS
// Code's mcp.json. The file stands for the user's own settings, so its servers start without asking;
// a file that cannot be used is bad usage (exit 2, one line), never a run with servers silently missing.
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { McpManager, parseMcpConfigText } from '../core/mcp';
import { UsageError } from './usage';

/** Reads and checks the file, and returns a manager holding its servers (none started yet: they start on first use). */
export async function openCliMcpServers(file: string, workspace: string, log: (line: string) => void): Promise<McpManager> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`--mcp-config ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  const parsed = parseMcpConfigText(text, `--mcp-config ${file}`, { workspaceFolder: workspace, userHome: homedir(), env: process.env });
  // One line: the first problem names the file and the server; a half-loaded file would hide the rest.
  if (parsed.errors.length > 0) throw new UsageError(parsed.errors.length > 1 ? `${parsed.errors[0]} (and ${parsed.errors.length - 1} more)` : parsed.errors[0]);
  const manager = new McpManager({
    // Server stderr and lifecycle go to stderr: stdout holds the one JSON object.
    log: (line) => log(`mcp: ${line}`),
    defaultCwd: workspace,
    untrustedRoots: [workspace],
  });
  await manager.setServers(parsed.servers);
  return manager;
}
