// Whole-tree checks that hold wherever a node appears (argument, assignment, here-doc, test, case
// pattern…): substitutions run commands, some expansions assign or evaluate code, unknown node
// types and parse errors mean we do not understand the command.
import type { ParsedScript, SyntaxNode } from './syntaxTree';
import { textOf } from './syntaxTree';
import { OK, refuse, type ShellVerdict } from './verdict';

/** Every named node type of tree-sitter-bash 0.25; anything else is a grammar we do not know. */
const KNOWN_NAMED_TYPES = new Set([
  'program', 'list', 'pipeline', 'redirected_statement', 'command', 'command_name', 'subshell',
  'compound_statement', 'negated_command', 'if_statement', 'elif_clause', 'else_clause',
  'while_statement', 'do_group', 'for_statement', 'c_style_for_statement', 'case_statement',
  'case_item', 'test_command', 'function_definition', 'declaration_command', 'unset_command',
  'variable_assignment', 'variable_assignments', 'file_redirect', 'heredoc_redirect',
  'herestring_redirect', 'heredoc_start', 'heredoc_body', 'heredoc_content', 'heredoc_end',
  'file_descriptor', 'word', 'string', 'string_content', 'raw_string', 'ansi_c_string',
  'translated_string', 'concatenation', 'simple_expansion', 'expansion', 'arithmetic_expansion',
  'command_substitution', 'process_substitution', 'brace_expression', 'number', 'variable_name',
  'special_variable_name', 'subscript', 'array', 'regex', 'extglob_pattern', 'test_operator',
  'binary_expression', 'unary_expression', 'ternary_expression', 'postfix_expression',
  'parenthesized_expression', 'comment',
]);

/** Inside $((…)) only constant arithmetic is safe: bash evaluates variable values as code. */
const CONSTANT_ARITHMETIC = new Set(['binary_expression', 'unary_expression', 'parenthesized_expression', 'ternary_expression']);

