// Tokens a chat spent, from the servers' usage fields: input (of it: served from the prefix cache)
// and output, kept apart for the main chat and for the background work (suggestions, speculation).
import type { Usage } from '../llm/llmClient';

/** Who spent the tokens: the chat the user sees, or the work done in the background for it. */
export type UsageSource = 'chat' | 'suggestion' | 'speculation';

export const USAGE_SOURCES: readonly UsageSource[] = ['chat', 'suggestion', 'speculation'];

export interface TokenCounts {
  /** prompt_tokens, cached ones included. */
  input: number;
  /** Of `input`, what the provider served from its prefix cache (never more than input). */
  cached: number;
  /** completion_tokens. */
  output: number;
}

/** One model's tokens from one source. Plain JSON, stored with the chat. */
export interface UsageEntry extends TokenCounts {
  source: UsageSource;
  model: string;
}

export interface UsageSnapshot {
  entries: UsageEntry[];
}

export function zeroCounts(): TokenCounts {
  return { input: 0, cached: 0, output: 0 };
}

/** A stored count, or 0 when it is missing or not a sensible count. */
function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.round(value) : 0;
}

/** Server usage as counts: some providers report more cached than prompt tokens, which is capped. */
export function countsOf(usage: Usage): TokenCounts {
  const input = count(usage.promptTokens);
  return { input, cached: Math.min(count(usage.cachedTokens), input), output: count(usage.completionTokens) };
}

export function addCounts(a: TokenCounts, b: TokenCounts): TokenCounts {
  return { input: a.input + b.input, cached: a.cached + b.cached, output: a.output + b.output };
}

export function isZero(counts: TokenCounts): boolean {
  return counts.input === 0 && counts.output === 0;
}

/** Sums by source and model. Mutable; `snapshot()` hands out copies. */
export class UsageLedger {
  private readonly entries = new Map<string, UsageEntry>();

  /** Rebuilds a ledger from a stored snapshot; anything malformed is left out, never thrown. */
  static restore(stored: unknown): UsageLedger {
    const ledger = new UsageLedger();
    const entries = typeof stored === 'object' && stored !== null ? (stored as { entries?: unknown }).entries : undefined;
    if (!Array.isArray(entries)) return ledger;
    for (const raw of entries) {
      if (typeof raw !== 'object' || raw === null) continue;
      const entry = raw as Record<string, unknown>;
      if (!USAGE_SOURCES.includes(entry.source as UsageSource) || typeof entry.model !== 'string') continue;
      ledger.add(entry.source as UsageSource, entry.model, { promptTokens: count(entry.input), cachedTokens: count(entry.cached), completionTokens: count(entry.output) });
    }
    return ledger;
  }

  /** Adds one request's (or one turn's) usage; returns the counts that were added. */
  add(source: UsageSource, model: string, usage: Usage): TokenCounts {
    const counts = countsOf(usage);
    if (isZero(counts)) return counts;
    const key = `${source}\u0000${model}`;
    const entry = this.entries.get(key) ?? { source, model, ...zeroCounts() };
    this.entries.set(key, { ...entry, ...addCounts(entry, counts) });
    return counts;
  }

  /** Everything of another ledger added to this one (a chat's spending into the all-time totals). */
  merge(other: UsageLedger): void {
    for (const entry of other.snapshot().entries) {
      this.add(entry.source, entry.model, { promptTokens: entry.input, cachedTokens: entry.cached, completionTokens: entry.output });
    }
  }

  total(sources: readonly UsageSource[] = USAGE_SOURCES): TokenCounts {
    let sum = zeroCounts();
    for (const entry of this.entries.values()) if (sources.includes(entry.source)) sum = addCounts(sum, entry);
    return sum;
  }

  bySource(source: UsageSource): TokenCounts {
    return this.total([source]);
  }

  clear(): void {
    this.entries.clear();
  }

  snapshot(): UsageSnapshot {
    return { entries: [...this.entries.values()].map((entry) => ({ ...entry })) };
  }
}
