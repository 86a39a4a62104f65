// Walks the statements of a parsed script (lists, pipelines, subshells, groups, if/while/for/case
// bodies) and checks every redirection and simple command in them. Simple commands are handed to
// the command rules; everything that changes the session is a boundary.
import { isHarmlessAssignment } from './environment';
import { checkHeredocBody } from './heredoc';
import type { CommandContext } from './ruleTypes';
import type { ParsedScript, SyntaxNode } from './syntaxTree';
import { textOf } from './syntaxTree';
import { checkTestCommand } from './testCommand';
import { OK, refuse, type ShellVerdict } from './verdict';
import { evaluateWord, type Arg } from './words';
import { changeDirectory, checkPathArg, checkPatternWords } from './workspacePaths';

/** Output redirections; all of them create or change a file unless it is /dev/null. */
const WRITE_REDIRECTS = new Set(['>', '>>', '&>', '&>>', '>|']);
/** Output that goes nowhere or to the command's own output streams (pipes the engine reads). */
const HARMLESS_TARGETS = new Set(['/dev/null', '/dev/stdout', '/dev/stderr']);
const NAMED_DESCRIPTOR = /\{[A-Za-z_][A-Za-z0-9_]*\}$/;

export function walkScript(script: ParsedScript, context: CommandContext): ShellVerdict {
  return new Walker(script, context).statement(script.root);
}

/** Statements that may run more than once: a cd in them changes where earlier ones run too. */
const LOOPS = new Set(['while_statement', 'for_statement', 'c_style_for_statement']);

class Walker {
  private loops = 0;

  constructor(
    private readonly script: ParsedScript,
    private readonly context: CommandContext,
  ) {}

  statement(node: SyntaxNode): ShellVerdict {
    if (!LOOPS.has(node.type)) return this.statementOnce(node);
    this.loops++;
    try {
      return this.statementOnce(node);
    } finally {
      this.loops--;
    }
  }