/** The characters constant arithmetic is written with (digits, hex, base#, operators). */
const ARITHMETIC_TEXT = /^\$(?:\(\([\s0-9a-fA-FxX#+\-*/%<>=!&|^~?:(),]*\)\)|\[[\s0-9a-fA-FxX#+\-*/%<>=!&|^~?:(),]*\])$/;

/**
 * `checkedSubstitutions`: the $(…) of command arguments, whose scripts the walker checks as
 * commands of their own; they are skipped here (their text included).
 */
export function findHazard(script: ParsedScript, checkedSubstitutions: ReadonlySet<SyntaxNode> = new Set()): ShellVerdict {
  const opaque: Array<[number, number]> = [];
  const arithmeticStarts = new Set<number>();
  const pending: Array<[SyntaxNode, boolean]> = [[script.root, false]];
  while (pending.length > 0) {
    const [node, quoted] = pending.pop() as [SyntaxNode, boolean];
    if (checkedSubstitutions.has(node)) {
      opaque.push([node.start, node.end]);
      continue;
    }
    const verdict = nodeHazard(script, node);
    if (!verdict.readOnly) return verdict;
    if (node.type === 'arithmetic_expansion') arithmeticStarts.add(node.start);
    if (isOpaque(script, node, quoted)) {
      opaque.push([node.start, node.end]);
      continue;
    }
    const childQuoted = quoted || DOUBLE_QUOTE_LIKE.has(node.type);
    const children = node.children;
    const quotedHeredoc = node.type === 'heredoc_redirect' && children.some((child) => child.type === 'heredoc_start' && /['"\\]/.test(textOf(script, child)));
    for (let i = 0; i < children.length; i++) {
      if (quotedHeredoc && children[i].type === 'heredoc_body') {
        opaque.push([children[i].start, children[i].end]);
        continue;
      }
      pending.push([children[i], childQuoted]);
    }
  }
  return substitutionInText(script.source, opaque, arithmeticStarts);
}

/** Node types inside which bash still expands $(…) and `…` even within '…'. */
const DOUBLE_QUOTE_LIKE = new Set(['string', 'translated_string', 'heredoc_body', 'expansion', 'arithmetic_expansion']);

/** Text bash never expands: single-quoted strings outside "…"/${…}, and comments. */
function isOpaque(script: ParsedScript, node: SyntaxNode, quoted: boolean): boolean {
  if (node.type === 'raw_string') return !quoted;
  if (node.type === 'comment') return !quoted && (node.start === 0 || ' \t\n;&|()'.includes(script.source[node.start - 1]));
  return false;
}

/**
 * The belt to the tree's braces: tree-sitter leaves some substitutions as plain text (backticks
 * inside ${…}, $(…) inside '…' inside "${…}", <(…) inside ${…}), so every $( $[ ` <( >( that bash
 * would see — anything outside single quotes and comments, not escaped, not the start of $((…)) —
 * is refused. So is a line continuation glued to the text before it: bash joins "$\<newline>(" into
 * "$(" and "l\<newline>s" into "ls", which tree-sitter reads apart.
 */
function substitutionInText(source: string, opaque: Array<[number, number]>, arithmeticStarts: Set<number>): ShellVerdict {
  opaque.sort((a, b) => a[0] - b[0]);
  let next = 0;
  for (let i = 0; i < source.length; i++) {
    while (next < opaque.length && opaque[next][1] <= i) next++;
    if (next < opaque.length && opaque[next][0] <= i) {
      i = opaque[next][1] - 1;
      continue;
    }
    const ch = source[i];
    const following = source[i + 1];
    if (ch === '\\') {
      const continuation = following === '\n' || (following === '\r' && source[i + 2] === '\n');
      if (continuation && i > 0 && !' \t\n'.includes(source[i - 1])) {
        return refuse('syntax', 'a line continuation glued to a word joins text the check would read apart');
      }
      i += following === '\r' ? 2 : 1;
    } else if (ch === '`') {
      return refuse('substitution', 'backticks run another command');
    } else if (ch === '$' && (following === '(' || following === '[') && !arithmeticStarts.has(i)) {
      return refuse('substitution', 'command substitution runs another command');
    } else if ((ch === '<' || ch === '>') && following === '(') {
      return refuse('substitution', 'process substitution runs another command');
    }
  }
  return OK;
}

function nodeHazard(script: ParsedScript, node: SyntaxNode): ShellVerdict {
  if (!node.named) return OK;
  switch (node.type) {
    case 'ERROR':
      return refuse('parse', 'the command has a syntax error');
    case 'command_substitution':
      return refuse('substitution', 'command substitution runs another command');
    case 'process_substitution':
      return refuse('substitution', 'process substitution runs another command');
    case 'expansion':
      return expansionHazard(script, node);
    case 'arithmetic_expansion':
      return arithmeticHazard(script, node);
    case 'subscript':
      return subscriptHazard(script, node);
    default:
      return KNOWN_NAMED_TYPES.has(node.type) ? OK : refuse('syntax', `unsupported shell construct (${node.type})`);
  }
}

function expansionHazard(script: ParsedScript, node: SyntaxNode): ShellVerdict {
  // tree-sitter may read a nested ${…} inside quotes as plain text; bash expands it.
  if (textOf(script, node).includes('${', 1)) return refuse('expansion', 'a nested ${…} expansion');
  const children = node.children;
  for (let i = 0; i < children.length; i++) {
    const child = children[i];
    if (child.named) continue;
    switch (child.type) {
      case '!':
        return refuse('expansion', '${!…} indirect expansion can evaluate code');
      case '=':
      case ':=':
        return refuse('expansion', '${name:=…} assigns a shell variable');
      case '@':
        if (children[i + 1]?.type === 'P') return refuse('expansion', '${name@P} expands a prompt string, which can run commands');
        break;
      case ':':
        // ${name:offset:length}: bash evaluates offset and length as arithmetic.
        for (let j = i + 1; j < children.length && children[j].named; j++) {
          const part = children[j];
          if (part.type !== 'number' || part.children.length > 0) {
            return refuse('expansion', `\${name:${textOf(script, part)}} evaluates its offset as arithmetic, which can run code`);
          }
        }
        break;
      default:
        break;
    }
  }
  return OK;
}

function arithmeticHazard(script: ParsedScript, node: SyntaxNode): ShellVerdict {
  if (!ARITHMETIC_TEXT.test(textOf(script, node))) {
    return refuse('arithmetic', '$((…)) with variables or expansions is evaluated as code by bash');
  }
  const pending = node.children.slice();
  while (pending.length > 0) {
    const child = pending.pop() as SyntaxNode;
    if (!child.named) continue;
    const constant = (child.type === 'number' && child.children.length === 0) || CONSTANT_ARITHMETIC.has(child.type);
    if (!constant) return refuse('arithmetic', '$((…)) with variables or expansions is evaluated as code by bash');
    pending.push(...child.children);
  }
  return OK;
}

function subscriptHazard(script: ParsedScript, node: SyntaxNode): ShellVerdict {
  const index = node.children.find((child) => child.field === 'index');
  const text = index ? textOf(script, index) : '';
  if (index && index.children.length === 0 && /^(?:[0-9]+|@|\*)$/.test(text)) return OK;
  return refuse('expansion', 'an array index other than a plain number is evaluated as arithmetic, which can run code');
}
