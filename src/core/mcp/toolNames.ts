// The names MCP tools are offered under: `mcp__<server>__<tool>`, spelled with what every provider
// accepts in a function name (OpenAI: ^[a-zA-Z0-9_-]{1,64}$; Gemini is stricter still on length).
import { createHash } from 'node:crypto';

export const MCP_TOOL_PREFIX = 'mcp__';
export const MAX_TOOL_NAME_LENGTH = 64;

/** Replaces every character outside [a-zA-Z0-9_-] by `_`; an empty result becomes `_`. */
export function sanitizeNamePart(part: string): string {
  const clean = part.replace(/[^a-zA-Z0-9_-]/g, '_');
  return clean === '' ? '_' : clean;
}

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}

/**
 * Assigns each (server, tool) pair a provider-safe name, unique within `taken`. A name too long, or
 * one that collides after sanitising (`a.b` and `a_b`), is cut and given a hash of the original pair,
 * so the same pair always gets the same name (the tool list stays byte-stable for prompt caching).
 */
export function mcpToolName(server: string, tool: string, taken: ReadonlySet<string>): string {
  const plain = `${MCP_TOOL_PREFIX}${sanitizeNamePart(server)}__${sanitizeNamePart(tool)}`;
  if (plain.length <= MAX_TOOL_NAME_LENGTH && !taken.has(plain)) return plain;
  const suffix = `_${shortHash(`${server}\u0000${tool}`)}`;
  let name = plain.slice(0, MAX_TOOL_NAME_LENGTH - suffix.length) + suffix;
  for (let n = 2; taken.has(name); n++) {
    const more = `${suffix}${n}`;
    name = plain.slice(0, MAX_TOOL_NAME_LENGTH - more.length) + more;
  }
  return name;
}

export function isMcpToolName(name: string): boolean {
  return name.startsWith(MCP_TOOL_PREFIX);
}