  private statementOnce(node: SyntaxNode): ShellVerdict {
    switch (node.type) {
      case 'list':
        return this.list(node);
      case 'program':
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
        return checkTestCommand(this.script, node);
      case 'c_style_for_statement':
        return refuse('arithmetic', 'for ((…)) assigns variables through arithmetic');
      case 'function_definition':
        return refuse('session', 'defining a function changes the shell session');
      case 'declaration_command':
        return this.declaration(node);
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

  /**
   * `cd DIR && rest`: rest runs only once cd got there, so it is checked from DIR alone; after the
   * list the shell may be in either folder.
   */
  private list(node: SyntaxNode): ShellVerdict {
    const [left, operator, right] = node.children;
    const leftIsCd = left?.type === 'command' && operator?.type === '&&' && right !== undefined && this.commandName(left) === 'cd';
    if (!leftIsCd) return this.statements(node);
    const workspace = this.context.workspace;
    const before = [...workspace.cwds];
    const verdict = this.statement(left);
    if (!verdict.readOnly) return verdict;
    const reached = workspace.cwds.slice(before.length);
    if (reached.length === 0) return this.statements({ ...node, children: [right] });
    workspace.cwds.splice(0, workspace.cwds.length, ...reached);
    try {
      return this.statement(right);
    } finally {
      for (const folder of before) if (!workspace.cwds.includes(folder)) workspace.cwds.push(folder);
    }
  }

  private commandName(node: SyntaxNode): string | undefined {
    const name = node.children.find((child) => child.type === 'command_name');
    const word = name?.children.find((part) => part.named);
    const arg = word && evaluateWord(this.script, word);
    return arg?.kind === 'literal' ? arg.value : undefined;
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
   * declare/typeset/export/readonly only print when given -p (with names to print, or none) or
   * listing flags alone; anything else sets a variable that later commands of the script see.
   */
  private declaration(node: SyntaxNode): ShellVerdict {
    const keyword = node.children[0]?.type ?? 'declare';
    const words = node.children.slice(1).filter((child) => child.named);
    const texts = words.map((child) => (child.type === 'word' || child.type === 'variable_name' ? textOf(this.script, child) : undefined));
    const options = texts.filter((text) => text?.startsWith('-'));
    const names = texts.filter((text) => !text?.startsWith('-'));
    const onlyListing = options.every((text) => /^-[pfFx]+$/.test(text ?? ''));
    const printing = options.some((text) => text?.includes('p')) || options.length === 0;
    if (onlyListing && (names.length === 0 || (printing && options.length > 0 && names.every((text) => text !== undefined && /^[A-Za-z_][A-Za-z0-9_]*$/.test(text))))) {
      return keyword === 'local' ? refuse('session', 'local changes shell variables') : OK;
    }
    return refuse('session', `${keyword} changes shell variables`);
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
    // "$name" in the body is one of the values: a path inside the workspace, and no option, when
    // all of them are (a pattern's matches are checked not to start with "-"). That holds only in
    // the body, walked once for every round, and only when nothing in it binds the name again (a
    // later `for name`, `name=`, `read name` would change "$name" for the next round's commands).
    const values = node.children.filter((child) => child.field === 'value');
    const workspace = this.context.workspace;
    workspace.checkedVariables.delete(name);
    const body = node.children.find((child) => child.field === 'body');
    const rebound = body !== undefined && mentionsOtherThanExpanded(textOf(this.script, body), name);
    const checked = !rebound && values.length > 0 && values.every((value) => {
      const arg = evaluateWord(this.script, value);
      if (arg === undefined || arg.kind === 'dynamic' || (arg.kind === 'literal' && arg.value.startsWith('-'))) return false;
      return checkPathArg(arg, workspace).readOnly && checkPatternWords([arg], workspace).readOnly;
    });
    if (checked) workspace.checkedVariables.set(name, workspace.cwds.join('\u0000'));
    try {
      return this.statements(node, (child) => child.field === 'variable' || child.field === 'value');
    } finally {
      // After the loop (or if it never ran) "$name" is whatever it was before or became last.
      workspace.checkedVariables.delete(name);
    }
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
    return checkPathArg(arg, this.context.workspace);
  }

  private isHarmlessTarget(target: SyntaxNode): boolean {
    const arg = evaluateWord(this.script, target);
    return arg?.kind === 'literal' && HARMLESS_TARGETS.has(arg.value);
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
      if (child.type !== 'command_name') {
        const inner = this.substitutions(child);
        if (!inner.readOnly) return inner;
      }
      if (child.type === 'command_name') {
        if (hasName) return refuse('syntax', 'a command with two names');
        hasName = true;
        argv.unshift(arg);
      } else {
        argv.push(arg);
      }
    }
    if (!hasName) return refuse('assignment', 'setting a shell variable only matters to later commands, so it changes the session');
    if (argv[0].kind === 'literal' && argv[0].value === 'cd') return this.changeDirectory(argv.slice(1));
    return this.context.checkArgv(argv, this.context.depth);
  }

  /**
   * $(…) in an argument runs its script first: fine when that script is read-only (checked like a
   * command of its own, one level deeper); the word it produces is then only known at run time.
   */
  private substitutions(word: SyntaxNode): ShellVerdict {
    for (const substitution of argumentSubstitutions(word)) {
      const open = substitution.children[0];
      const close = substitution.children[substitution.children.length - 1];
      const verdict = this.context.checkScript(this.script.source.slice(open.end, close.start), this.context.depth + 1);
      if (!verdict.readOnly) return verdict;
    }
    return OK;
  }

  /**
   * cd DIR changes where the rest of the script runs: DIR must be written out and lead inside the
   * workspace, and every folder it may lead to joins the ones later paths are checked from. In a
   * loop a cd would also move the statements before it (on the next round), so it is refused there.
   */
  private changeDirectory(args: Arg[]): ShellVerdict {
    const operands = args.filter((arg, index) => !(arg.kind === 'literal' && ['-L', '-P', '-e', '--'].includes(arg.value) && index < args.length - 1));
    if (this.loops > 0) return refuse('session', 'cd inside a loop changes where the loop\'s other commands run');
    const target = operands[0];
    if (operands.length !== 1 || !target) return refuse('session', 'cd without a folder goes to the home folder, outside the workspace');
    if (target.kind !== 'literal') return refuse('session', 'cd to a folder only known at run time may leave the workspace');
    if (target.value === '-' || target.value.startsWith('-')) return refuse('session', `cd ${target.value} goes to a folder this check cannot know`);
    const workspace = this.context.workspace;
    const reached: string[] = [];
    for (const cwd of workspace.cwds) {
      const result = changeDirectory(target.value, cwd, workspace);
      if (!Array.isArray(result)) return result.reason.startsWith('path:') ? refuse('session', `cd ${result.reason.slice('path: '.length)}`) : result;
      reached.push(...result);
    }
    for (const folder of reached) if (!workspace.cwds.includes(folder)) workspace.cwds.push(folder);
    return OK;
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
}

/** The $(…) substitutions a word is made of (through quotes and concatenation, not inside ${…}). */
export function argumentSubstitutions(word: SyntaxNode): SyntaxNode[] {
  if (word.type === 'command_substitution') return word.children[0]?.type === '$(' ? [word] : [];
  // <(…) as a whole argument: the command reads the script's output through a pipe.
  if (word.type === 'process_substitution') return word.children[0]?.type === '<(' ? [word] : [];
  if (word.type !== 'string' && word.type !== 'concatenation') return [];
  return word.children.flatMap(argumentSubstitutions);
}

function isPlainNumber(script: ParsedScript, node: SyntaxNode): boolean {
  if (node.children.length > 0) return false;
  if (node.type !== 'number' && node.type !== 'word') return false;
  return /^-?[0-9]+$/.test(textOf(script, node));
}

/** Whether `text` names the variable `name` anywhere but in "$name" / "${name}" expansions. */
function mentionsOtherThanExpanded(text: string, name: string): boolean {
  const word = new RegExp(`(^|[^A-Za-z0-9_])${name}(?![A-Za-z0-9_])`, 'g');
  for (const match of text.matchAll(word)) {
    const at = (match.index ?? 0) + match[1].length;
    const before = text.slice(Math.max(0, at - 2), at);
    if (before.endsWith('$') || before === '${') continue;
    return true;
  }
  return false;
}
