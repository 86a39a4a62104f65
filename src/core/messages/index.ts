// The ground floor: the message vocabulary every layer speaks (the OpenAI chat format, typed, nothing
// provider-specific). Stored history always holds real workspace paths; never an overlay path.

export interface SystemMessage {
  role: 'system';
  content: string;
}

export interface UserMessage {
  role: 'user';
  content: string;
}

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
  /**
   * Opaque provider data that came with the call and must go back with it (Gemini's thought
   * signature in `extra_content.google`); sent back only to the provider that asks for it.
   */
  extra_content?: Record<string, unknown>;
}

export interface AssistantMessage {
  role: 'assistant';
  content: string | null;
  tool_calls?: ToolCall[];
  /**
   * The model's reasoning, kept on messages with tool calls only: thinking models such as DeepSeek
   * and Kimi require it back on later tool-calling rounds. Sent only to servers that need it.
   */
  reasoning_content?: string;
}

export interface ToolMessage {
  role: 'tool';
  tool_call_id: string;
  content: string;
}

export type ChatMessage = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

/** The parsed arguments of a tool call. */
export type ToolArgs = Record<string, unknown>;

/** JSON Schema subset used for tool parameters. */
export interface JsonSchema {
  type?: string | string[];
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: (string | number | boolean)[];
  additionalProperties?: boolean | JsonSchema;
}

export interface ToolDefinition {
  type: 'function';
  function: { name: string; description: string; parameters: JsonSchema };
}
