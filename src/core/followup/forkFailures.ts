// Forks of the main chat for suggestions: the runner that asks the model from the chat's cache-safe
// parameters, and the failures worth saying — a lasting one once per reason, a transient one only logged.
import type { LlmClient } from '../llm/llmClient';
import type { ChatMessage } from '../messages';
import { runForkedQuery, type CacheSafeParams } from './forkedQuery';
import { forkRunnerFromQuery, type SuggestionResult } from './suggestionGenerator';

/** A runner that forks the chat as `params()` holds it when it runs, with `extraHistory` after it. */
export function forkRunnerFor(llm: LlmClient, params: () => CacheSafeParams | undefined, model: () => string, extraHistory: readonly ChatMessage[] = []) {
  return forkRunnerFromQuery(async (extraMessages, signal) => {
    const current = params();
    if (!current) throw new Error('no conversation to fork from yet');
    const fastModel = model();
    return runForkedQuery({
      params: current,
      llm,
      extraMessages: [...extraHistory, ...extraMessages],
      ...(fastModel ? { model: fastModel } : {}),
      signal,
    });
  });
}

export class ForkFailures {
  /** The lasting failure last said to the user. */
  private reported: string | undefined;

  constructor(
    private readonly log: (line: string) => void,
    private readonly say: (reason: string) => void,
  ) {}

  /**
   * A fork that failed for a lasting reason is logged and said once (per reason) in the
   * speculation status; a transient one is only logged. A fork that works clears it.
   */
  note(result: SuggestionResult): void {
    if (result.kind !== 'failed') {
      this.reported = undefined;
      return;
    }
    this.log(`suggestion ${result.failed}: ${result.message}`);
    if (result.failed !== 'error' || result.transient === true) return;
    const reason = result.reason ?? result.message;
    if (reason === this.reported) return;
    this.reported = reason;
    this.say(reason);
  }

  /** The endpoint, key or model may have changed, or a new chat began: say a lasting failure again. */
  forget(): void {
    this.reported = undefined;
  }
}
