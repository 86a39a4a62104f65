// The 12 rules that throw away a predicted next input that a user would never have typed.
// Pure functions of the text; shared by the generator, the pipelined suggestion and the CLI.

export type FilterReason =
  | 'done'
  | 'meta_text'
  | 'meta_wrapped'
  | 'error_message'
  | 'prefixed_label'
  | 'too_few_words'
  | 'too_many_words'
  | 'too_long'
  | 'multiple_sentences'
  | 'has_formatting'
  | 'evaluative'
  | 'ai_voice';

export interface FilterRule {
  readonly reason: FilterReason;
  /** True when the (trimmed) suggestion breaks this rule. */
  readonly test: (text: string) => boolean;
}

export const MAX_SUGGESTION_WORDS = 12;
/** CJK text has no spaces to count words by, so it is measured in characters instead. */
export const MAX_SUGGESTION_CJK_CHARS = 30;
export const MAX_SUGGESTION_CHARS = 100;

/** Replies short enough to stand alone; anything else of one word is too vague to run. */
export const SINGLE_WORD_REPLIES: ReadonlySet<string> = new Set([
  'yes', 'yeah', 'yep', 'yup', 'y', 'no', 'nope', 'n', 'ok', 'okay', 'sure', 'go', 'proceed',
  'continue', 'retry', 'stop', 'cancel', 'abort', 'undo', 'revert', 'push', 'commit', 'deploy',
  'merge', 'ship', 'release', 'publish', 'test', 'tests', 'build', 'run', 'lint', 'format',
  'check', 'next', 'again', 'skip', 'both', 'all', 'exit', 'quit', 'approve',
  // CJK replies are often one short word
  '好', '好的', '是', '行', '继续', '可以', 'はい',
]);

const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]/u;

// ---------------------------------------------------------------------------------------------
// Helpers

/** Typographic apostrophes and quotes, folded so that "I’ll" is caught like "I'll". */
function foldQuotes(text: string): string {
  return text.replace(/[\u2018\u2019\u02bc]/g, "'").replace(/[\u201c\u201d]/g, '"');
}

function isCjk(text: string): boolean {
  return CJK.test(text);
}

function words(text: string): string[] {
  const trimmed = text.trim();
  return trimmed === '' ? [] : trimmed.split(/\s+/);
}

function nonSpaceChars(text: string): number {
  return [...text.replace(/\s+/g, '')].length;
}

const PAIRS: Record<string, string> = { '(': ')', '[': ']', '{': '}', '<': '>' };

/** True when the first character opens a bracket that is closed by the very last character. */
function whollyBracketed(text: string): boolean {
  const close = PAIRS[text[0] ?? ''];
  if (close === undefined || !text.endsWith(close) || text.length < 2) return false;
  const open = text[0];
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === open) depth++;
    else if (text[i] === close) depth--;
    // "(a) and (b)" closes before the end: two groups, not one wrapper
    if (depth === 0 && i < text.length - 1) return false;
  }
  return depth === 0;
}

/** The text without surrounding brackets, quotes and end punctuation: "[No suggestion.]" → "no suggestion". */
function bareLower(text: string): string {
  let bare = foldQuotes(text).trim().toLowerCase();
  for (let previous = ''; previous !== bare; ) {
    previous = bare;
    if (whollyBracketed(bare)) bare = bare.slice(1, -1).trim();
    bare = bare.replace(/^["'*_`]+|["'*_`]+$/g, '').replace(/[.!…]+$/u, '').trim();
  }
  return bare;
}

/**
 * A phrase standing as words of prose: not glued to identifiers, paths or hyphenated words, so
 * "perfect" is evaluative but "perfect-hash", "perfect_hash" and "great.ts" are names.
 */
function proseWords(phrases: readonly string[]): RegExp {
  const alternatives = phrases.map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/ /g, '\\s+'));
  return new RegExp(`(?<![\\w\\-/.'])(?:${alternatives.join('|')})(?![\\w\\-/]|\\.\\w|'\\w)`, 'i');
}

// ---------------------------------------------------------------------------------------------
// The rules

/** Whole replies that mean "I have nothing to suggest". */
const META_WHOLE = new Set([
  'nothing', 'none', 'n/a', 'na', 'null', 'empty', 'blank', 'silence', 'silent',
  'no suggestion', 'no suggestions', 'nothing to suggest', 'no next step', 'no next steps',
  'no response', 'no reply', 'no output', 'no input', 'nothing found', 'empty response',
  'empty string',
]);

/** Openings of a reply that talks about suggesting instead of suggesting. */
const META_OPENINGS =
  /^(?:nothing (?:to (?:suggest|predict|add)|obvious)|no (?:suggestion|prediction|obvious (?:next )?(?:step|suggestion|follow-?up|action|reply)|clear next step|next step|follow-?up (?:needed|suggestion)|further (?:action|input|steps?))|there(?: i|')s no (?:suggestion|obvious|clear|next step)|i (?:have|would have) no suggestion|(?:i )?(?:can(?:no|')t|cannot) (?:predict|suggest|tell what))/;

