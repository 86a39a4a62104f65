// Local counters of how suggestions and speculations fare, for the "Show Statistics" command.
// Plain JSON in and out so the editor can keep it in its own storage; nothing is sent anywhere.
import type { AcceptMethod, SuggestionOutcomeEvent } from '../followup/followupState';
import type { SuggestionResult } from '../followup/suggestionGenerator';

export const STATS_VERSION = 1;

const ACCEPT_METHODS: readonly AcceptMethod[] = ['tab', 'enter', 'right'];

export interface SpeculateStatsSnapshot {
  version: typeof STATS_VERSION;
  suggestions: {
    shown: number;
    accepted: Record<AcceptMethod, number>;
    ignored: number;
    /** Withdrawn by the app (new turn, new chat) before the user did anything with it. */
    cleared: number;
    /** The model judged the next step not obvious and said nothing. */
    silent: number;
    /** The generating call failed (not counting cancels). */
    failed: number;
    filtered: Record<string, number>;
    suppressed: Record<string, number>;
  };
  speculations: {
    started: number;
    completed: number;
    boundary: Record<string, number>;
    aborted: number;
    failed: number;
  };
  forks: {
    calls: number;
    /** Fork requests that read at least part of their prompt from the provider's cache. */
    cachedCalls: number;
    promptTokens: number;
    cachedTokens: number;
  };
  timeSavedMs: number;
}

type Listener = () => void;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A stored count, or 0 when it is missing or not a sensible count. */
function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
}

function countMap(value: unknown): Map<string, number> {
  const map = new Map<string, number>();
  if (!isRecord(value)) return map;
  for (const [key, n] of Object.entries(value)) {
    if (count(n) > 0) map.set(key, count(n));
  }
  return map;
}

function bump(map: Map<string, number>, key: string, by = 1): void {
  map.set(key, (map.get(key) ?? 0) + by);
}

function percent(part: number, whole: number): string {
  return `${Math.round((part / whole) * 100)}%`;
}

