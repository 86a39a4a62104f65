// One MCP server's life: started on first use, its tools listed, calls with a time limit, restarted
// with growing delays when it crashes (a bounded number of times), stopped on dispose.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig } from './config';
import type { McpCallResult } from './toolResult';
import { sseTransport, stdioTransport, streamableHttpTransport } from './transports';

export type McpServerState = 'idle' | 'starting' | 'running' | 'restarting' | 'failed' | 'stopped';

/** A tool as the server lists it (tools/list), the fields we use. */
export interface McpListedTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: unknown;
  annotations?: { readOnlyHint?: boolean; openWorldHint?: boolean; destructiveHint?: boolean; title?: string };
}

export interface McpTimings {
  /** Start and handshake (initialize) plus the first tools/list. */
  connectTimeoutMs: number;
  /** One tools/call. */
  callTimeoutMs: number;
  /** The first restart's delay; each next one doubles, up to maxRestartDelayMs. */
  restartDelayMs: number;
  maxRestartDelayMs: number;
  /** Consecutive failed starts or crashes before the server is left failed (until Restart). */
  maxRestarts: number;
  /** A server that ran this long before crashing starts its count of restarts afresh. */
  stableAfterMs: number;
}

export const DEFAULT_MCP_TIMINGS: McpTimings = {
  connectTimeoutMs: 30_000,
  callTimeoutMs: 120_000,
  restartDelayMs: 1_000,
  maxRestartDelayMs: 30_000,
  maxRestarts: 4,
  stableAfterMs: 60_000,
};

export interface McpConnectionOptions {
  timings: McpTimings;
  /** Diagnostics and the server's stderr, one line each (the output channel, the CLI's stderr). */
  log: (line: string) => void;
  /** Called whenever state, tools or error change. */
  onChange: () => void;
  defaultCwd?: string;
  untrustedRoots?: readonly string[];
  clientVersion?: string;
}

export class McpServerConnection {
  private currentState: McpServerState = 'idle';
  private client: Client | undefined;
  private starting: Promise<void> | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  /** When the scheduled restart is due (ms since the epoch), while restarting; for the server list. */
  private restartDue: number | undefined;
  private failures = 0;
  private runningSince = 0;
  private lastError: string | undefined;
  /** The last transport-level error (a malformed message, a refused connection), to explain a timeout. */
  private transportError: string | undefined;
  private listed: McpListedTool[] = [];
  private childPid: number | null = null;
  /** Bumped for every client: events of an old client (closed by a restart) are ignored. */
  private generation = 0;

  constructor(readonly config: McpServerConfig, private readonly options: McpConnectionOptions) {}

  get state(): McpServerState {
    return this.currentState;
  }

  get error(): string | undefined {
    return this.lastError;
  }

  /** The tools last listed; kept while restarting so the offered list (and the prompt cache) stays put. */
  get tools(): readonly McpListedTool[] {
    return this.currentState === 'failed' || this.currentState === 'stopped' ? [] : this.listed;
  }

  /** The stdio server's process id while it runs (tests kill it to play a crash). */
  get pid(): number | null {
    return this.childPid;
  }

  get restartCount(): number {
    return this.failures;
  }

  /** When the next restart is due (ms since the epoch) while the state is `restarting`. */
  get restartAt(): number | undefined {
    return this.currentState === 'restarting' ? this.restartDue : undefined;
  }

  /** Resolves once the server runs (starting it if idle); rejects with a sentence when it cannot. */
  async ensureStarted(): Promise<void> {
    switch (this.currentState) {
      case 'running':
        return;
      case 'stopped':
        throw new Error(`MCP server "${this.config.name}" is stopped.`);
      case 'failed':
        throw new Error(this.lastError ?? `MCP server "${this.config.name}" failed.`);
      case 'restarting':
        throw new Error(`MCP server "${this.config.name}" is restarting after ${this.lastError ? `an error (${this.lastError})` : 'a crash'}; try again in a few seconds.`);
      case 'starting':
        return this.starting;
      case 'idle':
        return this.start();
    }
  }

  /** Stops the server (if it runs) and starts it afresh, forgetting earlier failures (the user's Restart). */
  async restart(): Promise<void> {
    if (this.currentState === 'stopped') return;
    this.failures = 0;
    this.clearTimer();
    await this.closeClient();
    this.setState('idle');
    await this.start().catch(() => undefined);
  }

