// Command-line options of the CLI's one-shot commands: `--name value`, `--name=value` and bare
// flags, with the usage errors (exit 2, one line) that HEADLESS-CLI.md promises for bad input.
import { APPROVAL_MODES, type ApprovalMode } from '../core/chat/approvals';
import { UsageError } from './usage';

export interface CliOptionSpec {
  /** Options that take a value. */
  valued: readonly string[];
  /** Options that stand alone (`--accept`). */
  flags?: readonly string[];
  /** Valued options that must be given (and not empty). */
  required?: readonly string[];
}

export interface ParsedOptions {
  values: ReadonlyMap<string, string>;
  flags: ReadonlySet<string>;
}

export function parseOptions(argv: readonly string[], spec: CliOptionSpec): ParsedOptions {
  const valued = new Set(spec.valued);
  const known = new Set(spec.flags ?? []);
  const values = new Map<string, string>();
  const flags = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (known.has(arg)) {
      flags.add(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    if (!valued.has(name)) throw new UsageError(`unknown option "${arg}" (see --help)`);
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new UsageError(`${name} needs a value`);
    values.set(name, value);
  }
  for (const required of spec.required ?? []) {
    if (!values.get(required)) throw new UsageError(`${required} is required (see --help)`);
  }
  return { values, flags };
}

/** A value from a fixed set, or the fallback when the option is absent. */
export function choice<T extends string>(options: ParsedOptions, name: string, allowed: readonly T[], fallback: T): T {
  const value = options.values.get(name) ?? fallback;
  if (!(allowed as readonly string[]).includes(value)) throw new UsageError(`${name} must be one of ${allowed.join(', ')}`);
  return value as T;
}

export function positiveInteger(options: ParsedOptions, name: string): number | undefined {
  const raw = options.values.get(name);
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`${name} must be a positive whole number`);
  return n;
}

/** The options of every command that runs turns against an endpoint (`speculate`, `chat`). */
export const ENDPOINT_RUN_OPTIONS = ['--workspace', '--base-url', '--model', '--api-key', '--approval-mode', '--history', '--timeout-ms', '--state-dir', '--mcp-config'] as const;

export interface EndpointRunArgs {
  workspace: string;
  baseUrl: string;
  model: string;
  /** --api-key, else $SPECULATE_API_KEY, else none (a local server). */
  apiKey: string;
  approvalMode: ApprovalMode;
  historyFile?: string;
  timeoutMs?: number;
  /** Where checkpoints and learned provider quirks live (default: $XDG_STATE_HOME/speculate). */
  stateDir?: string;
  /** --mcp-config: an mcp.json-shaped file of MCP servers, started without asking (the user's own). */
  mcpConfig?: string;
}

/** ENDPOINT_RUN_OPTIONS read the one way HEADLESS-CLI.md defines them. */
export function endpointRunArgs(options: ParsedOptions): EndpointRunArgs {
  const values = options.values;
  const args: EndpointRunArgs = {
    workspace: values.get('--workspace')!,
    baseUrl: values.get('--base-url')!,
    model: values.get('--model')!,
    apiKey: values.get('--api-key') ?? process.env.SPECULATE_API_KEY ?? '',
    approvalMode: choice(options, '--approval-mode', APPROVAL_MODES, 'default'),
  };
  const history = values.get('--history');
  if (history) args.historyFile = history;
  const timeoutMs = positiveInteger(options, '--timeout-ms');
  if (timeoutMs !== undefined) args.timeoutMs = timeoutMs;
  const stateDir = values.get('--state-dir');
  if (stateDir) args.stateDir = stateDir;
  const mcpConfig = values.get('--mcp-config');
  if (mcpConfig) args.mcpConfig = mcpConfig;
  return args;
}
