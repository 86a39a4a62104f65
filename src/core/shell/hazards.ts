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

const CONTINUATION_ONLY = /^(?:\\\r?\n)+$/;

export function findHazard(script: ParsedScript): ShellVerdict {
  const gluedWordsPossible = script.source.includes('\\\n') || script.source.includes('\\\r\n');
  const pending: SyntaxNode[] = [script.root];
  while (pending.length > 0) {
    const node = pending.pop() as SyntaxNode;
    const verdict = nodeHazard(script, node);
    if (!verdict.readOnly) return verdict;
    const children = node.children;
    for (let i = 0; i < children.length; i++) {
      if (gluedWordsPossible && i > 0 && isGlued(script, children[i - 1], children[i])) {
        return refuse('syntax', 'a line continuation inside a word joins text the check would read apart');
      }
      pending.push(children[i]);
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
      return arithmeticHazard(node);
    case 'subscript':
      return subscriptHazard(script, node);
    default:
      return KNOWN_NAMED_TYPES.has(node.type) ? OK : refuse('syntax', `unsupported shell construct (${node.type})`);
  }
}

/** bash joins "l\<newline>s" into "ls"; tree-sitter reads two words. Refuse rather than guess. */
function isGlued(script: ParsedScript, left: SyntaxNode, right: SyntaxNode): boolean {
  if (right.start <= left.end) return false;
  return CONTINUATION_ONLY.test(script.source.slice(left.end, right.start));
}

function expansionHazard(script: ParsedScript, node: SyntaxNode): ShellVerdict {
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

function arithmeticHazard(node: SyntaxNode): ShellVerdict {
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
