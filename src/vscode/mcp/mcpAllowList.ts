// Which MCP servers the window may run: the user's own (speculate.mcpServers) always, a workspace's
// (.vscode/mcp.json) only once the user allowed that exact definition, and never in Restricted Mode.
// Pure (no vscode import): the service feeds it parsed configs and globalState, the tests feed it hostile ones.
import { createHash } from 'node:crypto';
import { serverIdentity, type McpConfigParse, type McpServerConfig } from '../../core/mcp';

/** The globalState key of the allow-list (the user's machine, never a workspace's settings). */
export const MCP_ALLOWED_KEY = 'speculate.mcp.allowedWorkspaceServers';

/** The `source` of the user's own servers (every other source is a workspace's file). */
export const USER_MCP_SOURCE = 'settings (speculate.mcpServers)';

/** VS Code's Memento, as far as the allow-list uses it. */
export interface AllowListStore {
  get(key: string): unknown;
  update(key: string, value: unknown): Thenable<void> | Promise<void>;
}

/** workspace folder → server name → the hash of the definition the user allowed. */
type Allowed = Record<string, Record<string, string>>;

/**
 * A hash of what the definition runs (name, command, args, env, cwd or url and headers) and whether
 * it may run ahead: a repository that changes any of it after the user allowed it is asked about
 * again (marking its server "may run ahead" would let calls run without the user). Hashed, not
 * stored, since env and headers may hold secrets.
 */
export function definitionHash(server: McpServerConfig): string {
  return createHash('sha256').update(`${serverIdentity(server)}\u0000runAhead=${server.speculate.runAhead}`).digest('hex');
}

export class WorkspaceServerAllowList {
  constructor(private readonly store: AllowListStore) {}

  /** How the user last decided about this server of this workspace. */
  status(workspace: string, server: McpServerConfig): 'allowed' | 'changed' | 'unknown' {
    const hash = this.read()[workspace]?.[server.name];
    if (hash === undefined) return 'unknown';
    return hash === definitionHash(server) ? 'allowed' : 'changed';
  }

  /** Allows exactly this definition (an earlier one of the same name is forgotten). */
  async allow(workspace: string, server: McpServerConfig): Promise<void> {
    const all = this.read();
    all[workspace] = { ...all[workspace], [server.name]: definitionHash(server) };
    await this.store.update(MCP_ALLOWED_KEY, all);
  }

  /** The stored list, checked: anything not of the expected shape counts as nothing allowed. */
  private read(): Allowed {
    const raw = this.store.get(MCP_ALLOWED_KEY);
    const all: Allowed = {};
    if (!isRecord(raw)) return all;
    for (const [workspace, servers] of Object.entries(raw)) {
      if (!isRecord(servers)) continue;
      const kept: Record<string, string> = {};
      for (const [name, hash] of Object.entries(servers)) if (typeof hash === 'string' && /^[0-9a-f]{64}$/.test(hash)) kept[name] = hash;
      all[workspace] = kept;
    }
    return all;
  }
}

/** One folder's .vscode/mcp.json, parsed (null when the folder has none). */
export interface WorkspaceMcpFile {
  /** The folder's key in the allow-list (its URI). */
  workspace: string;
  parse: McpConfigParse | null;
}

/** A workspace server the user has not allowed (in this exact form). */
export interface PendingServer {
  workspace: string;
  config: McpServerConfig;
  /** It was allowed with another definition: the repository changed what it runs. */
  changed: boolean;
}

export interface McpServerPlan {
  /** What the window runs (lazily): the user's servers, then the allowed workspace servers. */
  servers: McpServerConfig[];
  pending: PendingServer[];
  /** Workspace servers not offered because the window is in Restricted Mode. */
  blocked: McpServerConfig[];
  errors: string[];
}

export interface PlanInput {
  user: McpConfigParse;
  workspaces: readonly WorkspaceMcpFile[];
  trusted: boolean;
  allowList: WorkspaceServerAllowList;
  /**
   * Where the user's stdio servers without a `cwd` run while the folder is untrusted (their home):
   * run in the folder, `npx` and friends would read its .npmrc and run what it points to.
   */
  untrustedCwd: string;
}

export function planMcpServers(input: PlanInput): McpServerPlan {
  const own = input.trusted ? input.user.servers : input.user.servers.map((server) => (server.type === 'stdio' && server.cwd === undefined ? { ...server, cwd: input.untrustedCwd } : server));
  const plan: McpServerPlan = { servers: [...own], pending: [], blocked: [], errors: [...input.user.errors] };
  for (const file of input.workspaces) {
    if (!file.parse) continue;
    // An untrusted folder's file is not even judged: its entries are only counted and named.
    if (!input.trusted) {
      plan.blocked.push(...file.parse.servers);
      continue;
    }
    plan.errors.push(...file.parse.errors);
    for (const config of file.parse.servers) {
      const status = input.allowList.status(file.workspace, config);
      if (status === 'allowed') plan.servers.push(config);
      else plan.pending.push({ workspace: file.workspace, config, changed: status === 'changed' });
    }
  }
  return plan;
}

/** The exact thing a server runs, for the list and the Allow question. Header values are left out (they may be tokens). */
export function serverTarget(server: McpServerConfig): string {
  if (server.type === 'stdio') return [server.command, ...server.args].map(shellWord).join(' ');
  const headers = Object.keys(server.headers);
  return `${server.url}${headers.length > 0 ? ` (headers: ${headers.join(', ')})` : ''}`;
}

/** Everything that decides what the program does, one line each, for the Allow question: env and cwd too (NODE_OPTIONS alone can run other code). */
export function serverDetail(server: McpServerConfig): string {
  const lines = [server.type === 'stdio' ? `Command: ${serverTarget(server)}` : `URL (${server.type}): ${serverTarget(server)}`];
  if (server.type === 'stdio') {
    for (const [key, value] of Object.entries(server.env)) lines.push(`Environment: ${key}=${value}`);
    if (server.cwd !== undefined) lines.push(`Folder: ${server.cwd}`);
  }
  if (server.speculate.runAhead) lines.push('May run ahead: its read-only tools would run during speculation, without asking');
  lines.push(`Defined in: ${server.source}`);
  return lines.join('\n');
}

/** Quotes a word that a reader could misread (spaces, quotes, nothing at all). */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
