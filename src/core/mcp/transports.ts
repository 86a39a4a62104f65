// The SDK transport for one configured server: a child process over stdio (its stderr to the log,
// on a PATH no workspace can extend), Streamable HTTP, or the older SSE transport.
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { safeSearchPath } from '../fs/programSearch';
import type { McpHttpServerConfig, McpStdioServerConfig } from './config';

export interface StdioTransportOptions {
  /** The folder a server without `cwd` runs in (the workspace). */
  defaultCwd?: string;
  /** Folders whose PATH entries are dropped (the workspaces): a repository must not supply `node` or `npx`. */
  untrustedRoots?: readonly string[];
  /** Each line the server writes to stderr. */
  onStderrLine?: (line: string) => void;
}

export function stdioTransport(config: McpStdioServerConfig, options: StdioTransportOptions): StdioClientTransport {
  const env: Record<string, string> = { ...getDefaultEnvironment(), PATH: safeSearchPath(process.env.PATH, options.untrustedRoots ?? []).join(':'), ...config.env };
  const cwd = config.cwd ?? options.defaultCwd;
  const transport = new StdioClientTransport({ command: config.command, args: config.args, env, stderr: 'pipe', ...(cwd ? { cwd } : {}) });
  const stderr = transport.stderr;
  if (stderr && options.onStderrLine) {
    let pending = '';
    stderr.on('data', (chunk: Buffer | string) => {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) if (line.trim() !== '') options.onStderrLine?.(line.replace(/\r$/, ''));
      // A server that never ends a line still may not grow this buffer without bound.
      if (pending.length > 64_000) {
        options.onStderrLine?.(pending);
        pending = '';
      }
    });
  }
  return transport;
}

function requestInit(config: McpHttpServerConfig): RequestInit {
  return Object.keys(config.headers).length > 0 ? { headers: config.headers } : {};
}

export function streamableHttpTransport(config: McpHttpServerConfig): Transport {
  return new StreamableHTTPClientTransport(new URL(config.url), { requestInit: requestInit(config) });
}

export function sseTransport(config: McpHttpServerConfig): Transport {
  const init = requestInit(config);
  // The SSE stream is opened with EventSource; the headers must reach that GET as well as the POSTs.
  const headers = config.headers;
  return new SSEClientTransport(new URL(config.url), {
    requestInit: init,
    eventSourceInit: { fetch: (url, options) => fetch(url, { ...options, headers: { ...(options?.headers as Record<string, string> | undefined), ...headers } }) },
  });
}
