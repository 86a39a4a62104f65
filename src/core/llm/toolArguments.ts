// Turns the raw arguments string a model streamed for a tool call into an object, or into an
// error text the agent loop sends back to the model (malformed JSON must never crash a turn).
import type { ToolArgs } from '../messages';

export type ParsedToolArguments = { ok: true; args: ToolArgs } | { ok: false; error: string };

const MAX_ECHO_CHARS = 200;

export function parseToolArguments(raw: string): ParsedToolArguments {
  // Several servers send "" (not "{}") for a call without arguments.
  if (raw.trim() === '') return { ok: true, args: {} };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return {
      ok: false,
      error:
        `The arguments of this tool call are not valid JSON (${reason}): ${echo(raw)}. ` +
        'Call the tool again with its arguments as one JSON object.',
    };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return {
      ok: false,
      error: `The arguments of this tool call must be a JSON object, got ${echo(raw)}. Call the tool again with an object.`,
    };
  }
  return { ok: true, args: value as ToolArgs };
}

function echo(raw: string): string {
  return raw.length > MAX_ECHO_CHARS ? `${raw.slice(0, MAX_ECHO_CHARS)}…` : raw;
}
