// The accept flow of one finished speculation, from Tab to injected turns: apply its overlay, take
// the user's answer for each conflicting file, inject the speculated messages. It decides nothing
// about what runs next: each step returns an outcome, and the session turns it into events and turns.
import type { AppendResult } from '../chat/conversation';
import type { ChatMessage } from '../messages';
import type { ApplyResult, Speculation, SpeculationSnapshot, ToolCallRecord } from './speculation';

export type ConflictChoice = 'overwrite' | 'keep-mine';

/** A run that was applied and whose turns joined the conversation. */
export interface AcceptedRun {
  snapshot: SpeculationSnapshot;
  messages: ChatMessage[];
  /** The calls that ran, in order. */
  toolCalls: ToolCallRecord[];
  applied: string[];
  /** Files the user kept their own version of. */
  notApplied: string[];
  timeSavedMs: number;
  /** A boundary run: the main agent continues live from where it stopped. */
  continuesLive: boolean;
}

/** Where an accept stands after a step. */
export type AcceptStep =
  /** Files changed under the speculation: nothing more happens until the user answers for each. */
  | { kind: 'conflicts'; conflicts: { path: string; reason: string }[] }
  /** Some conflicts still wait for an answer. */
  | { kind: 'waiting' }
  /** Nothing was injected: the request runs live, and the user is told why. */
  | { kind: 'run_live'; notice: string; why: string }
  | { kind: 'injected'; run: AcceptedRun };

export interface AcceptanceOptions {
  /** Adds the speculated messages to the main conversation. */
  inject: (messages: ChatMessage[]) => AppendResult;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export class SpeculationAcceptance {
  private applied: string[] = [];
  /** Conflicting paths still waiting for the user, with the reason code. */
  private readonly unresolved = new Map<string, string>();
  private readonly overwrite: string[] = [];
  private readonly keep: string[] = [];

  constructor(
    readonly speculation: Speculation,
    /** True when the run was promoted and its turns are already on screen. */
    readonly alreadyRendered: boolean,
    private readonly options: AcceptanceOptions,
  ) {}

  /** Applies every file that did not change under the speculation. */
  async start(): Promise<AcceptStep> {
    let result: ApplyResult;
    try {
      result = await this.speculation.apply();
    } catch (error) {
      // Fail open: nothing half-applied is injected; the suggestion runs live instead.
      return {
        kind: 'run_live',
        why: `apply failed: ${String(error)}`,
        notice: `Could not apply the speculated changes (${messageOf(error)}); running the request live instead.`,
      };
    }
    this.applied = result.applied;
    if (result.conflicts.length === 0) return this.inject([]);
    for (const conflict of result.conflicts) this.unresolved.set(conflict.path, conflict.reason);
    return { kind: 'conflicts', conflicts: result.conflicts.map((c) => ({ path: c.path, reason: c.message ?? c.reason })) };
  }

  /** Whether `path` is a conflict still waiting for an answer. */
  waitsFor(path: string): boolean {
    return this.unresolved.has(path);
  }

  /** The user's answer for one conflicting file; once every file has one, the rest is applied and injected. */
  async resolve(path: string, choice: ConflictChoice): Promise<AcceptStep> {
    if (!this.unresolved.delete(path)) return { kind: 'waiting' };
    (choice === 'overwrite' ? this.overwrite : this.keep).push(path);
    if (this.unresolved.size > 0) return { kind: 'waiting' };
    if (this.overwrite.length > 0) {
      const forced = await this.speculation.apply({ overwrite: this.overwrite, skip: [...this.keep, ...this.applied] });
      this.applied = [...this.applied, ...forced.applied];
      for (const conflict of forced.conflicts) if (!this.keep.includes(conflict.path)) this.keep.push(conflict.path);
    }
    return this.inject(this.keep);
  }

  /** What the user is told when they cancel an accept that waits for conflicts. */
  cancelledNotice(): string {
    return `Accept cancelled: ${this.applied.length} file(s) had been applied; the rest were left as they are.`;
  }

  private inject(notApplied: string[]): AcceptStep {
    const speculation = this.speculation;
    const snapshot = speculation.snapshot();
    const messages = speculation.messagesForInjection(notApplied);
    const appended = this.options.inject(messages);
    if (!appended.ok) {
      return {
        kind: 'run_live',
        why: `could not inject speculated messages: ${appended.reason}`,
        notice: `The speculated turns could not join the chat (${appended.reason}); running the request live.`,
      };
    }
    return {
      kind: 'injected',
      run: {
        snapshot,
        messages,
        toolCalls: snapshot.toolCalls.filter((record) => record.executed),
        applied: this.applied,
        notApplied,
        timeSavedMs: speculation.timeSavedMs(),
        continuesLive: snapshot.status === 'boundary',
      },
    };
  }
}