/** Silence spoken about, wherever it stands: "stay silent", "silence is best here". */
const META_SILENCE = /\b(?:stay(?:s|ing)?|remain(?:s|ing)?|keep(?:ing)?|be) (?:silent|quiet)\b|\bsilence is\b|\b(?:choose|choosing|opt(?:ing)? for) silence\b/;

function isMetaText(text: string): boolean {
  const bare = bareLower(text);
  // "(none)" and "[no suggestion]" are meta text in a wrapper; the meta text is the more telling reason
  return META_WHOLE.has(bare) || META_OPENINGS.test(bare) || META_SILENCE.test(bare);
}

/** Errors an API or client prints; pinned to the start so "error handling for login" is a request. */
const ERROR_OPENINGS = new RegExp(
  '^(?:' +
    [
      'api error(?:$|:|\\s+\\d)',
      '[a-z]*error:', // "Error:", "TypeError:", "APIError:"
      'error \\d{3}\\b',
      '\\d{3} (?:error|bad request|unauthorized|forbidden|not found|too many requests|internal server error|bad gateway|service unavailable|gateway timeout)\\b',
      'prompt is too long',
      'request (?:timed out|failed|was aborted|aborted)',
      'the (?:request|operation) (?:timed out|failed|was aborted)',
      'invalid api key',
      'invalid_request_error',
      'incorrect api key',
      'image was too large',
      'rate limit(?:ed)?(?:$|:| error| exceeded| reached| hit)',
      'too many requests',
      'internal server error',
      'service unavailable',
      'connection (?:error|refused|reset|timed out)',
      'network error',
      'unauthorized(?:$|:|\\s*\\(?401)',
      '(?:insufficient )?quota exceeded',
      'context (?:length|window) exceeded',
      "(?:this model's )?maximum context length",
      'econn(?:refused|reset)',
      'etimedout',
      'failed to fetch\\b',
    ].join('|') +
    ')',
  'i',
);

/** Labels that are two words long; any single `word:` label is caught generically. */
const TWO_WORD_LABELS =
  /^(?:next (?:step|prompt|input|message)|suggested (?:prompt|reply|input|next step)|user (?:input|message|reply|prompt)|predicted (?:input|prompt)|my (?:suggestion|prediction)):(?:\s|$)/i;

function isPrefixedLabel(text: string): boolean {
  // A letter first keeps "/cmd: x" out; whitespace after the colon keeps "http://…" and "localhost:3000" out
  if (/^\p{L}[\p{L}\p{N}_-]*:(?:\s|$)/u.test(text) || TWO_WORD_LABELS.test(text)) return true;
  // numbered or lettered labels: "Step 1: …", "Option B: …"
  if (/^\p{L}+ (?:\d+|[A-Z]):(?:\s|$)/u.test(text)) return true;
  // CJK labels use a full-width colon and no space: "建议：运行测试"
  return /^\p{L}{1,4}：/u.test(text);
}

function isTooFewWords(text: string): boolean {
  if (isCjk(text)) {
    if (nonSpaceChars(text) >= 2) return false;
  } else if (words(text).length >= 2) {
    return false;
  }
  if (/^\/[\p{L}]/u.test(text)) return false; // a slash command such as /compact
  return !SINGLE_WORD_REPLIES.has(text.toLowerCase().replace(/[.!。！]+$/u, ''));
}

function isTooManyWords(text: string): boolean {
  if (words(text).length > MAX_SUGGESTION_WORDS) return true;
  return isCjk(text) && nonSpaceChars(text) > MAX_SUGGESTION_CJK_CHARS;
}

/**
 * Two sentences: a full stop followed by a capitalised word ("fix it. Then push"), or "!"/"?"
 * followed by anything ("really? do it"). A full stop before a lowercase word passes: users write
 * "run the tests. then commit" as one instruction. Dots inside tokens (README.md, 1.2.3) never
 * have whitespace after them, so names and versions pass.
 */
function isMultipleSentences(text: string): boolean {
  const body = text.replace(/^\d+[.)]\s+/, ''); // a list marker is formatting, judged later
  for (const match of body.matchAll(/(\S*?)[.…]+\s+["'(]?\p{Lu}/gu)) {
    if (!ABBREVIATIONS.has((match[1] ?? '').toLowerCase())) return true;
  }
  return /[!?]+\s+\S/u.test(body) || /[。！？]\s*[^\s。！？」』）)]/u.test(body);
}

/** Words whose full stop does not end a sentence: "compare React vs. Vue". */
const ABBREVIATIONS: ReadonlySet<string> = new Set(['vs', 'e.g', 'i.e', 'etc', 'cf', 'approx', 'dr', 'mr', 'mrs', 'ms', 'st', 'no', 'u.s']);

