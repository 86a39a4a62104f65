// Local statistics: counting, the stored form and its repair, and the summary a user reads.
import * as assert from 'node:assert/strict';
import { SpeculateStats, formatDuration } from '../../../src/core/stats/speculateStats';

const USAGE = { promptTokens: 1000, completionTokens: 5, cachedTokens: 800 };

/** 12 shown, 7 accepted (5 Tab, 2 Enter), 3 ignored, 2 cleared, and some of everything else. */
function busyStats(): SpeculateStats {
  const stats = new SpeculateStats();
  for (let i = 0; i < 12; i++) stats.recordShown();
  for (let i = 0; i < 5; i++) stats.recordOutcome({ outcome: 'accepted', method: 'tab', text: 'x', visibleMs: 10 });
  stats.recordAccepted('enter');
  stats.recordAccepted('enter');
  for (let i = 0; i < 3; i++) stats.recordOutcome({ outcome: 'ignored', text: 'x', visibleMs: 10 });
  stats.recordOutcome({ outcome: 'cleared', text: 'x', visibleMs: 10 });
  stats.recordOutcome({ outcome: 'cleared', text: 'x', visibleMs: 10 });
  stats.recordGeneration({ kind: 'filtered', filtered: 'too_many_words', text: 'x', usage: USAGE, toolCallsIgnored: 0 });
  stats.recordGeneration({ kind: 'filtered', filtered: 'too_many_words', text: 'x', usage: USAGE, toolCallsIgnored: 0 });
  stats.recordFiltered('meta_text');
  stats.recordGeneration({ kind: 'suppressed', suppressed: 'user_typing' });
  stats.recordSuppressed('too_early');
  stats.recordGeneration({ kind: 'silent', usage: USAGE, toolCallsIgnored: 0 });
  stats.recordGeneration({ kind: 'failed', failed: 'error', message: 'boom' });
  stats.recordGeneration({ kind: 'failed', failed: 'aborted', message: 'typed' });
  stats.recordGeneration({ kind: 'suggestion', suggestion: 'run tests', usage: USAGE, toolCallsIgnored: 0 });
  for (let i = 0; i < 9; i++) stats.recordSpeculationStarted();
  for (let i = 0; i < 6; i++) stats.recordSpeculationCompleted();
  stats.recordSpeculationBoundary('shell');
  stats.recordSpeculationBoundary('edit');
  stats.recordSpeculationAborted();
  stats.recordForkUsage({ promptTokens: 2000, cachedTokens: 1960 });
  stats.recordTimeSaved(30_000);
  stats.recordTimeSaved(11_200);
  return stats;
}

