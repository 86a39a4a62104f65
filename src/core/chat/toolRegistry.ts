// The set of tools one conversation offers the model: lookup by name for execution, and the
// definitions list sent with every request (its order is part of the cached prompt prefix).
import type { Tool } from '../tools/types';
import type { ToolDefinition } from '../messages';

export interface ToolRegistry {
  get(name: string): Tool | undefined;
  /** The definitions in a stable order; the same list must be sent by the main chat and its forks. */
  definitions(): ToolDefinition[];
  /** Readies tools known only at run time (MCP servers start lazily) before a turn takes its definitions. */
  prepare?(signal?: AbortSignal): Promise<void>;
}

/** A registry over a fixed list, in the order given. Throws on a duplicate name (a wiring mistake). */
export function toolRegistryFrom(tools: readonly Tool[]): ToolRegistry {
  const byName = new Map<string, Tool>();
  for (const tool of tools) {
    if (byName.has(tool.name)) throw new Error(`Two tools are registered as "${tool.name}".`);
    byName.set(tool.name, tool);
  }
  return {
    get: (name) => byName.get(name),
    definitions: () => tools.map((tool) => structuredClone(tool.definition)),
  };
}
