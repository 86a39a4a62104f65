// MCP server configuration in the shape of VS Code's mcp.json: `{"servers": {NAME: stdio | http | sse}}`,
// checked field by field so a bad entry is skipped with an error naming it, and the others still load.

/** Speculate's own per-server field: whether read-only, closed-world tools of this server may run ahead. */
export interface McpSpeculateOptions {
  runAhead: boolean;
}

interface McpServerBase {
  name: string;
  /** Where the entry came from, for errors and the server list ("settings", ".vscode/mcp.json", a file). */
  source: string;
  speculate: McpSpeculateOptions;
}

export interface McpStdioServerConfig extends McpServerBase {
  type: 'stdio';
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}

export interface McpHttpServerConfig extends McpServerBase {
  /** `http` tries Streamable HTTP and falls back to SSE for an older server; `sse` uses SSE only. */
  type: 'http' | 'sse';
  url: string;
  headers: Record<string, string>;
}

export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

export interface McpConfigParse {
  servers: McpServerConfig[];
  /** One sentence per entry that was skipped (or the whole config, when it is not an object). */
  errors: string[];
}

/** Values `${...}` may name, as VS Code's mcp.json allows a subset of them. */
export interface McpVariables {
  workspaceFolder?: string;
  userHome?: string;
  env?: Record<string, string | undefined>;
}

const SERVER_KEYS = new Set(['type', 'command', 'args', 'env', 'cwd', 'url', 'headers', 'speculate', 'envFile', 'dev']);

/** Parses the text of an mcp.json (JSON with comments and trailing commas tolerated, as VS Code does). */
export function parseMcpConfigText(text: string, source: string, variables: McpVariables = {}): McpConfigParse {
  let value: unknown;
  try {
    value = JSON.parse(stripJsonComments(text));
  } catch (error) {
    return { servers: [], errors: [`${source} is not valid JSON (${error instanceof Error ? error.message : String(error)}).`] };
  }
  return parseMcpConfig(value, source, variables);
}

/** Parses an already-read `{"servers": {...}}` object (or the `speculate.mcpServers` setting, which is the inner map). */
export function parseMcpConfig(value: unknown, source: string, variables: McpVariables = {}): McpConfigParse {
  if (!isObject(value)) return { servers: [], errors: [`${source} must be a JSON object with a "servers" object.`] };
  const map = value.servers;
  if (map === undefined) return { servers: [], errors: [`${source} has no "servers" object; write {"servers": {"NAME": {"command": "..."}}}.`] };
  return parseMcpServers(map, source, variables);
}

/** Parses the map NAME → server entry. */
export function parseMcpServers(map: unknown, source: string, variables: McpVariables = {}): McpConfigParse {
  if (!isObject(map)) return { servers: [], errors: [`${source}: "servers" must be an object mapping each server's name to its entry.`] };
  const servers: McpServerConfig[] = [];
  const errors: string[] = [];
  for (const [name, entry] of Object.entries(map)) {
    const parsed = parseServer(name, entry, source, variables);
    if (typeof parsed === 'string') errors.push(`${source}: server "${name}" ${parsed}; it is not started.`);
    else servers.push(parsed);
  }
  return { servers, errors };
}

