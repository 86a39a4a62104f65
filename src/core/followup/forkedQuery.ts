// Cache-aware forks of the main conversation. CacheSafeParams is the snapshot every fork starts
// from; implementation to follow with the chat agent.
import type { ChatMessage, ToolDefinition } from '../chat/messages';

export const MAX_HISTORY_FOR_CACHE = 40;

export interface GenerationConfig {
  systemPrompt: string;
  tools: ToolDefinition[];
  temperature?: number;
}

/** A deep snapshot of what the main chat last sent; forks reuse it byte for byte. */
export interface CacheSafeParams {
  generationConfig: GenerationConfig;
  /** Curated history (no system message), at most MAX_HISTORY_FOR_CACHE entries. */
  history: ChatMessage[];
  model: string;
  /** Bumps only when the JSON of system prompt or tools changes. */
  version: number;
}
