// What a turn's system prompt holds beyond its fixed part — the project's instructions, the user's
// memory, the skills — as the session receives it each turn and the chat shows it.

/** One piece of context a turn used (or could not use), for the chat to show. */
export type ContextSource =
  | { kind: 'instructions'; path: string; size: number; truncated: boolean }
  | { kind: 'memory'; location: string; truncated: boolean }
  | { kind: 'skills'; names: string[] }
  | { kind: 'skill_problem'; path: string; reason: string };

export interface TurnContext {
  /** The whole system prompt for the turn (byte-identical for the same files). */
  systemPrompt: string;
  sources: ContextSource[];
}

/** Builds the turn's context from the files the chat works on (attachments and tool-call paths). */
export type TurnContextProvider = (filesInPlay: readonly string[]) => Promise<TurnContext>;

/** "AGENTS.md · src/AGENTS.md (first 32 KB of 5.0 MB) · memory · 2 skills", for a quiet line in the chat. */
export function describeContext(sources: readonly ContextSource[]): string {
  const parts: string[] = [];
  for (const source of sources) {
    if (source.kind === 'instructions') parts.push(source.truncated ? `${source.path} (cut: ${formatSize(source.size)})` : source.path);
    else if (source.kind === 'memory') parts.push(source.truncated ? 'memory (newest part)' : 'memory');
    else if (source.kind === 'skills') parts.push(source.names.length === 1 ? `skill ${source.names[0]}` : `${source.names.length} skills`);
  }
  return parts.join(' · ');
}

function formatSize(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MB` : `${Math.round(bytes / 1024)} KB`;
}