function parseServer(name: string, entry: unknown, source: string, variables: McpVariables): McpServerConfig | string {
  if (name.trim() === '') return 'has an empty name';
  if (!isObject(entry)) return 'must be an object with "command" (a program) or "url" (a server on the network)';
  const unknown = Object.keys(entry).filter((key) => !SERVER_KEYS.has(key));
  if (unknown.length > 0) return `has unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `"${k}"`).join(', ')}`;
  if (entry.envFile !== undefined) return 'uses "envFile", which Speculate does not read; put the variables in "env"';
  const speculate = parseSpeculate(entry.speculate);
  if (typeof speculate === 'string') return speculate;
  const type = entry.type ?? (entry.url !== undefined ? 'http' : 'stdio');
  const sub = (text: string, field: string) => substitute(text, field, variables);
  try {
    if (type === 'stdio') {
      if (typeof entry.command !== 'string' || entry.command.trim() === '') return 'needs "command": the program to run';
      if (entry.url !== undefined) return 'has both "command" and "url"; a stdio server has no url';
      const args = stringArray(entry.args, '"args"');
      if (typeof args === 'string') return args;
      const env = stringMap(entry.env, '"env"');
      if (typeof env === 'string') return env;
      if (entry.cwd !== undefined && typeof entry.cwd !== 'string') return '"cwd" must be a string (a folder)';
      const config: McpStdioServerConfig = {
        name,
        source,
        speculate,
        type: 'stdio',
        command: sub(entry.command, 'command'),
        args: args.map((arg) => sub(arg, 'args')),
        env: Object.fromEntries(Object.entries(env).map(([key, v]) => [key, sub(v, `env.${key}`)])),
      };
      if (typeof entry.cwd === 'string') config.cwd = sub(entry.cwd, 'cwd');
      return config;
    }
    if (type === 'http' || type === 'sse') {
      if (typeof entry.url !== 'string' || entry.url.trim() === '') return `needs "url" (type "${type}")`;
      if (entry.command !== undefined) return `has both "url" and "command"; pick one`;
      const url = sub(entry.url, 'url');
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        return `has a "url" that is not a URL: ${url}`;
      }
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return `has a "url" that is not http(s): ${url}`;
      const headers = stringMap(entry.headers, '"headers"');
      if (typeof headers === 'string') return headers;
      return {
        name,
        source,
        speculate,
        type,
        url,
        headers: Object.fromEntries(Object.entries(headers).map(([key, v]) => [key, sub(v, `headers.${key}`)])),
      };
    }
    return `has "type": ${JSON.stringify(type)}; use "stdio", "http" or "sse"`;
  } catch (error) {
    if (error instanceof VariableError) return error.message;
    throw error;
  }
}

function parseSpeculate(value: unknown): McpSpeculateOptions | string {
  if (value === undefined) return { runAhead: false };
  if (!isObject(value)) return '"speculate" must be an object like {"runAhead": true}';
  const extra = Object.keys(value).filter((key) => key !== 'runAhead');
  if (extra.length > 0) return `"speculate" has unknown field ${extra.map((k) => `"${k}"`).join(', ')}; only "runAhead" is known`;
  if (value.runAhead !== undefined && typeof value.runAhead !== 'boolean') return '"speculate.runAhead" must be true or false';
  return { runAhead: value.runAhead === true };
}

class VariableError extends Error {}

/** ${workspaceFolder}, ${userHome} and ${env:NAME}; ${input:...} (a prompt VS Code shows) is refused, not sent as is. */
function substitute(text: string, field: string, variables: McpVariables): string {
  return text.replace(/\$\{([^}]*)\}/g, (whole, name: string) => {
    if (name === 'workspaceFolder' && variables.workspaceFolder !== undefined) return variables.workspaceFolder;
    if (name === 'userHome' && variables.userHome !== undefined) return variables.userHome;
    if (name.startsWith('env:')) return variables.env?.[name.slice(4)] ?? '';
    if (name.startsWith('input:')) throw new VariableError(`uses ${whole} in ${field}; Speculate does not ask for inputs, so write the value itself`);
    throw new VariableError(`uses ${whole} in ${field}, which Speculate cannot fill in here`);
  });
}

function stringArray(value: unknown, field: string): string[] | string {
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) return `${field} must be a list of strings`;
  return value;
}

function stringMap(value: unknown, field: string): Record<string, string> | string {
  if (value === undefined) return {};
  if (!isObject(value)) return `${field} must be an object of strings`;
  for (const [key, v] of Object.entries(value)) {
    // Numbers and booleans are what people write for PORT=3000 or DEBUG=true; null means unset in VS Code.
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') return `${field}.${key} must be a string`;
  }
  return Object.fromEntries(Object.entries(value).map(([key, v]) => [key, String(v)]));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Removes // and /* *\/ comments and trailing commas outside strings (mcp.json is JSONC). */
export function stripJsonComments(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end === -1 ? text.length : end + 2;
    } else if (c === ',' && /^\s*[}\]]/.test(text.slice(i + 1, i + 200))) {
      i++;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** What identifies the program a server entry runs: allowing it covers exactly this (a changed command asks again). */
export function serverIdentity(server: McpServerConfig): string {
  if (server.type === 'stdio') return JSON.stringify({ name: server.name, type: 'stdio', command: server.command, args: server.args, env: server.env, cwd: server.cwd ?? null });
  return JSON.stringify({ name: server.name, type: server.type, url: server.url, headers: server.headers });
}
