// What the follow-up driver needs of the chat it follows and tells the UI, declared here (the floor of
// the follow-up life cycle) so that the chat and the session above implement it and nothing points up.
import type { CheckpointSummary } from '../checkpoints';
import type { ApprovalMode } from '../chat/approvals';
import type { AppendResult } from '../chat/conversation';
import type { TurnOutcome } from '../chat/events';
import type { Usage } from '../llm/llmClient';
import type { ChatMessage } from '../messages';
import type { CacheSafeParams } from './forkedQuery';
import type { SuggestionOutcomeEvent } from './followupState';
import type { SuggestionResult } from './suggestionGenerator';
import type { DroppedHunks } from './hunkDrops';
import type { SpeculationEvent, SpeculationSnapshot, ToolCallRecord } from './speculation';

/** The settings the follow-up works with (the session's config). */
export interface FollowupConfig {
  model: string;
  /** Model for suggestions and speculation; empty = the main model. */
  fastModel: string;
  approvalMode: ApprovalMode;
  suggestionsEnabled: boolean;
  speculationEnabled: boolean;
  maxTurns: number;
  maxMessages: number;
}

/** A place in the chat the user can go back to: the end of a turn or of an accept. */
export interface ChatPoint {
  id: string;
  /** Messages in the history at that point. */
  historyLength: number;
  /** The checkpoint of the files changed in the step that ended here. */
  checkpointId: string | null;
}

/** The chat a follow-up follows: its history, its turns, and the forks' cache-safe parameters. */
export interface FollowedChat {
  readonly messages: ChatMessage[];
  /** A turn runs (live, or a promoted speculation). */
  readonly busy: boolean;
  readonly approvalPending: boolean;
  readonly lastTurn: 'completed' | 'failed' | 'cancelled';
  /** What forks start from; undefined before the first settled turn. */
  forkParams(): CacheSafeParams | undefined;
  /** After injected turns the history grew: forks must start from it. */
  forkFromCurrentHistory(): void;
  /** Accepted turns join the history (refused when they would split a tool call from its result). */
  appendMessages(messages: ChatMessage[]): AppendResult;
  canResume(): boolean;
  /** The turn the user accepted ended as a completed one (suggestions may follow). */
  settleLastTurn(): void;
  /** A promoted speculation runs in the foreground: the chat is busy meanwhile. */
  setBusy(busy: boolean): void;
  /** A live turn of `text`, which is already on screen as the user's message. */
  runShown(text: string): Promise<TurnOutcome>;
  /** A live turn of `text`, shown as the user's message first. */
  sendLive(text: string): Promise<TurnOutcome>;
  /** The interrupted turn goes on live (after a boundary's finished part was applied). */
  resume(prompt: string): Promise<TurnOutcome>;
  addPoint(checkpoint: CheckpointSummary | null): ChatPoint;
  recordUsage(source: 'suggestion' | 'speculation', model: string, usage: Usage): void;
}

/** What the follow-up tells the UI (a part of the session's events). */
export type FollowupEvent =
  | { type: 'busy'; busy: boolean }
  | { type: 'suggestion'; text: string | null }
  | { type: 'speculation'; snapshot: SpeculationSnapshot | null }
  /** Tab on a still-running speculation: it continues in the foreground; its progress follows. */
  | { type: 'speculation_promoted'; snapshot: SpeculationSnapshot; historyStart: number }
  | { type: 'speculation_progress'; event: SpeculationEvent }
  | {
      type: 'speculation_accepted';
      runId: string;
      suggestion: string;
      messages: ChatMessage[];
      /** Where `messages` start in the history. */
      historyStart: number;
      toolCalls: ToolCallRecord[];
      applied: string[];
      notApplied: string[];
      timeSavedMs: number;
      /** True when the run was promoted and its turns are already on screen. */
      alreadyRendered: boolean;
      /** A boundary run: the main agent continues live from here. */
      continuesLive: boolean;
      /** Files the user left out before Tab. */
      excluded: string[];
      /** Hunks the user dropped before Tab, per applied file (the turns carry a note saying so). */
      droppedHunks?: DroppedHunks[];
      point: ChatPoint;
      /** What undoes the accept; null when it changed no file. */
      checkpoint: CheckpointSummary | null;
      /** Set when the accept committed ahead: the refs it moved, and why the index stayed as it was if it did. */
      committedAhead?: { moved: string[]; indexNote?: string };
    }
  /** A live turn ended (or a failed accept left files applied): its point and the checkpoint of what it changed. */
  | { type: 'turn_recorded'; point: ChatPoint; checkpoint: CheckpointSummary | null }
  | { type: 'conflicts'; runId: string; conflicts: { path: string; reason: string }[] }
  /** `offer`: a button the UI shows with the notice (run_live: the refused request, live, on the user's word). */
  | { type: 'notice'; text: string; offer?: 'run_live' }
  /**
   * Suggestions or speculation cannot work with this endpoint for a reason that waiting will not
   * fix (a refused request, a model that cannot stop thinking …). Said once per reason, quietly.
   */
  | { type: 'fork_unavailable'; reason: string };

/** Where the follow-up's counts go (stats/speculateStats.ts keeps them for the statistics view). */
export interface FollowupStats {
  recordShown(): void;
  recordOutcome(event: SuggestionOutcomeEvent): void;
  recordGeneration(result: SuggestionResult): void;
  recordSpeculationStarted(): void;
  recordSpeculationCompleted(): void;
  recordSpeculationBoundary(type: string): void;
  recordSpeculationAborted(): void;
  recordSpeculationFailed(): void;
  recordForkUsage(usage: { promptTokens: number; cachedTokens: number }): void;
  recordTimeSaved(ms: number): void;
}
