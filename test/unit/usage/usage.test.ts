// Usage: sums per source and model with cached tokens, the stored form, prices and the words shown.
import * as assert from 'node:assert/strict';
import { costOf, formatCost, formatCounts, formatTokens, formatUsageSummary, parsePriceTable, priceFor, summarizeUsage } from '../../../src/core/usage/prices';
import { UsageLedger } from '../../../src/core/usage/usageLedger';

const usage = (promptTokens: number, cachedTokens: number, completionTokens: number) => ({ promptTokens, cachedTokens, completionTokens });

function sampleLedger(): UsageLedger {
  const ledger = new UsageLedger();
  ledger.add('chat', 'big', usage(10_000, 0, 500));
  ledger.add('chat', 'big', usage(12_000, 9_000, 300));
  ledger.add('suggestion', 'big', usage(12_300, 12_000, 10));
  ledger.add('speculation', 'fast', usage(20_000, 18_000, 700));
  return ledger;
}

describe('usage ledger', () => {
  it('sums input, cached and output per source, cached tokens included in input', () => {
    const ledger = sampleLedger();
    assert.deepEqual(ledger.bySource('chat'), { input: 22_000, cached: 9_000, output: 800 });
    assert.deepEqual(ledger.bySource('suggestion'), { input: 12_300, cached: 12_000, output: 10 });
    assert.deepEqual(ledger.total(), { input: 54_300, cached: 39_000, output: 1_510 });
  });

  it('never counts more cached than input tokens, and ignores nonsense counts', () => {
    const ledger = new UsageLedger();
    ledger.add('chat', 'm', usage(100, 500, 5));
    ledger.add('chat', 'm', usage(Number.NaN, -4, 1));
    assert.deepEqual(ledger.total(), { input: 100, cached: 100, output: 6 });
  });

  it('survives its stored form and drops malformed entries', () => {
    const ledger = sampleLedger();
    const restored = UsageLedger.restore(JSON.parse(JSON.stringify(ledger.snapshot())));
    assert.deepEqual(restored.snapshot(), ledger.snapshot());
    const damaged = UsageLedger.restore({ entries: [{ source: 'chat', model: 'm', input: 5, cached: 1, output: 'x' }, { source: 'evil', model: 'm', input: 9 }, null, 7] });
    assert.deepEqual(damaged.snapshot().entries, [{ source: 'chat', model: 'm', input: 5, cached: 1, output: 0 }]);
    assert.deepEqual(UsageLedger.restore('garbage').snapshot(), { entries: [] });
  });

  it('merges one chat into the all-time totals', () => {
    const all = new UsageLedger();
    all.merge(sampleLedger());
    all.merge(sampleLedger());
    assert.deepEqual(all.total(), { input: 108_600, cached: 78_000, output: 3_020 });
  });
});

describe('prices', () => {
  const table = parsePriceTable({ big: { input: 2, cachedInput: 0.5, output: 8 }, 'fast*': { input: 0.1, output: 0.4 }, broken: { input: 'x', output: 1 } }, '€')!;

  it('keeps valid entries only, with the currency symbol', () => {
    assert.deepEqual(Object.keys(table.models).sort(), ['big', 'fast*']);
    assert.equal(table.currency, '€');
    assert.equal(parsePriceTable({ m: { input: 1 } }, '$'), undefined, 'no output price: nothing priced');
    assert.equal(parsePriceTable('nope', '$'), undefined);
    assert.equal(parsePriceTable({ m: { input: 1, output: 2 } }, undefined)!.currency, '$');
  });

  it('finds a model by name or by the longest prefix entry', () => {
    assert.equal(priceFor(table, 'big')?.output, 8);
    assert.equal(priceFor(table, 'fast-1.5')?.input, 0.1);
    assert.equal(priceFor(table, 'other'), undefined);
  });

  it('charges cached input at the cached price and names unpriced models', () => {
    const ledger = sampleLedger();
    const cost = costOf(ledger.snapshot().entries, table);
    // big: uncached 13,000 + 3,300 at 2, cached 9,000 + 12,000 at 0.5, output 810 at 8; fast: input 20,000 at 0.1, output 700 at 0.4
    const expected = ((13_000 + 300) * 2 + 21_000 * 0.5 + 810 * 8 + 20_000 * 0.1 + 700 * 0.4) / 1e6;
    assert.ok(Math.abs(cost.amount - expected) < 1e-12, `${cost.amount} ≈ ${expected}`);
    assert.deepEqual(cost.unpriced, []);
    ledger.add('chat', 'mystery', usage(1000, 0, 10));
    assert.deepEqual(costOf(ledger.snapshot().entries, table).unpriced, ['mystery']);
  });

  it('writes amounts and token counts the way a person reads them', () => {
    assert.equal(formatCost(0.00423, '$'), '$0.0042');
    assert.equal(formatCost(0.4123, '$'), '$0.412');
    assert.equal(formatCost(12.3, '€'), '€12.30');
    assert.equal(formatCost(0, '$'), '$0.00');
    assert.deepEqual([950, 1234, 12_345, 1_250_000, 2_000_000].map(formatTokens), ['950', '1.23k', '12.3k', '1.25M', '2M']);
    assert.equal(formatCounts({ input: 12_345, cached: 9_100, output: 350 }), '12.3k in (9.1k cached) · 350 out');
    assert.equal(formatCounts({ input: 500, cached: 0, output: 20 }), '500 in · 20 out');
  });

  it('summarises the background share by cost when priced, else by tokens', () => {
    const ledger = sampleLedger();
    const byTokens = summarizeUsage(ledger);
    assert.equal(byTokens.shareOf, 'tokens');
    assert.ok(Math.abs(byTokens.backgroundShare - (33_010 / 55_810)) < 1e-9);
    const byCost = summarizeUsage(ledger, table);
    assert.equal(byCost.shareOf, 'cost');
    assert.ok(byCost.backgroundShare > 0 && byCost.backgroundShare < byTokens.backgroundShare, 'cached background tokens cost less than their share of tokens');
    assert.deepEqual(formatUsageSummary(byTokens, 'All chats'), [
      'All chats: 54.3k in (39k cached) · 1.51k out',
      '  Chat: 22k in (9k cached) · 800 out',
      '  Background: 32.3k in (30k cached) · 710 out · 59% of the tokens',
      '    Suggestions: 12.3k in (12k cached) · 10 out',
      '    Speculation: 20k in (18k cached) · 700 out',
    ]);
    assert.deepEqual(formatUsageSummary(summarizeUsage(new UsageLedger())), ['Tokens: none spent yet']);
  });
});