  async callTool(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<McpCallResult> {
    await this.ensureStarted();
    const client = this.client;
    if (!client) throw new Error(`MCP server "${this.config.name}" is not connected.`);
    const timeout = this.options.timings.callTimeoutMs;
    try {
      return (await client.callTool({ name, arguments: args }, undefined, { timeout, ...(signal ? { signal } : {}) })) as McpCallResult;
    } catch (error) {
      if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
        throw new Error(`${this.config.name}: ${name} did not answer within ${Math.round(timeout / 1000)} s, so the call was given up.`);
      }
      if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) {
        throw new Error(`${this.config.name} stopped while ${name} ran (${this.transportError ?? 'the connection closed'}).`);
      }
      throw error;
    }
  }

  async dispose(): Promise<void> {
    this.clearTimer();
    this.setState('stopped');
    await this.closeClient();
  }

  private start(): Promise<void> {
    this.setState('starting');
    const attempt = this.connect().then(
      () => {
        this.failures = 0;
        this.runningSince = Date.now();
        this.lastError = undefined;
        this.setState('running');
      },
      (error: unknown) => {
        const message = this.describeStartError(error);
        this.lastError = message;
        this.options.log(`[${this.config.name}] ${message}`);
        void this.closeClient();
        this.afterFailure();
        throw new Error(message);
      },
    );
    this.starting = attempt;
    attempt.catch(() => undefined).finally(() => {
      if (this.starting === attempt) this.starting = undefined;
    });
    return attempt;
  }

  private async connect(): Promise<void> {
    this.transportError = undefined;
    const { timings } = this.options;
    const deadline = AbortSignal.timeout(timings.connectTimeoutMs);
    const config = this.config;
    if (config.type === 'stdio') {
      await this.connectWith(stdioTransport(config, { defaultCwd: this.options.defaultCwd, untrustedRoots: this.options.untrustedRoots, onStderrLine: (line) => this.options.log(`[${config.name}] ${line}`) }), deadline);
    } else if (config.type === 'sse') {
      await this.connectWith(sseTransport(config), deadline);
    } else {
      try {
        await this.connectWith(streamableHttpTransport(config), deadline);
      } catch (error) {
        if (deadline.aborted || this.currentState === 'stopped') throw error;
        // A server of the 2024 protocol answers the Streamable HTTP POST with 4xx; it speaks SSE.
        this.options.log(`[${config.name}] Streamable HTTP failed (${errorText(error)}); trying the older SSE transport.`);
        await this.closeClient();
        await this.connectWith(sseTransport(config), deadline);
      }
    }
  }

  private async connectWith(transport: Transport, deadline: AbortSignal): Promise<void> {
    const generation = ++this.generation;
    const client = new Client({ name: 'speculate', version: this.options.clientVersion ?? '0' }, { capabilities: {} });
    this.client = client;
    client.onerror = (error) => {
      if (generation !== this.generation) return;
      this.transportError = describeTransportError(error);
      this.options.log(`[${this.config.name}] ${this.transportError}`);
    };
    client.onclose = () => {
      if (generation === this.generation) this.onClosed();
    };
    await raceDeadline(client.connect(transport, { timeout: this.options.timings.connectTimeoutMs, signal: deadline }), deadline);
    this.childPid = transport instanceof Object && 'pid' in transport ? ((transport as { pid: number | null }).pid ?? null) : null;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      void this.relist(generation);
    });
    this.listed = await raceDeadline(this.listAll(client, deadline), deadline);
  }

  private async listAll(client: Client, signal: AbortSignal): Promise<McpListedTool[]> {
    if (!client.getServerCapabilities()?.tools) return [];
    const tools: McpListedTool[] = [];
    let cursor: string | undefined;
    // Pages are bounded: a server that keeps handing out cursors must not hold the start forever.
    for (let page = 0; page < 50; page++) {
      const result = await client.listTools(cursor ? { cursor } : undefined, { timeout: this.options.timings.connectTimeoutMs, signal });
      tools.push(...(result.tools as McpListedTool[]));
      cursor = result.nextCursor;
      if (!cursor) break;
    }
    return tools;
  }

  private async relist(generation: number): Promise<void> {
    const client = this.client;
    if (!client || generation !== this.generation || this.currentState !== 'running') return;
    try {
      this.listed = await this.listAll(client, AbortSignal.timeout(this.options.timings.connectTimeoutMs));
      this.options.onChange();
    } catch (error) {
      this.options.log(`[${this.config.name}] could not list its changed tools: ${errorText(error)}`);
    }
  }

  /** The connection closed without us closing it: a crash (or the server quit). */
  private onClosed(): void {
    if (this.currentState !== 'running') return;
    this.generation++;
    this.client = undefined;
    this.childPid = null;
    const ranFor = Date.now() - this.runningSince;
    if (ranFor >= this.options.timings.stableAfterMs) this.failures = 0;
    this.lastError = `the server stopped${this.transportError ? ` (${this.transportError})` : ''}`;
    this.options.log(`[${this.config.name}] ${this.lastError}.`);
    this.afterFailure();
  }

  /** Schedules the next start after a growing delay, or gives up once maxRestarts is reached. */
  private afterFailure(): void {
    if (this.currentState === 'stopped') return;
    const { timings } = this.options;
    if (this.failures >= timings.maxRestarts) {
      this.lastError = `${this.lastError ?? 'it failed'}; gave up after ${this.failures + 1} tries (use Restart to try again)`;
      this.setState('failed');
      return;
    }
    const delay = Math.min(timings.maxRestartDelayMs, timings.restartDelayMs * 2 ** this.failures);
    this.failures++;
    this.options.log(`[${this.config.name}] restarting in ${Math.round(delay / 100) / 10} s (attempt ${this.failures} of ${timings.maxRestarts}).`);
    this.clearTimer();
    this.restartDue = Date.now() + delay;
    this.setState('restarting');
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (this.currentState === 'restarting') this.start().catch(() => undefined);
    }, delay);
    this.restartTimer.unref?.();
  }

  private describeStartError(error: unknown): string {
    const config = this.config;
    const what = config.type === 'stdio' ? `\`${[config.command, ...config.args].join(' ')}\`` : config.url;
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    if (code === 'ENOENT') return `${config.name}: could not start ${what}: the program ${config.type === 'stdio' ? config.command : ''} was not found (check "command" and PATH)`;
    if (code === 'EACCES') return `${config.name}: could not start ${what}: permission denied`;
    if (error instanceof DeadlineError || (error instanceof McpError && error.code === ErrorCode.RequestTimeout)) {
      const seen = this.transportError ? `; it sent: ${this.transportError}` : '';
      return `${config.name}: ${what} did not complete the MCP handshake within ${Math.round(this.options.timings.connectTimeoutMs / 1000)} s${seen}`;
    }
    if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) {
      return `${config.name}: ${what} exited during the MCP handshake${this.transportError ? ` (${this.transportError})` : ''}; its stderr is in the log`;
    }
    return `${config.name}: could not connect to ${what}: ${errorText(error)}`;
  }

  private async closeClient(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.childPid = null;
    this.generation++;
    if (!client) return;
    await client.close().catch((error: unknown) => this.options.log(`[${this.config.name}] closing: ${errorText(error)}`));
  }

  private clearTimer(): void {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
  }

  private setState(state: McpServerState): void {
    if (this.currentState === 'stopped' && state !== 'stopped') return;
    this.currentState = state;
    this.options.onChange();
  }
}

class DeadlineError extends Error {}

/** The SDK's own timeouts cover each request, not a spawn that never opens; the deadline covers it all. */
function raceDeadline<T>(work: Promise<T>, deadline: AbortSignal): Promise<T> {
  if (deadline.aborted) return Promise.reject(new DeadlineError('deadline'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new DeadlineError('deadline'));
    deadline.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        deadline.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        deadline.removeEventListener('abort', onAbort);
        reject(deadline.aborted ? new DeadlineError('deadline') : error);
      },
    );
  });
}

function describeTransportError(error: Error): string {
  const text = errorText(error);
  if (error instanceof SyntaxError || /JSON|Unexpected token|invalid_union|invalid_type/i.test(text)) return `a malformed message on its output (${text.split('\n')[0].slice(0, 200)})`;
  return text.split('\n')[0].slice(0, 300);
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
