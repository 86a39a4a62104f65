// Walks the statements of a parsed script (lists, pipelines, subshells, groups, if/while/for/case
// bodies) and checks every redirection and simple command in them. Simple commands are handed to
// the command rules; everything that changes the session is a boundary.
import { isHarmlessAssignment } from './environment';
import type { CommandContext } from './ruleTypes';
import type { ParsedScript, SyntaxNode } from './syntaxTree';
import { textOf } from './syntaxTree';
import { OK, refuse, type ShellVerdict } from './verdict';
import { evaluateWord, type Arg } from './words';

/** Arithmetic comparisons in [[ … ]] evaluate both sides, so variables there can run code. */
const ARITHMETIC_TEST_OPERATORS = new Set(['-eq', '-ne', '-lt', '-le', '-gt', '-ge']);
/** -v name[subscript] evaluates the subscript; -R is the same for name references. */
const SUBSCRIPT_TEST_OPERATORS = new Set(['-v', '-R']);
/** Output redirections; all of them create or change a file unless it is /dev/null. */
const WRITE_REDIRECTS = new Set(['>', '>>', '&>', '&>>', '>|']);
const HARMLESS_TARGET = '/dev/null';
const NAMED_DESCRIPTOR = /\{[A-Za-z_][A-Za-z0-9_]*\}$/;

export function walkScript(script: ParsedScript, context: CommandContext): ShellVerdict {
  return new Walker(script, context).statement(script.root);
}

class Walker {
  constructor(
    private readonly script: ParsedScript,
    private readonly context: CommandContext,
  ) {}

  statement(node: SyntaxNode): ShellVerdict {
    switch (node.type) {
      case 'program':
      case 'list':
      case 'pipeline':
      case 'subshell':
      case 'negated_command':
      case 'if_statement':
      case 'elif_clause':
      case 'else_clause':
      case 'while_statement':
      case 'do_group':
        return this.statements(node);
      case 'compound_statement':
        if (node.children[0]?.type === '((') return refuse('arithmetic', '((…)) evaluates arithmetic that can assign variables');
        return this.statements(node);
      case 'redirected_statement':
        return this.redirectedStatement(node);
      case 'command':
        return this.command(node);
      case 'for_statement':
        if (node.children.some((child) => !child.named && child.type === 'select')) {
          return refuse('command', 'select reads choices from the terminal');
        }
        return this.forLoop(node);
      case 'case_statement':
        return this.statements(node, (child) => child.field === 'value');
      case 'case_item':
        return this.statements(node, (child) => child.field === 'value');
      case 'test_command':
        return this.test(node);
      case 'c_style_for_statement':
        return refuse('arithmetic', 'for ((…)) assigns variables through arithmetic');
      case 'function_definition':
        return refuse('session', 'defining a function changes the shell session');
      case 'declaration_command':
        return refuse('session', `${node.children[0]?.type ?? 'declare'} changes shell variables`);
      case 'unset_command':
        return refuse('session', 'unset changes shell variables');
      case 'variable_assignment':
      case 'variable_assignments':
        return refuse('assignment', 'setting a shell variable only matters to later commands, so it changes the session');
      case 'comment':
        return OK;
      default:
        return refuse('syntax', `unsupported shell construct (${node.type})`);
    }
  }

  /** Checks the named children of a container statement; `skip` marks words that are no statement. */
  private statements(node: SyntaxNode, skip?: (child: SyntaxNode) => boolean): ShellVerdict {
    for (const child of node.children) {
      if (!child.named) {
        if (child.type === '&') return refuse('background', 'a command run in the background with & outlives the check');
        continue;
      }
      if (skip?.(child)) continue;
      const verdict = this.statement(child);
      if (!verdict.readOnly) return verdict;
    }
    return OK;
  }

  /**
   * The loop variable lives only inside this command's own shell process, unless it is already
   * exported: `for PATH in ./bin; do ls; done` would run ./bin/ls. Environment variables are
   * upper case by convention, so only lower-case names (other than the proxy settings) pass.
   */
  private forLoop(node: SyntaxNode): ShellVerdict {
    const variable = node.children.find((child) => child.field === 'variable');
    const name = variable ? textOf(this.script, variable) : '';
    if (!/^[a-z_][a-z0-9_]*$/.test(name) || name.endsWith('_proxy')) {
      return refuse('assignment', `the loop variable ${name || '?'} may be an exported environment variable; use a lower-case name`);
    }
    return this.statements(node, (child) => child.field === 'variable' || child.field === 'value');
  }

  private redirectedStatement(node: SyntaxNode): ShellVerdict {
    for (const child of node.children) {
      if (!child.named) continue;
      const verdict = child.field === 'body' ? this.statement(child) : this.redirect(child);
      if (!verdict.readOnly) return verdict;
    }
    return OK;
  }

