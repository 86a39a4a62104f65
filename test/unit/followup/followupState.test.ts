// The visible suggestion's life cycle, driven by a hand-moved clock.
import * as assert from 'node:assert/strict';
import {
  ACCEPT_DEBOUNCE_MS,
  FollowupController,
  SUGGESTION_DELAY_MS,
  type FollowupCallbacks,
  type FollowupClock,
  type SuggestionOutcomeEvent,
} from '../../../src/core/followup/followupState';

/** A clock that only moves when the test says so, firing due timers in order. */
class FakeClock implements FollowupClock {
  private time = 0;
  private nextId = 1;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();

  now(): number {
    return this.time;
  }

  setTimeout(fn: () => void, ms: number): number {
    const id = this.nextId++;
    this.timers.set(id, { at: this.time + ms, fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  get pendingTimers(): number {
    return this.timers.size;
  }

  advance(ms: number): void {
    const until = this.time + ms;
    for (;;) {
      const due = [...this.timers.entries()].filter(([, t]) => t.at <= until).sort((a, b) => a[1].at - b[1].at || a[0] - b[0])[0];
      if (due === undefined) break;
      this.timers.delete(due[0]);
      this.time = due[1].at;
      due[1].fn();
    }
    this.time = until;
  }
}

interface Harness {
  clock: FakeClock;
  controller: FollowupController;
  log: string[];
  outcomes: SuggestionOutcomeEvent[];
}

function setup(extra: Partial<FollowupCallbacks> = {}): Harness {
  const clock = new FakeClock();
  const log: string[] = [];
  const outcomes: SuggestionOutcomeEvent[] = [];
  const controller = new FollowupController(clock, {
    onVisible: (text) => log.push(`visible:${text}`),
    onHidden: () => log.push('hidden'),
    onOutcome: (event) => outcomes.push(event),
    ...extra,
  });
  return { clock, controller, log, outcomes };
}

describe('followupState', () => {
  it('shows a suggestion only after the delay', () => {
    const { clock, controller, log } = setup();
    controller.set('run the tests');
    clock.advance(SUGGESTION_DELAY_MS - 1);
    assert.deepEqual(log, []);
    assert.equal(controller.visibleText, null);
    assert.equal(controller.pendingText, 'run the tests');
    clock.advance(1);
    assert.deepEqual(log, ['visible:run the tests']);
    assert.equal(controller.visibleText, 'run the tests');
  });

  it('a newer suggestion within the delay replaces the waiting one', () => {
    const { clock, controller, log } = setup();
    controller.set('run the tests');
    clock.advance(200);
    controller.set('commit this');
    clock.advance(SUGGESTION_DELAY_MS);
    assert.deepEqual(log, ['visible:commit this']);
  });

  it('a new suggestion replaces a visible one, which counts as cleared', () => {
    const { clock, controller, log, outcomes } = setup();
    controller.set('run the tests');
    clock.advance(SUGGESTION_DELAY_MS + 500);
    controller.set('commit this');
    assert.equal(controller.visibleText, null);
    clock.advance(SUGGESTION_DELAY_MS);
    assert.deepEqual(log, ['visible:run the tests', 'hidden', 'visible:commit this']);
    assert.deepEqual(outcomes, [{ outcome: 'cleared', text: 'run the tests', visibleMs: 500 }]);
  });

  it('offering the words already on screen changes nothing', () => {
    const { clock, controller, log, outcomes } = setup();
    controller.set('run the tests', { immediate: true });
    controller.set('run the tests');
    clock.advance(SUGGESTION_DELAY_MS);
    assert.deepEqual(log, ['visible:run the tests']);
    assert.deepEqual(outcomes, []);
  });

  it('immediate shows at once (the pipelined suggestion after an accept)', () => {
    const { controller, log } = setup();
    controller.set('push it', { immediate: true });
    assert.deepEqual(log, ['visible:push it']);
  });

  it('clear hides at once and cancels a waiting suggestion', () => {
    const { clock, controller, log, outcomes } = setup();
    controller.set('run the tests', { immediate: true });
    clock.advance(40);
    controller.set('commit this');
    controller.clear();
    clock.advance(SUGGESTION_DELAY_MS * 2);
    assert.deepEqual(log, ['visible:run the tests', 'hidden']);
    assert.deepEqual(outcomes, [{ outcome: 'cleared', text: 'run the tests', visibleMs: 40 }]);
    assert.equal(clock.pendingTimers, 0);
  });

  it('an empty suggestion just clears', () => {
    const { clock, controller, log } = setup();
    controller.set('run the tests', { immediate: true });
    controller.set('   ');
    clock.advance(SUGGESTION_DELAY_MS);
    assert.deepEqual(log, ['visible:run the tests', 'hidden']);
  });

  describe('accept', () => {
    it('takes the visible suggestion and reports method and time on screen', () => {
      const { clock, controller, log, outcomes } = setup();
      controller.set('run the tests');
      clock.advance(SUGGESTION_DELAY_MS + 1234);
      assert.equal(controller.accept('tab'), 'run the tests');
      assert.equal(controller.visibleText, null);
      assert.deepEqual(log, ['visible:run the tests', 'hidden']);
      assert.deepEqual(outcomes, [{ outcome: 'accepted', method: 'tab', text: 'run the tests', visibleMs: 1234 }]);
    });

    it('nothing to take before the suggestion is visible', () => {
      const { clock, controller, outcomes } = setup();
      controller.set('run the tests');
      clock.advance(SUGGESTION_DELAY_MS - 1);
      assert.equal(controller.accept('enter'), null);
      assert.deepEqual(outcomes, []);
    });

    it('a double press within the debounce window does not also take the next suggestion', () => {
      const { clock, controller, outcomes } = setup({
        onOutcome: (event) => {
          outcomes.push(event);
          if (event.outcome === 'accepted') controller.set('push it', { immediate: true });
        },
      });
      controller.set('commit this', { immediate: true });
      assert.equal(controller.accept('tab'), 'commit this');
      clock.advance(ACCEPT_DEBOUNCE_MS - 1);
      assert.equal(controller.accept('tab'), null);
      assert.equal(controller.visibleText, 'push it');
      clock.advance(1);
      assert.equal(controller.accept('right'), 'push it');
      assert.deepEqual(outcomes.map((o) => [o.outcome, o.method, o.text]), [
        ['accepted', 'tab', 'commit this'],
        ['accepted', 'right', 'push it'],
      ]);
    });

    it('an accept from inside an accept callback is ignored', () => {
      const nested: (string | null)[] = [];
      const { controller } = setup({
        onHidden: () => {
          controller.set('push it', { immediate: true });
          nested.push(controller.accept('enter'));
        },
      });
      controller.set('commit this', { immediate: true });
      assert.equal(controller.accept('tab'), 'commit this');
      assert.deepEqual(nested, [null]);
    });
  });

  it('dismiss reports the suggestion as ignored', () => {
    const { clock, controller, outcomes } = setup();
    controller.set('run the tests', { immediate: true });
    clock.advance(700);
    assert.equal(controller.dismiss(), true);
    assert.deepEqual(outcomes, [{ outcome: 'ignored', text: 'run the tests', visibleMs: 700 }]);
    assert.equal(controller.dismiss(), false);
  });

  it('dismiss also drops a suggestion that was about to appear', () => {
    const { clock, controller, log } = setup();
    controller.set('run the tests');
    controller.dismiss();
    clock.advance(SUGGESTION_DELAY_MS);
    assert.deepEqual(log, []);
  });

  it('after cleanup no timer fires and no callback is called', () => {
    const { clock, controller, log, outcomes } = setup();
    controller.set('run the tests');
    controller.cleanup();
    assert.equal(clock.pendingTimers, 0);
    controller.set('push it', { immediate: true });
    assert.equal(controller.accept('tab'), null);
    controller.dismiss();
    controller.clear();
    clock.advance(SUGGESTION_DELAY_MS * 3);
    assert.deepEqual(log, []);
    assert.deepEqual(outcomes, []);
  });

  it('cleanup with a suggestion on screen reports no outcome for it', () => {
    const { controller, log, outcomes } = setup();
    controller.set('run the tests', { immediate: true });
    controller.cleanup();
    assert.equal(controller.visibleText, null);
    assert.deepEqual(log, ['visible:run the tests']);
    assert.deepEqual(outcomes, []);
  });

  describe('a callback that throws', () => {
    it('leaves no lock stuck: the next accept after the window works', () => {
      const errors: unknown[] = [];
      const { clock, controller } = setup({
        onOutcome: () => {
          throw new Error('renderer crashed');
        },
        onCallbackError: (error) => errors.push(error),
      });
      controller.set('commit this', { immediate: true });
      assert.equal(controller.accept('tab'), 'commit this');
      controller.set('push it', { immediate: true });
      clock.advance(ACCEPT_DEBOUNCE_MS);
      assert.equal(controller.accept('tab'), 'push it');
      assert.equal(errors.length, 2);
      assert.match(String(errors[0]), /renderer crashed/);
    });

    it('does not escape from the delay timer, and the suggestion still counts as visible', () => {
      const { clock, controller } = setup({
        onVisible: () => {
          throw new Error('webview gone');
        },
      });
      controller.set('run the tests');
      assert.doesNotThrow(() => clock.advance(SUGGESTION_DELAY_MS));
      assert.equal(controller.visibleText, 'run the tests');
      assert.equal(controller.accept('enter'), 'run the tests');
    });
  });
});
