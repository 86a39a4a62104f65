// What a shell word will be once bash has expanded it, as far as can be known without running
// anything: a literal value (quotes and escapes removed), a pattern (glob, brace or tilde) or
// dynamic (contains a parameter or arithmetic expansion). Rules decide what they accept of each.
import type { ParsedScript, SyntaxNode } from './syntaxTree';
import { textOf } from './syntaxTree';

export type ArgKind = 'literal' | 'pattern' | 'dynamic';

export interface Arg {
  /** The value for literal words; for the others the text with quotes removed, as a hint. */
  value: string;
  kind: ArgKind;
  /** True when the expanded word may start with "-", i.e. may be taken as an option. */
  mayBeOption: boolean;
  /** For a word that is exactly "$name" (quoted, so neither split nor globbed): the name. */
  boundTo?: string;
  /** For a pattern or dynamic word: its text before the first glob, brace or expansion. */
  literalPrefix?: string;
}

/** One run of characters in a word: quoted text is never globbed, dynamic parts are unknown. */
type Segment = { text: string; quoted: boolean; dynamic?: false } | { dynamic: true };

const DYNAMIC: Segment = { dynamic: true };

/** What <(…) stands for in a checked argument: bash passes /dev/fd/N, a pipe. */
export const PIPE_NAME = '/dev/fd/<pipe>';

/** An argument whose value cannot be known (e.g. one xargs appends from its input). */
export const UNKNOWN_ARG: Arg = Object.freeze({ value: '…', kind: 'dynamic', mayBeOption: true });

/** Evaluates a word-like node; undefined means "not a word this classifier understands". */
export function evaluateWord(script: ParsedScript, node: SyntaxNode): Arg | undefined {
  const segments = segmentsOf(script, node);
  const arg = segments && argFromSegments(segments);
  const variable = arg && quotedVariable(script, node);
  return variable ? { ...arg, boundTo: variable } : arg;
}

/** "$name" or "${name}" as the whole word. */
function quotedVariable(script: ParsedScript, node: SyntaxNode): string | undefined {
  if (node.type !== 'string') return undefined;
  const match = /^"\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\})"$/.exec(textOf(script, node));
  return match ? (match[1] ?? match[2]) : undefined;
}

function segmentsOf(script: ParsedScript, node: SyntaxNode): Segment[] | undefined {
  switch (node.type) {
    case 'word':
    case 'extglob_pattern':
      return unquotedWord(textOf(script, node));
    case 'number':
      return node.children.length === 0 ? [{ text: textOf(script, node), quoted: false }] : [DYNAMIC];
    case 'brace_expression':
      return [{ text: textOf(script, node), quoted: false }];
    case 'raw_string': {
      const text = textOf(script, node);
      return [{ text: text.slice(1, -1), quoted: true }];
    }
    case 'ansi_c_string': {
      // $'…' decodes escapes (\x72m is "rm"); without a backslash the text is what it says.
      const text = textOf(script, node);
      return text.includes('\\') ? [DYNAMIC] : [{ text: text.slice(2, -1), quoted: true }];
    }
    case 'translated_string':
      // $"…" may be replaced by a translation from the environment's message catalogue.
      return [DYNAMIC];
    case 'string':
      return doubleQuoted(script, node);
    case 'concatenation': {
      const parts: Segment[] = [];
      for (const child of node.children) {
        const inner = segmentsOf(script, child);
        if (!inner) return undefined;
        parts.push(...inner);
      }
      return parts;
    }
    case 'simple_expansion':
    case 'expansion':
    case 'arithmetic_expansion':
    case 'command_substitution':
      return [DYNAMIC];
    case 'process_substitution':
      // /dev/fd/N, a pipe from a script checked on its own (walker.ts): no file of the workspace.
      return textOf(script, node).startsWith('<(') ? [{ text: PIPE_NAME, quoted: true }] : undefined;
    default:
      return undefined;
  }
}

/** An unquoted word: a backslash makes the next character literal; backslash-newline vanishes. */
function unquotedWord(text: string): Segment[] {
  if (!text.includes('\\')) return [{ text, quoted: false }];
  const segments: Segment[] = [];
  let plain = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch !== '\\') {
      plain += ch;
      continue;
    }
    const next = text[i + 1];
    i++;
    if (next === undefined || next === '\n') continue;
    if (plain) segments.push({ text: plain, quoted: false });
    plain = '';
    segments.push({ text: next, quoted: true });
  }
  if (plain) segments.push({ text: plain, quoted: false });
  return segments;
}

function doubleQuoted(script: ParsedScript, node: SyntaxNode): Segment[] | undefined {
  const segments: Segment[] = [{ text: '', quoted: true }];
  for (const child of node.children) {
    if (!child.named) continue; // the quote marks
    if (child.type === 'string_content') {
      segments.push({ text: unescapeDoubleQuoted(textOf(script, child)), quoted: true });
    } else if (child.type === 'simple_expansion' || child.type === 'expansion' || child.type === 'arithmetic_expansion' || child.type === 'command_substitution') {
      segments.push(DYNAMIC);
    } else {
      return undefined;
    }
  }
  return segments;
}

/** Inside "…" a backslash only escapes $ ` " \ and newline; elsewhere it stays. */
function unescapeDoubleQuoted(text: string): string {
  if (!text.includes('\\')) return text;
  return text.replace(/\\([$`"\\\n])/g, (_match, ch: string) => (ch === '\n' ? '' : ch));
}

const GLOB_CHARS = new Set(['*', '?', '[']);

function argFromSegments(segments: Segment[]): Arg {
  let value = '';
  let prefix = '';
  let prefixDone = false;
  let kind: ArgKind = 'literal';
  let tildeStart = false;
  // Unquoted characters in order, with quoted ones replaced by a neutral mark, for brace detection.
  let shape = '';
  for (const segment of segments) {
    if (segment.dynamic) {
      kind = 'dynamic';
      prefixDone = true;
      shape += '\u0000';
      continue;
    }
    value += segment.text;
    if (segment.quoted) {
      if (!prefixDone) prefix += segment.text;
      shape += '\u0000'.repeat(segment.text.length);
      continue;
    }
    for (const ch of segment.text) {
      const atStart = shape.length === 0;
      const afterAssign = shape.endsWith('=') || shape.endsWith(':');
      if (GLOB_CHARS.has(ch) || (ch === '~' && (atStart || afterAssign))) {
        if (kind === 'literal') kind = 'pattern';
        if (ch === '~' && atStart) tildeStart = true;
        prefixDone = true;
      }
      if (ch === '{') prefixDone = true;
      if (!prefixDone) prefix += ch;
      shape += ch;
    }
  }
  if (kind === 'literal' && hasBraceExpansion(shape)) kind = 'pattern';
  if (kind === 'literal') return { value, kind, mayBeOption: value.startsWith('-') };
  const mayBeOption = prefix === '' ? !tildeStart : prefix.startsWith('-');
  return { value, kind, mayBeOption, literalPrefix: prefix };
}

/** a{b,c} and {1..3} expand to several words; {} and {a} do not. */
function hasBraceExpansion(shape: string): boolean {
  let open = shape.indexOf('{');
  while (open >= 0) {
    const close = shape.indexOf('}', open + 1);
    if (close < 0) return false;
    const inner = shape.slice(open + 1, close);
    if (inner.includes(',') || inner.includes('..')) return true;
    open = shape.indexOf('{', open + 1);
  }
  return false;
}
