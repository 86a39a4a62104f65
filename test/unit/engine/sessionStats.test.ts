// The statistics a user reads after real sessions: each Tab counts once (it used to count twice,
// "8 accepted (133%)" after 4), and every speculation thrown away is an abort, running or finished.
import * as assert from 'node:assert/strict';
import { ACCEPT_DEBOUNCE_MS } from '../../../src/core/followup/followupState';
import { SpeculateStats } from '../../../src/core/stats/speculateStats';
import { waitUntil } from './engineKit';
import { makeSession, runEnd, warmUpAndShow, type SessionWorld } from './sessionKit';

const FIRST = 'add a farewell function to greet.ts';
const STEPS = ['write a test for farewell', 'run the linter', 'update the readme'];

describe('Engine: statistics counted from a session', function () {
  this.timeout(20_000);
  let s: SessionWorld | undefined;
  let stats: SpeculateStats;

  afterEach(async () => {
    if (!s) return;
    await s.session.dispose();
    await s.world.dispose();
    s = undefined;
  });

  it('four Tabs are four accepted suggestions (100%) of four completed runs, no abort', async () => {
    stats = new SpeculateStats();
    const chain = [FIRST, ...STEPS];
    const turns = Object.fromEntries(chain.map((task) => [task, [{ text: `Done: ${task}.` }]]));
    const suggestions: Record<string, string> = { 'show me src/greet.ts': FIRST };
    chain.forEach((task, i) => (suggestions[task] = chain[i + 1] ?? ''));
    s = await makeSession(turns, suggestions, { session: { stats } });
    await warmUpAndShow(s, FIRST);
    for (const [i, task] of chain.entries()) {
      assert.equal((await runEnd(s, task)).status, 'completed');
      const current = s;
      await waitUntil(() => current.session.visibleSuggestion === task, `"${task}" on screen`);
      s.clock.advance(ACCEPT_DEBOUNCE_MS);
      await s.session.acceptSuggestion('tab');
      assert.equal(stats.toJSON().suggestions.accepted.tab, i + 1, `after Tab number ${i + 1}`);
    }
    const snapshot = stats.toJSON();
    assert.equal(snapshot.suggestions.shown, 4);
    assert.deepEqual(snapshot.suggestions.accepted, { tab: 4, enter: 0, right: 0 });
    assert.equal(snapshot.speculations.started, 4);
    assert.equal(snapshot.speculations.completed, 4);
    assert.equal(snapshot.speculations.aborted, 0);
    assert.match(stats.format(), /^Suggestions: 4 shown · 4 accepted \(100%\) · 0 ignored$/m);
  });

  it('an abort while running and one after the run finished are both counted', async () => {
    stats = new SpeculateStats();
    const SLOW = 'add a farewell function slowly';
    s = await makeSession(
      { [FIRST]: [{ text: 'Added it.' }], [SLOW]: [{ text: 'slow', latencyMs: 30_000 }], 'show me src/greet.ts again': [{ text: 'Here it is again.' }] },
      { 'show me src/greet.ts': FIRST, [FIRST]: '', 'show me src/greet.ts again': SLOW },
      { session: { stats } },
    );
    await warmUpAndShow(s, FIRST);
    assert.equal((await runEnd(s, FIRST)).status, 'completed');
    // Finished and waiting for Tab: the user types instead.
    s.session.setUserTyping(true);
    await waitUntil(() => stats.toJSON().speculations.aborted === 1, 'the finished run to be counted as aborted');
    s.session.setUserTyping(false);

    const current = s;
    assert.equal((await s.session.submit('show me src/greet.ts again'))?.status, 'done');
    await waitUntil(() => current.clock.pendingTimers > 0, 'the second suggestion');
    s.clock.advance(300);
    assert.equal(s.session.visibleSuggestion, SLOW);
    assert.equal(s.session.currentSpeculation?.status, 'running');
    // Still running: Escape.
    s.session.dismissSuggestion();
    await waitUntil(() => stats.toJSON().speculations.aborted === 2, 'the running run to be counted as aborted');
    assert.match(stats.format(), /· 2 aborted ·/);
  });
});
