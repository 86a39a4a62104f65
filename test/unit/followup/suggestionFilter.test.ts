// The 12 filter rules: what each throws away, what it must let through, and the order they run in.
import * as assert from 'node:assert/strict';
import { FILTER_REASONS, FILTER_RULES, filterSuggestion, isFilterReason, type FilterReason } from '../../../src/core/followup/suggestionFilter';

/** Per rule: texts the rule must catch, and near misses that must survive every rule. */
const CASES: Record<FilterReason, { caught: string[]; kept: string[] }> = {
  done: {
    caught: ['done', 'Done', '  DONE  '],
    kept: ['done with tests, commit', 'mark it as done'],
  },
  meta_text: {
    caught: [
      'nothing to suggest', 'No suggestion.', 'no suggestions', 'silence', 'Stay silent', "I'd stay silent here",
      'silence is best here', 'nothing', 'none', 'N/A', '(none)', '[no suggestion]', 'no next step',
      'no obvious next step', "There's no obvious next step", '**none**',
    ],
    kept: ['silence the linter warnings', 'add a none option to the enum', 'nothing to commit, push it', 'no, use the old api'],
  },
  meta_wrapped: {
    caught: ['(run the tests)', '[user would type: run tests]', '(waiting for the user)', '{commit this}', '<run the tests>'],
    kept: ['(fix a) and (fix b)', 'run the tests (all of them)', 'fix [bug] in parser'],
  },
  error_message: {
    caught: [
      'API Error: 500 internal', 'Prompt is too long', 'Request timed out', 'Invalid API key', 'Image was too large',
      'Error: connection reset', 'TypeError: x is not a function', 'Rate limit exceeded', '429 Too Many Requests',
      'Internal server error', 'network error', 'context length exceeded',
    ],
    kept: ['error handling for login', 'add api error handling', 'rate limit the login endpoint', 'add error logging', 'handle request timeouts'],
  },
  prefixed_label: {
    caught: ['Suggestion: run the tests', 'fix: the typo in main', 'Next: commit it', 'User: run the tests', 'Next step: push it', 'Step 1: run the tests', 'Option B: refactor it', '建议：运行测试'],
    kept: ['/cmd: do it', 'open http://localhost:3000 now', 'fix localhost:3000 redirect', 'https://example.com is down', 'README.md: fix the typo'],
  },
  too_few_words: {
    caught: ['foo', 'refactor', 'done.', '', '/', '测'],
    kept: ['yes', 'ok', 'okay', 'sure', 'push', 'commit', 'deploy', 'continue', 'stop', 'no', 'go', 'y', 'n', 'proceed', 'retry', 'test', 'build', 'Yes!', '/compact', '/model gpt-4o', '好'],
  },
  too_many_words: {
    caught: [
      'one two three four five six seven eight nine ten eleven twelve thirteen',
      '这是一个非常长的中文句子它包含了超过三十个字符所以应该被过滤掉因为太长了',
    ],
    kept: ['one two three four five six seven eight nine ten eleven twelve', '运行测试然后提交代码'],
  },
  too_long: {
    // exactly 100 and 99 characters, both well under 12 words
    caught: [`update ${'a'.repeat(83)}.ts please`],
    kept: [`update ${'a'.repeat(82)}.ts please`],
  },
  multiple_sentences: {
    caught: ['Run the tests. Then commit', 'fix it. Push after', 'really? do it', 'yes! go ahead', 'bump to 1.2.3. Then tag it', '好的。运行测试'],
    kept: ['run the tests. then commit', "let's run tests", 'update README.md', 'bump to 1.2.3', 'run the tests.', 'is it green?', '运行测试。', 'compare React vs. Vue', 'use e.g. Jest for it'],
  },
  has_formatting: {
    caught: ['run the tests\nthen commit', 'run **all** the tests', 'run __all the__ tests', '- run the tests', '# run tests', '1. run the tests', '1. Run the tests', '```npm test```', 'see [docs](http://x.y)', '> run tests'],
    kept: ['run `npm test` now', 'lint src/**/*.ts', 'edit __init__.py', 'edit the __init__ file', 'delete all *.log files', 'fix issue #12'],
  },
  evaluative: {
    caught: ['thanks, commit it', 'looks good', 'thank you, push', 'perfect, now push', 'great, run the tests', 'awesome work there', 'LGTM merge it', 'nice, ship it', 'that works, commit it'],
    kept: ['fix the perfect-hash bug', 'rename greatest_common_divisor', 'check that works offline', 'make sure it works on windows', 'use perfect_hash module', 'cool down the cache'],
  },
  ai_voice: {
    caught: ["Let me run the tests", "I'll run the tests", 'I\u2019ll run the tests', 'I will commit this', "Here's the fix", 'You should run the tests', 'You can run it now', 'I can add tests', 'Sure, I\u2019ll do it', 'Of course, let me check', 'Now let me run the tests', 'Should I run the tests?', 'Would you like me to commit'],
    kept: ["let's run tests", 'Sure, go ahead', 'now run the tests', 'first, run the tests', 'go ahead and commit', 'add tests for it'],
  },
};