  private redirect(node: SyntaxNode): ShellVerdict {
    // {name}>file: bash opens a new descriptor and assigns its number to the variable; tree-sitter
    // reads "{name}" as an argument of the command.
    if (NAMED_DESCRIPTOR.test(this.script.source.slice(Math.max(0, node.start - 130), node.start))) {
      return refuse('session', 'a {name}> redirection assigns a shell variable');
    }
    switch (node.type) {
      case 'file_redirect':
        return this.fileRedirect(node);
      case 'heredoc_redirect':
        return this.heredoc(node);
      case 'herestring_redirect':
        return OK;
      default:
        return refuse('syntax', `unsupported redirection (${node.type})`);
    }
  }

  private fileRedirect(node: SyntaxNode): ShellVerdict {
    const operator = node.children.find((child) => !child.named)?.type ?? '';
    const targets = node.children.filter((child) => child.field === 'destination');
    if (targets.length > 1) return refuse('parse', 'a redirection with more than one target');
    const target = targets[0];
    switch (operator) {
      case '<':
        return this.inputTarget(target);
      case '<&-':
      case '>&-':
        return OK;
      case '<&':
      case '>&':
        if (target && isPlainNumber(this.script, target)) return OK; // fd duplication such as 2>&1
        if (operator === '<&' || !target) return refuse('redirect', 'unsupported file descriptor duplication');
        // >&word with a word that is not a number sends stdout and stderr to that file.
        return this.isHarmlessTarget(target) ? OK : refuse('redirect', 'output redirection to file');
      default:
        if (!WRITE_REDIRECTS.has(operator)) return refuse('redirect', `unsupported redirection ${operator}`);
        if (target && this.isHarmlessTarget(target)) return OK;
        return refuse('redirect', 'output redirection to file');
    }
  }

