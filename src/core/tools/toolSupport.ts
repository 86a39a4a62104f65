// What every tool shares: reading and checking arguments, placing paths inside the workspace, and
// turning the errors a tool can meet into results the model can act on (a tool never throws).
import type { JsonSchema, ToolArgs } from '../messages';
import { createHash } from 'node:crypto';
import { EngineFault, FileNotFoundError, PathOutsideWorkspaceError, SpecialFileError, UnsafeNameError, WriteRefusedError, type WriteExpectation } from '../fs/workspaceFs';
import type { Tool, ToolContext, ToolKind, ToolName, ToolResult, WritePreview } from './types';

/** A tool argument of the wrong type or value; becomes a failed result naming the argument. */
export class ToolArgumentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolArgumentError';
  }
}

export function success(output: string, filesChanged?: string[]): ToolResult {
  return filesChanged ? { ok: true, output, filesChanged } : { ok: true, output };
}

export function failure(output: string): ToolResult {
  return { ok: false, output };
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `"${value.length > 40 ? value.slice(0, 40) + '…' : value}"`;
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`;
}

/** Typed access to a call's arguments; each getter throws ToolArgumentError with a clear message. */
export class ArgReader {
  constructor(private readonly tool: string, private readonly args: ToolArgs) {}

  private fail(name: string, expected: string): never {
    throw new ToolArgumentError(`${this.tool}: argument "${name}" must be ${expected} (got ${describe(this.args[name])}).`);
  }

  private present(name: string): boolean {
    return this.args[name] !== undefined && this.args[name] !== null;
  }

  string(name: string, options: { allowEmpty?: boolean } = {}): string {
    const value = this.args[name];
    if (!this.present(name)) throw new ToolArgumentError(`${this.tool}: argument "${name}" is required.`);
    if (typeof value !== 'string') this.fail(name, 'a string');
    if (!options.allowEmpty && value.trim() === '') this.fail(name, 'a non-empty string');
    return value;
  }

  optionalString(name: string): string | undefined {
    if (!this.present(name)) return undefined;
    const value = this.args[name];
    if (typeof value !== 'string') this.fail(name, 'a string');
    return value;
  }

  optionalInteger(name: string, min: number): number | undefined {
    if (!this.present(name)) return undefined;
    let value = this.args[name];
    // Some models send numbers as strings; accept those that are plainly integers.
    if (typeof value === 'string' && /^\s*-?\d+\s*$/.test(value)) value = Number(value);
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
      this.fail(name, min === 0 ? 'a non-negative integer' : `an integer ≥ ${min}`);
    }
    return value;
  }

  optionalBoolean(name: string): boolean | undefined {
    if (!this.present(name)) return undefined;
    const value = this.args[name];
    if (value === 'true' || value === 'false') return value === 'true';
    if (typeof value !== 'boolean') this.fail(name, 'true or false');
    return value;
  }

  optionalStringArray(name: string): string[] | undefined {
    if (!this.present(name)) return undefined;
    const value = this.args[name];
    if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) this.fail(name, 'an array of strings');
    return value as string[];
  }

  raw(name: string): unknown {
    return this.args[name];
  }
}

/** A refusal for a FIFO, socket or device that a tool met (it is never opened). */
export function specialFileRefusal(relative: string, tool: string): ToolResult {
  return failure(`${displayPath(relative)} is not a regular file (a named pipe, socket or device); ${tool} only works on regular files and folders.`);
}

/**
 * What a write tool saw before writing, for compare-and-replace: the write happens only if the
 * file still holds these bytes (or is still missing), so a change made meanwhile is not lost.
 */
export function expectationOf(before: Uint8Array | undefined): WriteExpectation {
  return before === undefined ? { exists: false } : { exists: true, sha256: createHash('sha256').update(before).digest('hex') };
}

/** Whether bytes decode as UTF-8 without a replacement character being needed. */
export function isValidUtf8(data: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(data);
    return true;
  } catch {
    return false;
  }
}

/** How a workspace-relative path is shown to the model and the user. */
export function displayPath(relative: string): string {
  return relative === '' ? '.' : relative;
}

/** A short, single-line form of an argument for summaries. */
export function oneLine(value: unknown, max = 80): string {
  const text = typeof value === 'string' ? value : value === undefined ? '' : JSON.stringify(value) ?? '';
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function isAbort(error: unknown, context: ToolContext): boolean {
  return context.signal?.aborted === true || (error instanceof Error && error.name === 'AbortError');
}

/**
 * How long a file tool may take before it is stopped: a hung network mount or FUSE folder must not
 * hold a turn (or a speculation) for ever. Shell and network tools have limits of their own; the
 * interaction tools wait for the user.
 */
export const FILE_TOOL_TIME_LIMIT_MS = 60_000;

function timeLimitOf(spec: ToolSpec, context: ToolContext): number | undefined {
  if (spec.kind !== 'read' && spec.kind !== 'write') return undefined;
  return context.toolTimeLimitMs ?? FILE_TOOL_TIME_LIMIT_MS;
}

/** Marks the signal reason of a call stopped by its time limit. */
class TimeLimitReached extends Error {
  constructor(readonly limitMs: number) {
    super(`time limit of ${limitMs} ms reached`);
    this.name = 'TimeLimitReached';
  }
}

function timedOut(spec: ToolSpec, limitMs: number): ToolResult {
  const seconds = limitMs >= 1000 ? `${Math.round(limitMs / 1000)} s` : `${limitMs} ms`;
  const after = spec.kind === 'write' ? ' Nothing was written after it was stopped; read the file to see its state before trying again.' : ' The folder may be on a slow or unresponsive disk; try a narrower path.';
  return failure(`${spec.name} did not finish within ${seconds} and was stopped.${after}`);
}

/**
 * Runs a tool under its time limit: the call's signal is aborted when the limit passes (writes
 * check it before they replace anything), and the result says so instead of waiting further.
 */
async function runBounded(spec: ToolSpec, args: ArgReader, context: ToolContext): Promise<ToolResult> {
  const limitMs = timeLimitOf(spec, context);
  if (limitMs === undefined) return spec.run(args, context);
  const limiter = new AbortController();
  const signal = context.signal ? AbortSignal.any([context.signal, limiter.signal]) : limiter.signal;
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => {
      limiter.abort(new TimeLimitReached(limitMs));
      resolve('timeout');
    }, limitMs);
  });
  const work = spec.run(args, { ...context, signal });
  try {
    const outcome = await Promise.race([work, limit]);
    if (outcome === 'timeout') {
      // The abandoned call may still settle later; its error is nobody's business any more.
      work.catch(() => undefined);
      return timedOut(spec, limitMs);
    }
    return outcome;
  } catch (error) {
    if (limiter.signal.aborted && !context.signal?.aborted) return timedOut(spec, limitMs);
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

export interface ToolSpec {
  name: ToolName;
  kind: ToolKind;
  description: string;
  properties: Record<string, JsonSchema>;
  required: string[];
  pathArgs?: readonly string[];
  summarize(args: ToolArgs): string;
  run(args: ArgReader, context: ToolContext): Promise<ToolResult>;
  /** Write tools: what the call would write, without writing (see Tool.preview). */
  preview?(args: ArgReader, context: ToolContext): Promise<WritePreview | undefined>;
  /** See Tool.deniedText. */
  deniedText?: string;
}

/** Builds a Tool whose execute turns every expected error into a failed result. */
export function defineTool(spec: ToolSpec): Tool {
  return {
    name: spec.name,
    kind: spec.kind,
    pathArgs: spec.pathArgs ?? [],
    ...(spec.deniedText ? { deniedText: spec.deniedText } : {}),
    definition: {
      type: 'function',
      function: {
        name: spec.name,
        description: spec.description,
        parameters: { type: 'object', properties: spec.properties, required: spec.required },
      },
    },
    summarize(args: ToolArgs): string {
      try {
        return spec.summarize(args ?? {});
      } catch {
        return spec.name;
      }
    },
    ...(spec.preview
      ? {
          async preview(args: ToolArgs, context: ToolContext): Promise<WritePreview | undefined> {
            if (args === null || typeof args !== 'object' || Array.isArray(args)) return undefined;
            try {
              return await spec.preview!(new ArgReader(spec.name, args), context);
            } catch {
              // A call that cannot even be previewed fails when it runs, and says why then.
              return undefined;
            }
          },
        }
      : {}),
    async execute(args: ToolArgs, context: ToolContext): Promise<ToolResult> {
      if (args === null || typeof args !== 'object' || Array.isArray(args)) {
        return failure(`${spec.name}: arguments must be a JSON object.`);
      }
      try {
        if (context.signal?.aborted) return failure(`${spec.name} was cancelled before it ran.`);
        return await runBounded(spec, new ArgReader(spec.name, args), context);
      } catch (error) {
        // Not the call's failure but the engine's (a protected path in speculation, the overlay's
        // disk): the caller decides; the model is not told.
        if (error instanceof EngineFault) throw error;
        if (error instanceof ToolArgumentError || error instanceof PathOutsideWorkspaceError) return failure(error.message);
        if (error instanceof SpecialFileError || error instanceof UnsafeNameError || error instanceof WriteRefusedError) return failure(error.message);
        if (error instanceof FileNotFoundError) return failure(`${error.message}. Check the path (glob or list_directory can find it).`);
        if (isAbort(error, context)) return failure(`${spec.name} was cancelled.`);
        const message = error instanceof Error ? error.message : String(error);
        return failure(`${spec.name} failed: ${message}`);
      }
    },
  };
}
