// The chat's token lines in words (and money, with a price table): per turn, and for the whole chat
// with what suggestions and speculation added. Pure (no vscode import).
import { costOf, formatCost, formatCounts, formatUsageSummary, summarizeUsage, type PriceTable } from '../../core/usage/prices';
import { UsageLedger, type TokenCounts, type UsageSnapshot, type UsageSource } from '../../core/usage/usageLedger';
import type { UsageLine } from '../../shared/protocol';

/** Words for tokens (and money, with a price table): "12.3k in (9k cached) · 350 out · $0.004". */
export function usageText(source: UsageSource, model: string, counts: TokenCounts, prices: PriceTable | undefined): UsageLine {
  const cost = prices ? costOf([{ source, model, ...counts }], prices) : undefined;
  const money = cost && cost.unpriced.length === 0 ? ` · ${formatCost(cost.amount, prices!.currency)}` : '';
  return { text: `${formatCounts(counts)}${money}`, detail: `${model}: ${counts.input} input tokens (${counts.cached} from the prefix cache), ${counts.output} output tokens` };
}

/** The chat's line: its own tokens, then what suggestions and speculation added. */
export function chatUsageLine(snapshot: UsageSnapshot, prices: PriceTable | undefined): UsageLine | null {
  const summary = summarizeUsage(UsageLedger.restore(snapshot), prices);
  if (summary.total.input === 0 && summary.total.output === 0) return null;
  const background = summary.background.input + summary.background.output > 0
    ? ` · background ${formatCounts(summary.background)} (${Math.round(summary.backgroundShare * 100)}% of the ${summary.shareOf})`
    : '';
  const cost = summary.cost && summary.cost.unpriced.length === 0 ? ` · ${summary.cost.total}` : '';
  return { text: `This chat: ${formatCounts(summary.chat)}${background}${cost}`, detail: formatUsageSummary(summary, 'This chat').join('\n') };
}
