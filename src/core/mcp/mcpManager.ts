// All MCP servers of one window (or one CLI run): which are configured, their connections, the tools
// they offer as `mcp__<server>__<tool>` (in a stable order), and a snapshot for the server list.
import type { ToolArgs } from '../messages';
import type { ExtraToolSource } from '../tools';
import type { McpToolName, Tool } from '../tools/types';
import { serverIdentity, type McpServerConfig } from './config';
import { createMcpTool } from './mcpTool';
import { DEFAULT_MCP_TIMINGS, McpServerConnection, type McpServerState, type McpTimings } from './serverConnection';
import { mcpToolName } from './toolNames';

export interface McpManagerOptions {
  log: (line: string) => void;
  timings?: Partial<McpTimings>;
  /** The folder a stdio server without `cwd` runs in. */
  defaultCwd?: string;
  /** Folders whose PATH entries a server's PATH drops (the open workspaces). */
  untrustedRoots?: readonly string[];
  clientVersion?: string;
}

/** One server as the chat view lists it. */
export interface McpServerView {
  name: string;
  source: string;
  transport: 'stdio' | 'http' | 'sse';
  /** The command line or the URL. */
  target: string;
  state: McpServerState;
  error?: string;
  runAhead: boolean;
  restarts: number;
  /** While restarting: when the next try is due (ms since the epoch). */
  restartAt?: number;
  tools: { name: string; tool: string; description: string; readOnly: boolean; openWorld: boolean }[];
}

export interface McpSnapshot {
  servers: McpServerView[];
  /** Entries of the configuration that were skipped, each naming the server and why. */
  configErrors: string[];
}

export class McpManager implements ExtraToolSource {
  private readonly connections = new Map<string, McpServerConnection>();
  private configErrors: string[] = [];
  private offered: Tool[] = [];
  private readonly listeners = new Set<() => void>();
  private readonly timings: McpTimings;
  private disposed = false;

  constructor(private readonly options: McpManagerOptions) {
    this.timings = { ...DEFAULT_MCP_TIMINGS, ...options.timings };
  }

  /**
   * Takes the configured servers: a server whose entry is unchanged keeps running, a changed or
   * removed one is stopped. Nothing starts here; servers start on first use (prepare or a call).
   */
  async setServers(servers: readonly McpServerConfig[], configErrors: readonly string[] = []): Promise<void> {
    if (this.disposed) return;
    this.configErrors = [...configErrors];
    const wanted = new Map<string, McpServerConfig>();
    for (const server of servers) {
      if (wanted.has(server.name)) this.configErrors.push(`${server.source}: server "${server.name}" is also defined in ${wanted.get(server.name)!.source}; the first one is used.`);
      else wanted.set(server.name, server);
    }
    const stopping: Promise<void>[] = [];
    for (const [name, connection] of this.connections) {
      const next = wanted.get(name);
      if (next && sameServer(next, connection.config)) continue;
      this.connections.delete(name);
      stopping.push(connection.dispose());
    }
    for (const [name, config] of [...wanted].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      if (!this.connections.has(name)) this.connections.set(name, this.connect(config));
    }
    this.rebuild();
    await Promise.all(stopping);
  }

  /** Starts every server not yet started and waits (each within its connect timeout) so tools() is complete. */
  async prepare(signal?: AbortSignal): Promise<void> {
    const idle = [...this.connections.values()].filter((c) => c.state === 'idle' || c.state === 'starting');
    if (idle.length === 0) return;
    const all = Promise.all(idle.map((c) => c.ensureStarted().catch(() => undefined)));
    if (!signal) return void (await all);
    await new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      signal.addEventListener('abort', () => resolve(), { once: true });
      void all.then(() => resolve());
    });
  }

  tools(): readonly Tool[] {
    return this.offered;
  }

  snapshot(): McpSnapshot {
    const servers: McpServerView[] = [];
    for (const connection of this.connections.values()) {
      const config = connection.config;
      const tools = this.offered
        .filter((tool) => tool.mcp?.server === config.name)
        .map((tool) => ({ name: tool.name, tool: tool.mcp!.tool, description: tool.definition.function.description.split('\n')[0], readOnly: tool.mcp!.readOnlyHint === true, openWorld: tool.mcp!.openWorldHint === true }));
      servers.push({
        name: config.name,
        source: config.source,
        transport: config.type,
        target: config.type === 'stdio' ? [config.command, ...config.args].join(' ') : config.url,
        state: connection.state,
        ...(connection.error ? { error: connection.error } : {}),
        runAhead: config.speculate.runAhead,
        restarts: connection.restartCount,
        ...(connection.restartAt !== undefined ? { restartAt: connection.restartAt } : {}),
        tools,
      });
    }
    return { servers, configErrors: [...this.configErrors] };
  }

  /** The connection of a server (tests read its pid to play a crash). */
  connection(name: string): McpServerConnection | undefined {
    return this.connections.get(name);
  }

  async restart(name: string): Promise<boolean> {
    const connection = this.connections.get(name);
    if (!connection) return false;
    await connection.restart();
    return true;
  }

  onDidChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    const all = [...this.connections.values()];
    this.connections.clear();
    this.offered = [];
    await Promise.all(all.map((c) => c.dispose()));
    this.listeners.clear();
  }

  private connect(config: McpServerConfig): McpServerConnection {
    const connection: McpServerConnection = new McpServerConnection(config, {
      timings: this.timings,
      log: this.options.log,
      onChange: () => {
        // A stopped connection (replaced or disposed) no longer speaks for its name.
        if (this.connections.get(config.name) === connection) this.rebuild();
      },
      ...(this.options.defaultCwd ? { defaultCwd: this.options.defaultCwd } : {}),
      ...(this.options.untrustedRoots ? { untrustedRoots: this.options.untrustedRoots } : {}),
      ...(this.options.clientVersion ? { clientVersion: this.options.clientVersion } : {}),
    });
    return connection;
  }

  /** The offered tools in server-name order, then the server's own order: the same servers give the same bytes. */
  private rebuild(): void {
    const taken = new Set<string>();
    const tools: Tool[] = [];
    const previous = new Map(this.offered.map((tool) => [`${tool.mcp!.server}\u0000${tool.mcp!.tool}`, tool]));
    for (const connection of this.connections.values()) {
      const config = connection.config;
      const target = {
        server: config.name,
        runAhead: config.speculate.runAhead,
        call: (tool: string, args: ToolArgs, signal?: AbortSignal) => connection.callTool(tool, args, signal),
      };
      const seen = new Set<string>();
      for (const listed of connection.tools) {
        if (typeof listed?.name !== 'string' || seen.has(listed.name)) continue;
        seen.add(listed.name);
        const name = mcpToolName(config.name, listed.name, taken) as McpToolName;
        taken.add(name);
        const before = previous.get(`${config.name}\u0000${listed.name}`);
        // Reusing the same object keeps its definition identical while the server restarts.
        const fresh = createMcpTool(name, listed, target);
        tools.push(before && before.name === name && JSON.stringify(before.definition) === JSON.stringify(fresh.definition) ? before : fresh);
      }
    }
    this.offered = tools;
    for (const listener of this.listeners) {
      try {
        listener();
      } catch {
        // A broken listener (a closed view) must not stop the others.
      }
    }
  }
}

function sameServer(a: McpServerConfig, b: McpServerConfig): boolean {
  return serverIdentity(a) === serverIdentity(b) && a.speculate.runAhead === b.speculate.runAhead && a.source === b.source;
}
