// Replays test/fixtures/recorded/demo-tab-session.json on a ChatSession as a user would: typed turns,
// Tab on each finished suggestion (after the accept debounce), waiting for what a user waits for.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { ApprovalMode } from '../../src/core/chat/approvals';
import { ACCEPT_DEBOUNCE_MS } from '../../src/core/followup/followupState';
import type { SpeculationSnapshot } from '../../src/core/followup/speculation';
import type { CheckpointStore } from '../../src/core/checkpoints';
import type { LlmClient } from '../../src/core/llm/llmClient';
import { ChatSession, type SessionEvent } from '../../src/core/session';
import type { WorkspaceServices } from '../../src/core/workspaceServices';

const STEP_TIMEOUT_MS = 60_000;
/** A Tab sooner than ACCEPT_DEBOUNCE_MS after the suggestion appeared is ignored, as for a user. */
const TAB_AFTER_SHOWN_MS = ACCEPT_DEBOUNCE_MS + 50;

export interface RecordedSession {
  approvalMode: ApprovalMode;
  steps: Array<{ submit?: string; tab?: boolean; then?: 'speculation' }>;
}

/**
 * The ChatSession the recorded session is played on: the demo's engine settings (suggestions and
 * speculation on, the usual limits, every question denied), over the given services and client.
 */
export function recordedSessionChat(recorded: RecordedSession, services: WorkspaceServices, llm: LlmClient, checkpoints?: CheckpointStore): ChatSession {
  return new ChatSession({
    llm,
    config: { model: 'scripted-model', fastModel: '', approvalMode: recorded.approvalMode, suggestionsEnabled: true, speculationEnabled: true, maxTurns: 20, maxMessages: 100 },
    systemPrompt: services.systemPrompt,
    tools: services.tools,
    toolContext: services.toolContext,
    prompter: { request: async () => 'deny' },
    classifyShell: services.classifyShell,
    createOverlay: services.createOverlay,
    ...(checkpoints ? { checkpoints } : {}),
  });
}

export function loadRecordedSession(): RecordedSession {
  return JSON.parse(readFileSync(path.join(process.cwd(), 'test/fixtures/recorded/demo-tab-session.json'), 'utf8')) as RecordedSession;
}

/** Follows the session's events so the replay can wait for what a user would wait for. */
export class SessionWatcher {
  suggestion: string | null = null;
  /** When the current suggestion appeared (Date.now()). */
  suggestionShownAt = 0;
  speculation: SpeculationSnapshot | null = null;
  /** Every run's last snapshot, in the order they finished (ready, boundary, failed, aborted). */
  readonly finishedSnapshots: SpeculationSnapshot[] = [];
  /** Ids of the runs accepted with Tab. */
  readonly accepted: string[] = [];
  private readonly finished = new Set<string>();
  private readonly waiters = new Set<() => void>();

  constructor(session: ChatSession, readonly label = 'recorded session') {
    session.subscribe((event: SessionEvent) => {
      if (event.type === 'suggestion') {
        this.suggestion = event.text;
        this.suggestionShownAt = Date.now();
      }
      if (event.type === 'speculation') {
        this.speculation = event.snapshot;
        if (event.snapshot && event.snapshot.status !== 'running' && !this.finished.has(event.snapshot.id)) {
          this.finished.add(event.snapshot.id);
          this.finishedSnapshots.push(event.snapshot);
        }
      }
      if (event.type === 'speculation_accepted') this.accepted.push(event.runId);
      for (const waiter of [...this.waiters]) waiter();
    });
  }

  /** Ids of the runs that have finished so far. */
  finishedRuns(): Set<string> {
    return new Set(this.finished);
  }

  /** The first run that finished and is not in `before`. */
  newlyFinished(before: Set<string>): string | undefined {
    return [...this.finished].find((id) => !before.has(id));
  }

  until(condition: () => boolean, what: string): Promise<void> {
    if (condition()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`${this.label}: timed out waiting for ${what}`));
      }, STEP_TIMEOUT_MS);
      const check = () => {
        if (!condition()) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      this.waiters.add(check);
    });
  }
}

/**
 * Plays every step of `recorded` on `session` (typed turns, Tab on each ready speculation, the waits
 * recorded after a step); throws when a typed turn does not end with an answer.
 */
export async function replayRecordedSession(session: ChatSession, recorded: RecordedSession, watcher = new SessionWatcher(session)): Promise<void> {
  const label = watcher.label;
  for (const step of recorded.steps) {
    const before = watcher.finishedRuns();
    if (step.submit !== undefined) {
      const outcome = await session.submit(step.submit);
      if (outcome?.status !== 'done') throw new Error(`${label}: "${step.submit}" ended ${outcome?.status ?? 'without a turn'}`);
    } else if (step.tab) {
      await watcher.until(() => watcher.suggestion !== null && watcher.speculation?.status === 'completed', 'a ready speculation to accept');
      const wait = watcher.suggestionShownAt + TAB_AFTER_SHOWN_MS - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      await session.acceptSuggestion('tab');
    }
    if (step.then === 'speculation') await watcher.until(() => watcher.newlyFinished(before) !== undefined, `the speculation after step ${JSON.stringify(step)}`);
  }
}