describe('speculateStats', () => {
  it('starts at zero', () => {
    const snapshot = new SpeculateStats().toJSON();
    assert.equal(snapshot.suggestions.shown, 0);
    assert.deepEqual(snapshot.suggestions.accepted, { tab: 0, enter: 0, right: 0 });
    assert.deepEqual(snapshot.suggestions.filtered, {});
    assert.equal(snapshot.forks.promptTokens, 0);
    assert.equal(snapshot.timeSavedMs, 0);
  });

  it('counts each event where it belongs', () => {
    const snapshot = busyStats().toJSON();
    assert.deepEqual(snapshot.suggestions, {
      shown: 12,
      accepted: { tab: 5, enter: 2, right: 0 },
      ignored: 3,
      cleared: 2,
      silent: 1,
      failed: 1, // the aborted generation is not a failure
      filtered: { too_many_words: 2, meta_text: 1 },
      suppressed: { user_typing: 1, too_early: 1 },
    });
    assert.deepEqual(snapshot.speculations, { started: 9, completed: 6, boundary: { shell: 1, edit: 1 }, aborted: 1, failed: 0 });
    // four generations reached the model (filtered ×2, silent, suggestion), plus one speculation fork
    assert.deepEqual(snapshot.forks, { calls: 5, cachedCalls: 5, promptTokens: 6000, cachedTokens: 5160 });
    assert.equal(snapshot.timeSavedMs, 41_200);
  });

  it('never counts more cached than prompt tokens, nor negative time', () => {
    const stats = new SpeculateStats();
    stats.recordForkUsage({ promptTokens: 100, cachedTokens: 500 });
    stats.recordTimeSaved(-50);
    stats.recordTimeSaved(Number.NaN);
    assert.deepEqual(stats.toJSON().forks, { calls: 1, cachedCalls: 1, promptTokens: 100, cachedTokens: 100 });
    assert.equal(stats.toJSON().timeSavedMs, 0);
  });

  describe('stored form', () => {
    it('survives a round trip through JSON text', () => {
      const original = busyStats();
      const restored = SpeculateStats.restore(JSON.parse(JSON.stringify(original)));
      assert.deepEqual(restored.toJSON(), original.toJSON());
      restored.recordShown();
      assert.equal(restored.toJSON().suggestions.shown, 13);
    });

    for (const [what, stored] of [
      ['undefined', undefined],
      ['null', null],
      ['a string', 'stats'],
      ['an array', [1, 2]],
      ['another version', { ...busyStats().toJSON(), version: 99 }],
    ] as [string, unknown][]) {
      it(`starts fresh from ${what}`, () => {
        assert.deepEqual(SpeculateStats.restore(stored).toJSON(), new SpeculateStats().toJSON());
      });
    }

    it('keeps the valid counts of a damaged snapshot and zeroes the rest', () => {
      const damaged = JSON.parse(JSON.stringify(busyStats())) as Record<string, Record<string, unknown>>;
      damaged.suggestions!.shown = 'twelve';
      damaged.suggestions!.ignored = -3;
      damaged.suggestions!.filtered = { meta_text: 1, too_long: 'x', ['__proto__']: 4 };
      damaged.speculations = [] as unknown as Record<string, unknown>;
      damaged.forks!.cachedTokens = 1e9;
      const restored = SpeculateStats.restore(damaged).toJSON();
      assert.equal(restored.suggestions.shown, 0);
      assert.equal(restored.suggestions.ignored, 0);
      assert.deepEqual(restored.suggestions.accepted, { tab: 5, enter: 2, right: 0 });
      assert.equal(restored.suggestions.filtered.meta_text, 1);
      assert.equal(Object.getPrototypeOf(restored.suggestions.filtered), Object.prototype);
      assert.deepEqual(restored.speculations, { started: 0, completed: 0, boundary: {}, aborted: 0, failed: 0 });
      assert.equal(restored.forks.cachedTokens, restored.forks.promptTokens);
      assert.equal(restored.timeSavedMs, 41_200);
    });
  });

  describe('format', () => {
    it('renders the summary a user reads', () => {
      assert.equal(
        busyStats().format(),
        [
          'Suggestions: 12 shown · 7 accepted (58%) · 3 ignored',
          '  Accepted with Tab 5 · Enter 2 · Right arrow 0',
          '  Filtered out: too_many_words 2 · meta_text 1',
          '  No obvious next step (model stayed silent): 1',
          '  Not requested: too_early 1 · user_typing 1',
          '  Failed requests: 1',
          'Speculations: 9 started · 6 completed · 2 stopped at a boundary · 1 aborted · 0 failed',
          '  Boundaries: edit 1 · shell 1',
          'Prefix cache: 86% of fork prompt tokens cached (5,160 of 6,000 over 5 calls); 5 of 5 fork requests read from the cache',
          'Time saved: 41.2 s',
          'These counts stay on this machine; nothing is sent anywhere.',
        ].join('\n'),
      );
    });

    it('counts the fork requests that hit the cache, and notes what a different fast model costs', () => {
      const stats = new SpeculateStats();
      stats.recordForkUsage({ promptTokens: 4000, cachedTokens: 3900 });
      stats.recordForkUsage({ promptTokens: 4100, cachedTokens: 0 });
      const text = stats.format({ model: 'qwen3-coder-plus', fastModel: 'qwen-flash' });
      assert.match(text, /1 of 2 fork requests read from the cache/);
      assert.match(text, /Forks run on the fast model qwen-flash, not qwen3-coder-plus: a different model cannot reuse the chat model's prefix cache/);
      assert.doesNotMatch(stats.format({ model: 'qwen3-coder-plus', fastModel: '' }), /fast model/);
      assert.doesNotMatch(stats.format({ model: 'qwen3-coder-plus', fastModel: 'qwen3-coder-plus' }), /fast model/);
    });

    it('says plainly when there is nothing yet', () => {
      assert.equal(
        new SpeculateStats().format(),
        [
          'Suggestions: 0 shown · 0 accepted · 0 ignored',
          'Speculations: 0 started · 0 completed · 0 stopped at a boundary · 0 aborted · 0 failed',
          'Prefix cache: no forked calls yet',
          'Time saved: 0.0 s',
          'These counts stay on this machine; nothing is sent anywhere.',
        ].join('\n'),
      );
    });

    it('writes durations in the unit a person would use', () => {
      assert.equal(formatDuration(41_200), '41.2 s');
      assert.equal(formatDuration(725_000), '12 min 5 s');
      assert.equal(formatDuration(7_500_000), '2 h 5 min');
    });
  });

  it('tells subscribers about every change until they unsubscribe, even if one of them throws', () => {
    const stats = new SpeculateStats();
    let calls = 0;
    stats.onChange(() => {
      throw new Error('disk full');
    });
    const unsubscribe = stats.onChange(() => calls++);
    stats.recordShown();
    stats.recordTimeSaved(5);
    unsubscribe();
    stats.recordShown();
    assert.equal(calls, 2);
    assert.equal(stats.toJSON().suggestions.shown, 2);
  });

  it('reset zeroes everything and keeps subscribers', () => {
    const stats = busyStats();
    let calls = 0;
    stats.onChange(() => calls++);
    stats.reset();
    assert.deepEqual(stats.toJSON(), new SpeculateStats().toJSON());
    assert.equal(calls, 1);
  });
});
