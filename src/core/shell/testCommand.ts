// [ … ] and [[ … ]]: bash evaluates -v subscripts and [[ -eq ]] operands as code, treats > inside
// [ … ] as a redirection, and re-reads expanded words inside [ … ] as operators.
import type { ParsedScript, SyntaxNode } from './syntaxTree';
import { textOf } from './syntaxTree';
import { OK, refuse, type ShellVerdict } from './verdict';
import { evaluateWord } from './words';

/** Arithmetic comparisons in [[ … ]] evaluate both sides, so variables there can run code. */
const ARITHMETIC_TEST_OPERATORS = new Set(['-eq', '-ne', '-lt', '-le', '-gt', '-ge']);
/** -v name[subscript] evaluates the subscript; -R is the same for name references. */
const SUBSCRIPT_TEST_OPERATORS = new Set(['-v', '-R']);

export function checkTestCommand(script: ParsedScript, node: SyntaxNode): ShellVerdict {
  const singleBracket = node.children[0]?.type === '[';
  const expression = node.children.find((child) => child.named);
  let expandedWord = false;
  const pending = node.children.slice();
  while (pending.length > 0) {
    const part = pending.pop() as SyntaxNode;
    if (!part.named) continue;
    if (part.type === 'binary_expression' || part.type === 'unary_expression') {
      const operator = part.children.find((child) => child.field === 'operator');
      const op = operator ? textOf(script, operator) : '';
      if (singleBracket && (op === '>' || op === '<')) {
        return refuse('redirect', `${op} inside [ … ] is a redirection to a file`);
      }
      if (SUBSCRIPT_TEST_OPERATORS.has(op)) {
        return refuse('expansion', `${op} evaluates an array subscript, which can run code`);
      }
      if (!singleBracket && ARITHMETIC_TEST_OPERATORS.has(op)) {
        const operands = part.children.filter((child) => child.named && child.field !== 'operator');
        if (!operands.every((operand) => isPlainNumber(script, operand))) {
          return refuse('arithmetic', `[[ … ${op} … ]] evaluates its operands as arithmetic, which can run code`);
        }
      }
      pending.push(...part.children);
    } else if (part.type === 'parenthesized_expression') {
      pending.push(...part.children);
    } else if (STATEMENT_TYPES.has(part.type)) {
      return refuse('syntax', `unsupported command inside a test (${part.type})`);
    } else if (part.type !== 'test_operator' && part.type !== 'regex') {
      const arg = evaluateWord(script, part);
      if (!arg) return refuse('syntax', `unsupported word in a test (${part.type})`);
      if (arg.kind === 'literal' && SUBSCRIPT_TEST_OPERATORS.has(arg.value)) {
        return refuse('expansion', `${arg.value} evaluates an array subscript, which can run code`);
      }
      // [ … ] is an ordinary command: bash splits and globs its words, then test re-reads them,
      // so an expansion may turn into an operator such as -v. Only "quoted" words in a test of
      // at most three words keep their place.
      if (arg.kind !== 'literal') {
        if (singleBracket && part.type !== 'string') {
          return refuse('expansion', 'an unquoted expansion inside [ … ] may become an operator; quote it or use [[ … ]]');
        }
        expandedWord = true;
      }
    }
  }
  if (singleBracket && expandedWord && expression && !isSimpleTest(expression)) {
    return refuse('expansion', 'an expansion inside a [ … ] test of more than three words may become an operator; use [[ … ]]');
  }
  return OK;
}

/** One word, "op word" or "word op word": the forms where test cannot re-read a word as operator. */
function isSimpleTest(expression: SyntaxNode): boolean {
  const isWord = (node: SyntaxNode) =>
    !['binary_expression', 'unary_expression', 'parenthesized_expression'].includes(node.type);
  if (isWord(expression)) return true;
  if (expression.type !== 'binary_expression' && expression.type !== 'unary_expression') return false;
  return expression.children.filter((child) => child.named && child.field !== 'operator').every(isWord);
}

const STATEMENT_TYPES = new Set([
  'command', 'redirected_statement', 'pipeline', 'list', 'subshell', 'compound_statement',
  'variable_assignment', 'variable_assignments', 'declaration_command', 'unset_command',
  'function_definition', 'if_statement', 'while_statement', 'for_statement', 'case_statement',
  'c_style_for_statement', 'negated_command', 'test_command',
]);

function isPlainNumber(script: ParsedScript, node: SyntaxNode): boolean {
  if (node.children.length > 0) return false;
  if (node.type !== 'number' && node.type !== 'word') return false;
  return /^-?[0-9]+$/.test(textOf(script, node));
}
