// isShellCommandReadOnly: parse with tree-sitter-bash, run the whole-tree hazard scan, then walk
// the statements and check every command against the allow-list. Fails closed: a load failure,
// a parse error or any exception answers "not read-only".
import { realpathSync } from 'node:fs';
import * as path from 'node:path';
import { safeSearchPath } from '../fs/programSearch';
import { classifyArgv } from './commands';
import { findHazard } from './hazards';
import { loadShellParser, type ShellParser } from './parser';
import type { CommandContext, ShellWorkspace } from './ruleTypes';
import type { ParsedScript, SyntaxNode } from './syntaxTree';
import { refuse, type ShellVerdict } from './verdict';
import { argumentSubstitutions, walkScript } from './walker';

/** Longer commands are refused rather than parsed (they are not inspection commands). */
const MAX_COMMAND_LENGTH = 64 * 1024;

/** Where a command is checked for: the workspace it may read and the folder it runs in. */
export interface ShellCheckContext {
  /** The workspace root (default: this process's working directory). */
  workspaceRoot?: string;
  /** The command's working directory, inside the workspace (default: the root). */
  cwd?: string;
  /** The PATH the command would be given before sanitising (default: this process's PATH). */
  pathValue?: string;
}

/** Recently resolved workspace roots: the same root is checked for every command of a session. */
const ROOT_CACHE_MS = 2000;
const resolvedRoots = new Map<string, { real: string; at: number }>();

function resolvedRoot(spelled: string): string {
  const now = Date.now();
  const cached = resolvedRoots.get(spelled);
  if (cached && now - cached.at < ROOT_CACHE_MS) return cached.real;
  const real = realpathSync.native(spelled);
  if (resolvedRoots.size > 32) resolvedRoots.clear();
  resolvedRoots.set(spelled, { real, at: now });
  return real;
}

/** The workspace a check runs against, symlinks resolved; a refusal when it cannot be placed. */
function workspaceOf(context: ShellCheckContext): ShellWorkspace | ShellVerdict {
  let root: string;
  let cwd: string;
  try {
    root = resolvedRoot(path.resolve(context.workspaceRoot ?? process.cwd()));
    cwd = context.cwd === undefined ? root : realpathSync.native(path.resolve(root, context.cwd));
  } catch (error) {
    return refuse('input', `the workspace or working directory cannot be found (${describeError(error)})`);
  }
  if (cwd !== root && !cwd.startsWith(root.endsWith(path.sep) ? root : root + path.sep)) {
    return refuse('input', 'the working directory is outside the workspace');
  }
  let searchPath: string | undefined;
  return {
    root,
    cwd,
    // Only version commands look programs up; most checks never need it.
    get searchPath() {
      searchPath ??= safeSearchPath(context.pathValue ?? process.env.PATH, [root]).join(path.delimiter);
      return searchPath;
    },
    cwds: [cwd],
    checkedVariables: new Map(),
  };
}

/**
 * Decides whether a bash command can run without changing anything: no writes, deletes, program
 * execution beyond the allow-listed inspection tools, network or session changes, and no reads
 * outside the workspace.
 */
export async function isShellCommandReadOnly(command: string, context: ShellCheckContext = {}): Promise<ShellVerdict> {
  if (typeof command !== 'string') return refuse('input', 'the command is not text');
  let parser: ShellParser;
  try {
    parser = await loadShellParser();
  } catch (error) {
    return refuse('load', `the shell parser could not be loaded (${describeError(error)}); reinstall the extension if this persists`);
  }
  try {
    const workspace = workspaceOf(context);
    if ('readOnly' in workspace) return workspace;
    return checkScript(parser, workspace, command, 0);
  } catch (error) {
    return refuse('error', `the command could not be checked (${describeError(error)})`);
  }
}

function checkScript(parser: ShellParser, workspace: ShellWorkspace, source: string, depth: number): ShellVerdict {
  if (source.trim() === '') return refuse('command', 'the command is empty');
  if (source.length > MAX_COMMAND_LENGTH) return refuse('parse', 'the command is too long to check');
  // bash -c stops reading at a NUL byte; what it would run is not what we would read.
  if (source.includes('\u0000')) return refuse('parse', 'the command contains a NUL character');
  return checkParsedScript(parser.parse(source), parser, workspace, depth);
}

/** Checks an already parsed script (exported so tests can feed hand-made trees). */
export function checkParsedScript(script: ParsedScript, parser: ShellParser, workspace: ShellWorkspace, depth = 0): ShellVerdict {
  if (script.hasError) return refuse('parse', 'the command has a syntax error');
  const hazard = findHazard(script, commandArgumentSubstitutions(script.root));
  if (!hazard.readOnly) return hazard;
  return walkScript(script, contextAt(parser, workspace, depth));
}

function contextAt(parser: ShellParser, workspace: ShellWorkspace, depth: number): CommandContext {
  return {
    workspace,
    depth,
    checkArgv: (argv, innerDepth) => classifyArgv(argv, contextAt(parser, workspace, innerDepth)),
    checkScript: (source, innerDepth) => checkScript(parser, workspace, source, innerDepth),
  };
}

/** The $(…) substitutions in the arguments of simple commands (the walker checks their scripts). */
function commandArgumentSubstitutions(root: SyntaxNode): Set<SyntaxNode> {
  const found = new Set<SyntaxNode>();
  const pending = [root];
  while (pending.length > 0) {
    const node = pending.pop() as SyntaxNode;
    if (node.type === 'command') {
      for (const child of node.children) if (child.field === 'argument') for (const substitution of argumentSubstitutions(child)) found.add(substitution);
    }
    pending.push(...node.children);
  }
  return found;
}

function describeError(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
