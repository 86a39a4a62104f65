// The tokens of all chats of this installation, for the statistics view: added up per source and
// model from the session's usage events, kept in the extension's global state across windows.
import type * as vscode from 'vscode';
import { formatUsageSummary, summarizeUsage, type PriceTable } from '../../core/usage/prices';
import { UsageLedger, type UsageSource } from '../../core/usage/usageLedger';

const USAGE_KEY = 'speculate.usage';

export class UsageTotals {
  private readonly ledger: UsageLedger;

  constructor(private readonly state: vscode.Memento) {
    this.ledger = UsageLedger.restore(state.get(USAGE_KEY));
  }

  add(event: { source: UsageSource; model: string; counts: { input: number; cached: number; output: number } }): void {
    this.ledger.add(event.source, event.model, { promptTokens: event.counts.input, cachedTokens: event.counts.cached, completionTokens: event.counts.output });
    void this.state.update(USAGE_KEY, this.ledger.snapshot());
  }

  /** The lines of the statistics view's token summary. */
  summary(prices: PriceTable | undefined): string[] {
    return formatUsageSummary(summarizeUsage(this.ledger, prices), 'Tokens, all chats');
  }
}
