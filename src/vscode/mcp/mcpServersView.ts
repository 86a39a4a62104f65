// The MCP server list as the chat view shows it: the manager's snapshot (what runs) plus the
// workspace servers waiting for the user's yes, and why any are not offered. Pure, no vscode import.
import type { McpServerState, McpSnapshot } from '../../core/mcp';
import type { McpServerRowView, McpServersView, McpServerStateView } from '../../shared/protocol';
import { definitionHash, serverDetail, serverTarget, USER_MCP_SOURCE, type McpServerPlan } from './mcpAllowList';

const STATE: { [K in McpServerState]: McpServerStateView } = {
  idle: 'not-started',
  starting: 'starting',
  running: 'running',
  restarting: 'restarting',
  failed: 'error',
  stopped: 'stopped',
};

export function mcpServersView(snapshot: McpSnapshot, plan: McpServerPlan, trusted: boolean): McpServersView {
  const servers: McpServerRowView[] = snapshot.servers.map((server) => ({
    name: server.name,
    source: server.source,
    fromWorkspace: server.source !== USER_MCP_SOURCE,
    transport: server.transport,
    target: server.target,
    state: STATE[server.state],
    ...(server.error ? { error: server.error } : {}),
    ...(server.restartAt !== undefined ? { restartAt: Math.round(server.restartAt) } : {}),
    runAhead: server.runAhead,
    tools: server.tools.map((tool) => ({ name: tool.tool, description: tool.description, readOnly: tool.readOnly && !tool.openWorld })),
  }));
  for (const pending of plan.pending) {
    servers.push({
      name: pending.config.name,
      source: pending.config.source,
      fromWorkspace: true,
      transport: pending.config.type,
      target: serverTarget(pending.config),
      state: 'awaiting-approval',
      runAhead: pending.config.speculate.runAhead,
      tools: [],
      ...(pending.changed ? { changed: true } : {}),
      detail: serverDetail(pending.config),
      definition: definitionHash(pending.config),
    });
  }
  for (const blocked of plan.blocked) {
    servers.push({ name: blocked.name, source: blocked.source, fromWorkspace: true, transport: blocked.type, target: serverTarget(blocked), state: 'blocked', runAhead: false, tools: [] });
  }
  const notes = [...snapshot.configErrors];
  if (!trusted && plan.blocked.length > 0) {
    const names = plan.blocked.map((server) => `"${server.name}"`).join(', ');
    notes.push(`This folder is in Restricted Mode, so the MCP servers its .vscode/mcp.json names (${names}) are not offered: a repository's servers are programs it asks to run. Trust the folder to review them one by one.`);
  }
  return { servers, notes };
}
