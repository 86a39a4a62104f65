// The next-input prediction: when it is asked for, what is sent, how replies are read and judged.
import * as assert from 'node:assert/strict';
import type { ChatMessage } from '../../../src/core/messages';
import type { Usage } from '../../../src/core/llm/llmClient';
import {
  SUGGESTION_PROMPT,
  countAnsweredTurns,
  forkRunnerFromQuery,
  generateSuggestion,
  parseSuggestionReply,
  type ForkRunner,
  type SuggestionConditions,
} from '../../../src/core/followup/suggestionGenerator';

const USAGE: Usage = { promptTokens: 1200, completionTokens: 4, cachedTokens: 1100 };

const READY: SuggestionConditions = { enabled: true, approvalPending: false, lastTurn: 'completed', planMode: false, userTyping: false };

/** Two answered user turns, the second with a tool round trip in the middle. */
const TWO_ANSWERS: ChatMessage[] = [
  { role: 'user', content: 'add a --verbose flag' },
  { role: 'assistant', content: 'Added the flag.' },
  { role: 'user', content: 'fix the failing test' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.ts"}' } }] },
  { role: 'tool', tool_call_id: 'c1', content: 'export const a = 1;' },
  { role: 'assistant', content: 'Fixed. Type "run tests" to check.' },
];

interface ForkCall {
  extraMessages: ChatMessage[];
  signal: AbortSignal;
}

function scriptedFork(text: string, toolCallsIgnored = 0): { fork: ForkRunner; calls: ForkCall[] } {
  const calls: ForkCall[] = [];
  const fork: ForkRunner = async (extraMessages, signal) => {
    calls.push({ extraMessages, signal });
    return { text, toolCallsIgnored, usage: USAGE };
  };
  return { fork, calls };
}

function generate(fork: ForkRunner, overrides: Partial<SuggestionConditions> = {}, history = TWO_ANSWERS, signal = new AbortController().signal) {
  return generateSuggestion({ history, fork, signal, conditions: { ...READY, ...overrides } });
}

describe('suggestionGenerator', () => {
  describe('SUGGESTION_PROMPT', () => {
    it('asks for the user\'s next words, short, with silence allowed and explicit hints first', () => {
      assert.match(SUGGESTION_PROMPT, /USER will type/);
      assert.match(SUGGESTION_PROMPT, /2 to 12 words/);
      assert.match(SUGGESTION_PROMPT, /type X to/);
      assert.match(SUGGESTION_PROMPT, /empty message/);
      assert.match(SUGGESTION_PROMPT, /never your own voice/);
    });
  });

  describe('the request', () => {
    it('sends the prompt as one extra user message after the history, and returns the suggestion', async () => {
      const { fork, calls } = scriptedFork('run tests');
      const result = await generate(fork);
      assert.deepEqual(result, { kind: 'suggestion', suggestion: 'run tests', usage: USAGE, toolCallsIgnored: 0 });
      assert.equal(calls.length, 1);
      assert.deepEqual(calls[0]?.extraMessages, [{ role: 'user', content: SUGGESTION_PROMPT }]);
    });

    it('passes the caller\'s abort signal to the fork', async () => {
      const { fork, calls } = scriptedFork('run tests');
      const controller = new AbortController();
      await generate(fork, {}, TWO_ANSWERS, controller.signal);
      assert.equal(calls[0]?.signal, controller.signal);
    });

    it('uses the text even when the model also tried to call tools, and reports how many were ignored', async () => {
      const { fork } = scriptedFork('run the tests', 2);
      const result = await generate(fork);
      assert.equal(result.kind, 'suggestion');
      assert.equal(result.kind === 'suggestion' && result.toolCallsIgnored, 2);
    });

    it('a reply of only tool calls is silence', async () => {
      const { fork } = scriptedFork('', 1);
      assert.deepEqual(await generate(fork), { kind: 'silent', usage: USAGE, toolCallsIgnored: 1 });
    });
  });

  it('forkRunnerFromQuery reads the assistant message and counts its tool calls without running them', async () => {
    const seen: ChatMessage[][] = [];
    const fork = forkRunnerFromQuery(async (extraMessages) => {
      seen.push(extraMessages);
      return {
        message: { role: 'assistant', content: 'commit this', tool_calls: [{ id: 't', type: 'function', function: { name: 'shell', arguments: '{"command":"git commit"}' } }] },
        usage: USAGE,
      };
    });
    assert.deepEqual(await generate(fork), { kind: 'suggestion', suggestion: 'commit this', usage: USAGE, toolCallsIgnored: 1 });
    assert.deepEqual(seen, [[{ role: 'user', content: SUGGESTION_PROMPT }]]);
  });

  describe('suppression: no call at all', () => {
    const cases: [string, Partial<SuggestionConditions>, string][] = [
      ['suggestions are switched off', { enabled: false }, 'disabled'],
      ['a tool call waits for approval', { approvalPending: true }, 'approval_pending'],
      ['the last turn failed', { lastTurn: 'failed' }, 'last_turn_failed'],
      ['the last turn was cancelled', { lastTurn: 'cancelled' }, 'last_turn_failed'],
      ['plan mode is on', { planMode: true }, 'plan_mode'],
      ['the user is typing', { userTyping: true }, 'user_typing'],
    ];
    for (const [when, overrides, reason] of cases) {
      it(`when ${when} → ${reason}`, async () => {
        const { fork, calls } = scriptedFork('run tests');
        assert.deepEqual(await generate(fork, overrides), { kind: 'suppressed', suppressed: reason });
        assert.equal(calls.length, 0);
      });
    }

    it('reports the first reason when several hold', async () => {
      const { fork } = scriptedFork('run tests');
      assert.deepEqual(await generate(fork, { enabled: false, planMode: true, userTyping: true }), { kind: 'suppressed', suppressed: 'disabled' });
      assert.deepEqual(await generate(fork, { planMode: true, userTyping: true }, []), { kind: 'suppressed', suppressed: 'plan_mode' });
    });
  });

  describe('the model must have answered once', () => {
    it('stays quiet before the first answer, and while the first turn is still in its tool calls', async () => {
      const { fork, calls } = scriptedFork('run tests');
      assert.deepEqual(await generate(fork, {}, TWO_ANSWERS.slice(0, 1)), { kind: 'suppressed', suppressed: 'too_early' });
      const firstTurnMidTool: ChatMessage[] = [TWO_ANSWERS[0], TWO_ANSWERS[3], TWO_ANSWERS[4]];
      assert.deepEqual(await generate(fork, {}, firstTurnMidTool), { kind: 'suppressed', suppressed: 'too_early' });
      assert.equal(calls.length, 0);
    });

    it('predicts after the first answer', async () => {
      const { fork, calls } = scriptedFork('run tests');
      const result = await generate(fork, {}, TWO_ANSWERS.slice(0, 2));
      assert.equal(result.kind, 'suggestion');
      assert.equal(calls.length, 1);
    });

    it('counts turns, not assistant messages: tool-call steps and a turn cut off mid-tool-call are no answers', () => {
      assert.equal(countAnsweredTurns(TWO_ANSWERS), 2);
      assert.equal(countAnsweredTurns(TWO_ANSWERS.slice(0, 5)), 1);
      assert.equal(countAnsweredTurns([]), 0);
      const unanswered: ChatMessage[] = [...TWO_ANSWERS.slice(0, 2), { role: 'user', content: 'hi' }, { role: 'user', content: 'again' }];
      assert.equal(countAnsweredTurns(unanswered), 1);
    });
  });

  describe('reading the reply', () => {
    const replies: [string, string][] = [
      ['run the tests', 'run the tests'],
      ['  run the tests \n', 'run the tests'],
      ['"run the tests"', 'run the tests'],
      ['\u201crun the tests\u201d', 'run the tests'],
      ["'\"run the tests\"'", 'run the tests'],
      ['{"suggestion": "run the tests"}', 'run the tests'],
      ['{"suggestion": " \\"commit this\\" "}', 'commit this'],
      ['```json\n{"suggestion": "push it"}\n```', 'push it'],
      ['<think>they want tests</think>\nrun the tests', 'run the tests'],
      ['{"suggestion": ""}', ''],
      ['{"suggestion": null}', ''],
      ['{"suggestion": "run the \\"unit\\" tests"', 'run the "unit" tests'],
      ['{"suggestion": "run', '{"suggestion": "run'],
      ['""', ''],
      ['', ''],
    ];
    for (const [reply, expected] of replies) {
      it(`${JSON.stringify(reply)} → ${JSON.stringify(expected)}`, () => {
        assert.equal(parseSuggestionReply(reply), expected);
      });
    }

    it('JSON and plain replies give the same suggestion', async () => {
      const plain = await generate(scriptedFork('commit this').fork);
      const json = await generate(scriptedFork('{"suggestion":"commit this"}').fork);
      assert.deepEqual(json, plain);
    });

    it('an empty answer is silence, not a suggestion', async () => {
      assert.deepEqual(await generate(scriptedFork('   ').fork), { kind: 'silent', usage: USAGE, toolCallsIgnored: 0 });
    });

    it('a reply that breaks a rule is filtered, with the reason and the text', async () => {
      assert.deepEqual(await generate(scriptedFork('"Let me run the tests"').fork), {
        kind: 'filtered', filtered: 'ai_voice', text: 'Let me run the tests', usage: USAGE, toolCallsIgnored: 0,
      });
      const braces = await generate(scriptedFork('{run the tests}').fork);
      assert.equal(braces.kind === 'filtered' && braces.filtered, 'meta_wrapped');
    });
  });

  describe('failing quietly', () => {
    it('a fork that throws gives no suggestion and says why', async () => {
      const fork: ForkRunner = async () => {
        throw new Error('429 from the endpoint');
      };
      assert.deepEqual(await generate(fork), { kind: 'failed', failed: 'error', message: '429 from the endpoint' });
    });

    it('an already aborted signal sends nothing', async () => {
      const { fork, calls } = scriptedFork('run tests');
      const controller = new AbortController();
      controller.abort();
      const result = await generate(fork, {}, TWO_ANSWERS, controller.signal);
      assert.equal(result.kind === 'failed' && result.failed, 'aborted');
      assert.equal(calls.length, 0);
    });

    it('aborting while the fork runs reports aborted, not an error', async () => {
      const controller = new AbortController();
      const fork: ForkRunner = (_messages, signal) =>
        new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('The operation was aborted'))));
      const pending = generate(fork, {}, TWO_ANSWERS, controller.signal);
      controller.abort();
      const result = await pending;
      assert.equal(result.kind === 'failed' && result.failed, 'aborted');
    });

    it('a reply that arrives after the abort is dropped', async () => {
      const controller = new AbortController();
      const fork: ForkRunner = async () => {
        controller.abort(); // the user typed while the reply was on its way
        return { text: 'run the tests', toolCallsIgnored: 0, usage: USAGE };
      };
      const result = await generate(fork, {}, TWO_ANSWERS, controller.signal);
      assert.equal(result.kind === 'failed' && result.failed, 'aborted');
    });
  });
});