function formatNumber(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

function plural(n: number, noun: string): string {
  return `${formatNumber(n)} ${noun}${n === 1 ? '' : 's'}`;
}

/** 41.2 s, 12 min 5 s, 2 h 5 min. */
export function formatDuration(ms: number): string {
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const wholeSeconds = Math.round(seconds);
  if (wholeSeconds < 3600) return `${Math.floor(wholeSeconds / 60)} min ${wholeSeconds % 60} s`;
  const minutes = Math.round(seconds / 60);
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** "too_many_words 4 · meta_text 2", largest first. */
function formatCounts(map: ReadonlyMap<string, number>): string {
  return [...map.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([key, n]) => `${key} ${formatNumber(n)}`)
    .join(' · ');
}

function sum(map: ReadonlyMap<string, number>): number {
  let total = 0;
  for (const n of map.values()) total += n;
  return total;
}

interface Counters {
  shown: number;
  accepted: Map<string, number>;
  ignored: number;
  cleared: number;
  silent: number;
  generationFailed: number;
  filtered: Map<string, number>;
  suppressed: Map<string, number>;
  started: number;
  completed: number;
  boundary: Map<string, number>;
  aborted: number;
  speculationFailed: number;
  forkCalls: number;
  cachedForkCalls: number;
  promptTokens: number;
  cachedTokens: number;
  timeSavedMs: number;
}

function freshCounters(): Counters {
  return {
    shown: 0, accepted: new Map(), ignored: 0, cleared: 0, silent: 0, generationFailed: 0,
    filtered: new Map(), suppressed: new Map(), started: 0, completed: 0, boundary: new Map(),
    aborted: 0, speculationFailed: 0, forkCalls: 0, cachedForkCalls: 0, promptTokens: 0, cachedTokens: 0, timeSavedMs: 0,
  };
}

export class SpeculateStats {
  private c: Counters = freshCounters();
  private readonly listeners = new Set<Listener>();

  /** Counters from a stored snapshot. Never throws: fields that are missing or malformed start at 0. */
  static restore(stored: unknown): SpeculateStats {
    const stats = new SpeculateStats();
    if (!isRecord(stored) || stored.version !== STATS_VERSION) return stats;
    const suggestions = isRecord(stored.suggestions) ? stored.suggestions : {};
    const speculations = isRecord(stored.speculations) ? stored.speculations : {};
    const forks = isRecord(stored.forks) ? stored.forks : {};
    const c = stats.c;
    c.shown = count(suggestions.shown);
    const accepted = countMap(suggestions.accepted);
    for (const method of ACCEPT_METHODS) {
      const n = accepted.get(method);
      if (n !== undefined) c.accepted.set(method, n);
    }
    c.ignored = count(suggestions.ignored);
    c.cleared = count(suggestions.cleared);
    c.silent = count(suggestions.silent);
    c.generationFailed = count(suggestions.failed);
    c.filtered = countMap(suggestions.filtered);
    c.suppressed = countMap(suggestions.suppressed);
    c.started = count(speculations.started);
    c.completed = count(speculations.completed);
    c.boundary = countMap(speculations.boundary);
    c.aborted = count(speculations.aborted);
    c.speculationFailed = count(speculations.failed);
    c.forkCalls = count(forks.calls);
    c.cachedForkCalls = Math.min(count(forks.cachedCalls), c.forkCalls);
    c.promptTokens = count(forks.promptTokens);
    c.cachedTokens = Math.min(count(forks.cachedTokens), c.promptTokens);
    c.timeSavedMs = count(stored.timeSavedMs);
    return stats;
  }

  /** Called after every change, e.g. to persist; returns the function that unsubscribes. */
  onChange(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  // --- suggestions ---------------------------------------------------------------------------

  recordShown(): void {
    this.c.shown++;
    this.changed();
  }

  recordAccepted(method: AcceptMethod): void {
    bump(this.c.accepted, method);
    this.changed();
  }

  recordIgnored(): void {
    this.c.ignored++;
    this.changed();
  }

  recordFiltered(reason: string): void {
    bump(this.c.filtered, reason);
    this.changed();
  }

  recordSuppressed(reason: string): void {
    bump(this.c.suppressed, reason);
    this.changed();
  }

  /** What the follow-up controller reports when a visible suggestion goes away. */
  recordOutcome(event: SuggestionOutcomeEvent): void {
    if (event.outcome === 'accepted') bump(this.c.accepted, event.method ?? 'tab');
    else if (event.outcome === 'ignored') this.c.ignored++;
    else this.c.cleared++;
    this.changed();
  }

  /**
   * What the generator returned, including the fork's token usage (so don't also pass that usage
   * to recordForkUsage). A suggestion is counted as shown only when it becomes visible.
   */
  recordGeneration(result: SuggestionResult): void {
    switch (result.kind) {
      case 'suppressed':
        bump(this.c.suppressed, result.suppressed);
        break;
      case 'filtered':
        bump(this.c.filtered, result.filtered);
        this.addUsage(result.usage);
        break;
      case 'silent':
        this.c.silent++;
        this.addUsage(result.usage);
        break;
      case 'failed':
        if (result.failed === 'error') this.c.generationFailed++;
        break;
      case 'suggestion':
        this.addUsage(result.usage);
        break;
    }
    this.changed();
  }

  // --- speculations --------------------------------------------------------------------------

  recordSpeculationStarted(): void {
    this.c.started++;
    this.changed();
  }

  recordSpeculationCompleted(): void {
    this.c.completed++;
    this.changed();
  }

  /** A speculation stopped at a boundary of this type (shell, edit, denied_tool, path, limit, …). */
  recordSpeculationBoundary(type: string): void {
    bump(this.c.boundary, type);
    this.changed();
  }

  recordSpeculationAborted(): void {
    this.c.aborted++;
    this.changed();
  }

  recordSpeculationFailed(): void {
    this.c.speculationFailed++;
    this.changed();
  }

  // --- forks and time ------------------------------------------------------------------------

  /** One forked model call's prompt tokens, of which `cachedTokens` came from the prefix cache. */
  recordForkUsage(usage: { promptTokens: number; cachedTokens: number }): void {
    this.addUsage(usage);
    this.changed();
  }

  /** Time the user did not wait because a speculation had already done the work. */
  recordTimeSaved(ms: number): void {
    this.c.timeSavedMs += count(ms);
    this.changed();
  }

  /** Back to zero; subscribers stay subscribed. */
  reset(): void {
    this.c = freshCounters();
    this.changed();
  }

  // --- out -----------------------------------------------------------------------------------

  toJSON(): SpeculateStatsSnapshot {
    const c = this.c;
    return {
      version: STATS_VERSION,
      suggestions: {
        shown: c.shown,
        accepted: { tab: c.accepted.get('tab') ?? 0, enter: c.accepted.get('enter') ?? 0, right: c.accepted.get('right') ?? 0 },
        ignored: c.ignored,
        cleared: c.cleared,
        silent: c.silent,
        failed: c.generationFailed,
        filtered: Object.fromEntries(c.filtered),
        suppressed: Object.fromEntries(c.suppressed),
      },
      speculations: {
        started: c.started,
        completed: c.completed,
        boundary: Object.fromEntries(c.boundary),
        aborted: c.aborted,
        failed: c.speculationFailed,
      },
      forks: { calls: c.forkCalls, cachedCalls: c.cachedForkCalls, promptTokens: c.promptTokens, cachedTokens: c.cachedTokens },
      timeSavedMs: c.timeSavedMs,
    };
  }

  /**
   * A readable multi-line summary. `models`: the chat model and speculate.fastModel, for the cost
   * note a different fast model needs (it cannot reuse the main model's prefix cache).
   */
  format(models?: { model: string; fastModel: string }): string {
    const c = this.c;
    const accepted = sum(c.accepted);
    const acceptedShare = c.shown > 0 ? ` (${percent(accepted, c.shown)})` : '';
    const lines = [
      `Suggestions: ${formatNumber(c.shown)} shown · ${formatNumber(accepted)} accepted${acceptedShare} · ${formatNumber(c.ignored)} ignored`,
    ];
    if (accepted > 0) {
      const by = (m: AcceptMethod): string => formatNumber(c.accepted.get(m) ?? 0);
      lines.push(`  Accepted with Tab ${by('tab')} · Enter ${by('enter')} · Right arrow ${by('right')}`);
    }
    if (c.filtered.size > 0) lines.push(`  Filtered out: ${formatCounts(c.filtered)}`);
    if (c.silent > 0) lines.push(`  No obvious next step (model stayed silent): ${formatNumber(c.silent)}`);
    if (c.suppressed.size > 0) lines.push(`  Not requested: ${formatCounts(c.suppressed)}`);
    if (c.generationFailed > 0) lines.push(`  Failed requests: ${formatNumber(c.generationFailed)}`);

    const boundaries = sum(c.boundary);
    lines.push(
      `Speculations: ${formatNumber(c.started)} started · ${formatNumber(c.completed)} completed · ` +
        `${formatNumber(boundaries)} stopped at a boundary · ${formatNumber(c.aborted)} aborted · ${formatNumber(c.speculationFailed)} failed`,
    );
    if (boundaries > 0) lines.push(`  Boundaries: ${formatCounts(c.boundary)}`);

    lines.push(
      c.promptTokens > 0
        ? `Prefix cache: ${percent(c.cachedTokens, c.promptTokens)} of fork prompt tokens cached ` +
            `(${formatNumber(c.cachedTokens)} of ${formatNumber(c.promptTokens)} over ${plural(c.forkCalls, 'call')}); ` +
            `${formatNumber(c.cachedForkCalls)} of ${plural(c.forkCalls, 'fork request')} read from the cache`
        : 'Prefix cache: no forked calls yet',
    );
    const fast = models?.fastModel.trim();
    if (fast && fast !== models?.model.trim()) {
      lines.push(
        `  Forks run on the fast model ${fast}, not ${models?.model || 'the chat model'}: a different model cannot reuse the chat model's ` +
          'prefix cache, so every suggestion and speculation pays for its whole prompt. Leave speculate.fastModel empty to share the cache.',
      );
    }
    lines.push(`Time saved: ${formatDuration(c.timeSavedMs)}`);
    lines.push('These counts stay on this machine; nothing is sent anywhere.');
    return lines.join('\n');
  }

  private addUsage(usage: { promptTokens: number; cachedTokens: number }): void {
    const prompt = count(usage.promptTokens);
    this.c.forkCalls++;
    if (count(usage.cachedTokens) > 0) this.c.cachedForkCalls++;
    this.c.promptTokens += prompt;
    // Some providers report more cached than prompt tokens; a share above 100% would be nonsense
    this.c.cachedTokens += Math.min(count(usage.cachedTokens), prompt);
  }

  private changed(): void {
    for (const listener of [...this.listeners]) {
      try {
        listener();
      } catch {
        // a failing persister must not break counting; the next change tries again
      }
    }
  }
}
