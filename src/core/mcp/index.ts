// MCP servers for the agent (issue 26): configuration in mcp.json's shape, one connection per server,
// and their tools offered as `mcp__<server>__<tool>` after the built-in tools.
export { parseMcpConfig, parseMcpConfigText, parseMcpServers, serverIdentity, type McpConfigParse, type McpServerConfig, type McpVariables } from './config';
export { McpManager, type McpManagerOptions, type McpServerView, type McpSnapshot } from './mcpManager';
export { DEFAULT_MCP_TIMINGS, type McpServerState, type McpTimings } from './serverConnection';
export { isMcpToolName, mcpToolName } from './toolNames';
export { normalizeToolSchema } from './schema';
export { mcpResultText, MCP_RESULT_MAX_CHARS } from './toolResult';