function hasFormatting(text: string): boolean {
  if (/[\r\n]/.test(text)) return true;
  if (text.includes('```')) return true;
  if (/^(?:#{1,6}\s|[-*+•]\s|\d+[.)]\s|>\s|\|)/.test(text)) return true; // heading, bullet, list, quote, table
  if (/\[[^\]]+\]\([^)\s]+\)/.test(text)) return true; // markdown link
  // **bold** but not globs like src/**/*.ts: the markers must hug words and stand at word edges
  if (/(?:^|[\s(])\*\*(?![\s/])[^*]*?[^\s/*]\*\*(?=$|[\s.,!?;:)])/.test(text)) return true;
  // __bold__ needs a space inside, so Python's __init__ and __main__ are names, not emphasis
  if (/(?:^|[\s(])__(?=\S)[^_]*\s[^_]*(?<=\S)__(?=$|[\s.,!?;:)])/.test(text)) return true;
  if (/(?:^|\s)~~\S[^~]*~~/.test(text)) return true;
  // Single backticks stay: users write `npm test` in chat input themselves.
  return false;
}

const EVALUATIVE = proseWords([
  'thanks', 'thank you', 'thank u', 'thx', 'ty', 'looks good', 'looks great', 'looks fine',
  'sounds good', 'sounds great', 'lgtm', 'perfect', 'great', 'awesome', 'nice', 'excellent',
  'amazing', 'wonderful', 'fantastic', 'brilliant', 'well done', 'good job', 'good work',
  'great job', 'great work', 'nice work', 'nice job', 'makes sense', 'love it',
]);

/** Verdicts that are evaluative only as an opening: "that works, commit" but not "check that works offline". */
const EVALUATIVE_OPENINGS = /^(?:that works|that worked|it works|that's all|all good|good,|cool,)(?![\w-])/i;

/** How an assistant opens a reply; "let's run tests" is a user's phrase and stays. */
const AI_OPENINGS =
  /^(?:let me\b|i'll\b|i will\b|i've\b|i have (?:made|updated|added|fixed|created|completed|finished)\b|i'm\b|i am\b|i can\b|i could\b|i'd (?:suggest|recommend|be)\b|i would (?:suggest|recommend|be)\b|i notice\b|here's\b|here is\b|here are\b|you should\b|you can\b|you could\b|you might\b|you may\b|you'll\b|you will\b|this will\b|happy to\b|glad to\b|as an ai\b|here you go\b|should i\b|shall i\b|do you want\b|would you like\b|want me to\b)/;

function isAiVoice(text: string): boolean {
  const lower = foldQuotes(text).trim().toLowerCase();
  if (AI_OPENINGS.test(lower)) return true;
  // "Sure, go ahead" is a user's reply; "Sure, I'll run them" and "Now let me…" are the assistant
  const afterInterjection =
    /^(?:sure|okay|ok|alright|got it|understood|yes|certainly|of course|absolutely|great|now|next|first|then)(?:[,!.]\s*|\s+)(.*)$/.exec(lower);
  return afterInterjection !== null && AI_OPENINGS.test(afterInterjection[1] ?? '');
}

/** Checked in this order; a text that breaks several rules reports the first. */
export const FILTER_RULES: readonly FilterRule[] = [
  { reason: 'done', test: (t) => t.toLowerCase() === 'done' },
  { reason: 'meta_text', test: isMetaText },
  { reason: 'meta_wrapped', test: whollyBracketed },
  { reason: 'error_message', test: (t) => ERROR_OPENINGS.test(t) },
  { reason: 'prefixed_label', test: isPrefixedLabel },
  { reason: 'too_few_words', test: isTooFewWords },
  { reason: 'too_many_words', test: isTooManyWords },
  { reason: 'too_long', test: (t) => [...t].length >= MAX_SUGGESTION_CHARS },
  { reason: 'multiple_sentences', test: isMultipleSentences },
  { reason: 'has_formatting', test: hasFormatting },
  { reason: 'evaluative', test: (t) => EVALUATIVE.test(foldQuotes(t)) || EVALUATIVE_OPENINGS.test(foldQuotes(t)) },
  { reason: 'ai_voice', test: isAiVoice },
];

export const FILTER_REASONS: readonly FilterReason[] = FILTER_RULES.map((rule) => rule.reason);

export function isFilterReason(value: unknown): value is FilterReason {
  return typeof value === 'string' && (FILTER_REASONS as readonly string[]).includes(value);
}

/**
 * Why this suggestion must not be shown, or null when it may be. Leading and trailing whitespace
 * is ignored; an empty text has too few words.
 */
export function filterSuggestion(text: string): FilterReason | null {
  const trimmed = text.trim();
  for (const rule of FILTER_RULES) {
    if (rule.test(trimmed)) return rule.reason;
  }
  return null;
}
