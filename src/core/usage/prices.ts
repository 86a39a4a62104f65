// Turns tokens into money with the user's optional price table (per million tokens, per model), and
// words for usage: "12.3k in (9.1k cached) · 350 out · $0.004". Nothing here is ever sent anywhere.
import { addCounts, type TokenCounts, type UsageEntry, type UsageLedger } from './usageLedger';

/** Prices per million tokens. `cachedInput` defaults to `input` (a provider without a cache discount). */
export interface ModelPrice {
  input: number;
  cachedInput?: number;
  output: number;
}

export interface PriceTable {
  /** Written before the amount, e.g. "$", "€", "¥". */
  currency: string;
  /** Model id → price. A key ending in `*` prices every model that starts with the rest. */
  models: Record<string, ModelPrice>;
}

const MAX_CURRENCY_LENGTH = 4;

function price(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/**
 * The price table from settings (a workspace may set it, so nothing is trusted): entries without a
 * valid input and output price are dropped. Undefined when no model is priced.
 */
export function parsePriceTable(models: unknown, currency: unknown): PriceTable | undefined {
  if (typeof models !== 'object' || models === null || Array.isArray(models)) return undefined;
  const table: Record<string, ModelPrice> = {};
  for (const [model, raw] of Object.entries(models)) {
    if (typeof raw !== 'object' || raw === null) continue;
    const entry = raw as Record<string, unknown>;
    const input = price(entry.input);
    const output = price(entry.output);
    if (input === undefined || output === undefined || model.trim() === '') continue;
    const cachedInput = price(entry.cachedInput);
    table[model.trim()] = cachedInput === undefined ? { input, output } : { input, cachedInput, output };
  }
  if (Object.keys(table).length === 0) return undefined;
  const symbol = typeof currency === 'string' && currency.trim() !== '' ? currency.trim().slice(0, MAX_CURRENCY_LENGTH) : '$';
  return { currency: symbol, models: table };
}

/** The price of a model: its own entry, else the longest `prefix*` entry that matches. */
export function priceFor(table: PriceTable, model: string): ModelPrice | undefined {
  const exact = table.models[model];
  if (exact) return exact;
  let best: { length: number; price: ModelPrice } | undefined;
  for (const [key, value] of Object.entries(table.models)) {
    if (!key.endsWith('*')) continue;
    const prefix = key.slice(0, -1);
    if (model.startsWith(prefix) && (!best || prefix.length > best.length)) best = { length: prefix.length, price: value };
  }
  return best?.price;
}

export interface Cost {
  amount: number;
  /** Models that spent tokens but have no price: the amount leaves them out. */
  unpriced: string[];
}

/** What these entries cost; cached input at the cached price. */
export function costOf(entries: readonly UsageEntry[], table: PriceTable): Cost {
  let amount = 0;
  const unpriced = new Set<string>();
  for (const entry of entries) {
    const p = priceFor(table, entry.model);
    if (!p) {
      unpriced.add(entry.model);
      continue;
    }
    const uncached = entry.input - entry.cached;
    amount += (uncached * p.input + entry.cached * (p.cachedInput ?? p.input) + entry.output * p.output) / 1_000_000;
  }
  return { amount, unpriced: [...unpriced].sort() };
}

/** $0.0042, $0.41, $12.30: enough digits that a cheap turn is not "$0.00". */
export function formatCost(amount: number, currency: string): string {
  const digits = amount === 0 ? 2 : amount < 0.01 ? 4 : amount < 1 ? 3 : 2;
  return `${currency}${amount.toFixed(digits)}`;
}

/** 950, 12.3k, 1.25M. */
export function formatTokens(n: number): string {
  if (n < 1000) return String(Math.round(n));
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 2 : 1).replace(/\.?0+$/, '')}k`;
  return `${(n / 1_000_000).toFixed(2).replace(/\.?0+$/, '')}M`;
}

/** "12.3k in (9.1k cached) · 350 out". */
export function formatCounts(counts: TokenCounts): string {
  const cached = counts.cached > 0 ? ` (${formatTokens(counts.cached)} cached)` : '';
  return `${formatTokens(counts.input)} in${cached} · ${formatTokens(counts.output)} out`;
}

/** One chat's (or all chats') spending, split into what the user asked and the background work. */
export interface UsageSummary {
  total: TokenCounts;
  chat: TokenCounts;
  /** Suggestions and speculation together. */
  background: TokenCounts;
  suggestion: TokenCounts;
  speculation: TokenCounts;
  /** The background's share, of the cost when every model is priced, else of all tokens (0–1). */
  backgroundShare: number;
  shareOf: 'cost' | 'tokens';
  /** Present with a price table. */
  cost?: { total: string; background: string; unpriced: string[] };
}

export function summarizeUsage(ledger: UsageLedger, table?: PriceTable): UsageSummary {
  const chat = ledger.bySource('chat');
  const suggestion = ledger.bySource('suggestion');
  const speculation = ledger.bySource('speculation');
  const background = addCounts(suggestion, speculation);
  const total = addCounts(chat, background);
  const tokens = (c: TokenCounts) => c.input + c.output;
  const summary: UsageSummary = {
    total,
    chat,
    background,
    suggestion,
    speculation,
    backgroundShare: tokens(total) > 0 ? tokens(background) / tokens(total) : 0,
    shareOf: 'tokens',
  };
  if (!table) return summary;
  const entries = ledger.snapshot().entries;
  const all = costOf(entries, table);
  const backgroundCost = costOf(entries.filter((e) => e.source !== 'chat'), table);
  summary.cost = { total: formatCost(all.amount, table.currency), background: formatCost(backgroundCost.amount, table.currency), unpriced: all.unpriced };
  if (all.unpriced.length === 0 && all.amount > 0) {
    summary.backgroundShare = backgroundCost.amount / all.amount;
    summary.shareOf = 'cost';
  }
  return summary;
}

/** The statistics view's lines for these totals. */
export function formatUsageSummary(summary: UsageSummary, heading = 'Tokens'): string[] {
  if (summary.total.input === 0 && summary.total.output === 0) return [`${heading}: none spent yet`];
  const percent = `${Math.round(summary.backgroundShare * 100)}% of the ${summary.shareOf}`;
  const lines = [
    `${heading}: ${formatCounts(summary.total)}${summary.cost ? ` · ${summary.cost.total}` : ''}`,
    `  Chat: ${formatCounts(summary.chat)}`,
    `  Background: ${formatCounts(summary.background)} · ${percent}${summary.cost ? ` · ${summary.cost.background}` : ''}`,
    `    Suggestions: ${formatCounts(summary.suggestion)}`,
    `    Speculation: ${formatCounts(summary.speculation)}`,
  ];
  if (summary.cost && summary.cost.unpriced.length > 0) lines.push(`  No price for ${summary.cost.unpriced.join(', ')} (speculate.usage.prices), so the amount leaves it out.`);
  return lines;
}