describe('suggestionFilter', () => {
  it('runs exactly the 12 rules, in the documented order', () => {
    assert.deepEqual(FILTER_REASONS, [
      'done', 'meta_text', 'meta_wrapped', 'error_message', 'prefixed_label', 'too_few_words',
      'too_many_words', 'too_long', 'multiple_sentences', 'has_formatting', 'evaluative', 'ai_voice',
    ]);
    assert.equal(FILTER_RULES.length, 12);
  });

  for (const reason of Object.keys(CASES) as FilterReason[]) {
    describe(reason, () => {
      for (const text of CASES[reason].caught) {
        it(`rejects ${JSON.stringify(text)}`, () => {
          assert.equal(filterSuggestion(text), reason);
        });
      }
      for (const text of CASES[reason].kept) {
        it(`keeps ${JSON.stringify(text)}`, () => {
          assert.equal(filterSuggestion(text), null);
        });
      }
    });
  }

  it('keeps the everyday next steps a user types', () => {
    for (const text of ['run the tests', 'commit this', 'push it', 'go ahead', 'try it out', 'add a test for the parser', 'option 2 please']) {
      assert.equal(filterSuggestion(text), null, text);
    }
  });

  describe('order: a text that breaks two rules reports the earlier one', () => {
    const overlaps: [string, FilterReason, FilterReason][] = [
      ['(none)', 'meta_text', 'meta_wrapped'],
      ['(thanks, commit it)', 'meta_wrapped', 'evaluative'],
      ['Error: timeout', 'error_message', 'prefixed_label'],
      ['Next:', 'prefixed_label', 'too_few_words'],
      ['Thanks! Let me run the tests now', 'multiple_sentences', 'evaluative'],
      ['I will commit. Then push', 'multiple_sentences', 'ai_voice'],
      ['Let me commit it, thanks', 'evaluative', 'ai_voice'],
      ['**thanks**, commit it', 'has_formatting', 'evaluative'],
      ['great great great great great great great great great great great great great', 'too_many_words', 'evaluative'],
    ];
    for (const [text, first, later] of overlaps) {
      it(`${JSON.stringify(text)} → ${first}, not ${later}`, () => {
        const laterRule = FILTER_RULES.find((rule) => rule.reason === later);
        assert.ok(laterRule?.test(text.trim()), `the text also breaks ${later}`);
        assert.equal(filterSuggestion(text), first);
      });
    }
  });

  it('isFilterReason recognises the reason codes and nothing else', () => {
    assert.ok(isFilterReason('ai_voice'));
    assert.ok(!isFilterReason('silent'));
    assert.ok(!isFilterReason(null));
  });
});