  /** Reading a file is fine, but bash itself opens /dev/tcp/host/port and /dev/udp/… as sockets. */
  private inputTarget(target: SyntaxNode | undefined): ShellVerdict {
    const arg = target && evaluateWord(this.script, target);
    if (!arg) return refuse('redirect', 'an input redirection without a file');
    if (arg.kind !== 'literal') return refuse('redirect', 'input from a name only known at run time may open a network connection');
    if (/^\/dev\/(?:tcp|udp)\//.test(arg.value)) return refuse('redirect', 'bash opens /dev/tcp and /dev/udp as network connections');
    return OK;
  }

  private isHarmlessTarget(target: SyntaxNode): boolean {
    const arg = evaluateWord(this.script, target);
    return arg?.kind === 'literal' && arg.value === HARMLESS_TARGET;
  }

  private heredoc(node: SyntaxNode): ShellVerdict {
    const body = checkHeredocBody(this.script, node);
    if (!body.readOnly) return body;
    for (const child of node.children) {
      if (!child.named) continue;
      switch (child.type) {
        case 'heredoc_start':
        case 'heredoc_body':
        case 'heredoc_end':
        case 'file_descriptor':
          continue;
        default:
          break;
      }
      if (child.field === 'argument') {
        // `find <<EOF . -delete` gives find its arguments after the here-doc operator.
        return refuse('redirect', 'words after a here-document operator are arguments this check cannot place');
      }
      const verdict = child.type.endsWith('_redirect') ? this.redirect(child) : this.statement(child);
      if (!verdict.readOnly) return verdict;
    }
    return OK;
  }

  private command(node: SyntaxNode): ShellVerdict {
    const argv: Arg[] = [];
    let hasName = false;
    for (const child of node.children) {
      if (!child.named) continue;
      if (child.type === 'variable_assignment') {
        const verdict = this.prefixAssignment(child);
        if (!verdict.readOnly) return verdict;
        continue;
      }
      if (child.type.endsWith('_redirect')) {
        const verdict = this.redirect(child);
        if (!verdict.readOnly) return verdict;
        continue;
      }
      const word = child.type === 'command_name' ? child.children.find((part) => part.named) : child;
      if (child.type !== 'command_name' && child.field !== 'argument') {
        return refuse('syntax', `unsupported part of a command (${child.type})`);
      }
      const arg = word && evaluateWord(this.script, word);
      if (!arg) return refuse('syntax', `unsupported word in a command (${word?.type ?? 'empty'})`);
      if (child.type === 'command_name') {
        if (hasName) return refuse('syntax', 'a command with two names');
        hasName = true;
        argv.unshift(arg);
      } else {
        argv.push(arg);
      }
    }
    if (!hasName) return refuse('assignment', 'setting a shell variable only matters to later commands, so it changes the session');
    return this.context.checkArgv(argv, this.context.depth);
  }

  /** FOO=bar cmd: allowed only for variables that change formatting (LC_ALL=C sort). */
  private prefixAssignment(node: SyntaxNode): ShellVerdict {
    const name = node.children.find((child) => child.field === 'name');
    const value = node.children.find((child) => child.field === 'value');
    const nameText = name && name.type === 'variable_name' ? textOf(this.script, name) : '';
    const arg = value ? evaluateWord(this.script, value) : { value: '', kind: 'literal' as const, mayBeOption: false };
    if (nameText && arg?.kind === 'literal' && isHarmlessAssignment(nameText, arg.value)) return OK;
    return refuse('assignment', `${nameText || 'a variable'}=… in front of a command can change what the command runs`);
  }

  private test(node: SyntaxNode): ShellVerdict {
    const singleBracket = node.children[0]?.type === '[';
    const expression = node.children.find((child) => child.named);
    let expandedWord = false;
    const pending = node.children.slice();
    while (pending.length > 0) {
      const part = pending.pop() as SyntaxNode;
      if (!part.named) continue;
      if (part.type === 'binary_expression' || part.type === 'unary_expression') {
        const operator = part.children.find((child) => child.field === 'operator');
        const op = operator ? textOf(this.script, operator) : '';
        if (singleBracket && (op === '>' || op === '<')) {
          return refuse('redirect', `${op} inside [ … ] is a redirection to a file`);
        }
        if (SUBSCRIPT_TEST_OPERATORS.has(op)) {
          return refuse('expansion', `${op} evaluates an array subscript, which can run code`);
        }
        if (!singleBracket && ARITHMETIC_TEST_OPERATORS.has(op)) {
          const operands = part.children.filter((child) => child.named && child.field !== 'operator');
          if (!operands.every((operand) => isPlainNumber(this.script, operand))) {
            return refuse('arithmetic', `[[ … ${op} … ]] evaluates its operands as arithmetic, which can run code`);
          }
        }
        pending.push(...part.children);
      } else if (part.type === 'parenthesized_expression') {
        pending.push(...part.children);
      } else if (STATEMENT_TYPES.has(part.type)) {
        return refuse('syntax', `unsupported command inside a test (${part.type})`);
      } else if (part.type !== 'test_operator' && part.type !== 'regex') {
        const arg = evaluateWord(this.script, part);
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

/**
 * tree-sitter does not always parse a here-doc body the way bash reads it (backticks and bodies of
 * <<- are left as plain text), so the body is read here: where bash ends it, and, when the
 * delimiter is unquoted, whether it holds anything beyond plain $name expansions.
 */
function checkHeredocBody(script: ParsedScript, node: SyntaxNode): ShellVerdict {
  const start = node.children.find((child) => child.type === 'heredoc_start');
  const end = node.children.find((child) => child.type === 'heredoc_end');
  const body = node.children.find((child) => child.type === 'heredoc_body');
  if (!start || !end) return refuse('parse', 'a here-document without an end');
  const rawDelimiter = textOf(script, start);
  const quoted = /['"\\]/.test(rawDelimiter);
  const delimiter = rawDelimiter.replace(/['"\\]/g, '');
  const stripTabs = node.children.some((child) => !child.named && child.type === '<<-');
  const source = script.source;
  const bodyStart = body ? body.start : end.start;
  const endLineStart = source.lastIndexOf('\n', end.start - 1) + 1;
  // Bash ends the body at the first line that is exactly the delimiter (after leading tabs for <<-).
  let lineStart = source.lastIndexOf('\n', bodyStart - 1) + 1;
  let bashEnd = -1;
  while (lineStart <= source.length) {
    const lineEnd = source.indexOf('\n', lineStart);
    const line = source.slice(lineStart, lineEnd < 0 ? source.length : lineEnd);
    if ((stripTabs ? line.replace(/^\t+/, '') : line) === delimiter) {
      bashEnd = lineStart;
      break;
    }
    if (lineEnd < 0) break;
    lineStart = lineEnd + 1;
  }
  if (bashEnd !== endLineStart) return refuse('parse', 'bash would end this here-document somewhere else');
  if (quoted || !body) return OK;
  return unquotedBodyHazard(source.slice(body.start, body.end));
}

/** In an unquoted here-doc bash expands $…, ${…}, $(…), $((…)) and `…`; only $name is plain. */
function unquotedBodyHazard(text: string): ShellVerdict {
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\\') {
      i++;
      continue;
    }
    if (ch === '`') return refuse('substitution', 'backticks in a here-document run a command');
    if (ch !== '$') continue;
    const rest = text.slice(i + 1);
    if (/^(?:[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])/.test(rest) || /^\{[A-Za-z_][A-Za-z0-9_]*\}/.test(rest) || rest === '' || /^[\s"'.,:;/]/.test(rest)) {
      continue;
    }
    return refuse('substitution', 'an expansion in a here-document may run a command or assign a variable');
  }
  return OK;
}
