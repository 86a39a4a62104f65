// isShellCommandReadOnly: parse with tree-sitter-bash, run the whole-tree hazard scan, then walk
// the statements and check every command against the allow-list. Fails closed: a load failure,
// a parse error or any exception answers "not read-only".
import { classifyArgv } from './commands';
import { findHazard } from './hazards';
import { loadShellParser, type ShellParser } from './parser';
import type { CommandContext } from './ruleTypes';
import type { ParsedScript } from './syntaxTree';
import { refuse, type ShellVerdict } from './verdict';
import { walkScript } from './walker';

/** Longer commands are refused rather than parsed (they are not inspection commands). */
const MAX_COMMAND_LENGTH = 64 * 1024;

/**
 * Decides whether a bash command can run without changing anything: no writes, deletes, program
 * execution beyond the allow-listed inspection tools, network or session changes.
 */
export async function isShellCommandReadOnly(command: string): Promise<ShellVerdict> {
  if (typeof command !== 'string') return refuse('input', 'the command is not text');
  let parser: ShellParser;
  try {
    parser = await loadShellParser();
  } catch (error) {
    return refuse('load', `the shell parser could not be loaded (${describeError(error)}); reinstall the extension if this persists`);
  }
  try {
    return checkScript(parser, command, 0);
  } catch (error) {
    return refuse('error', `the command could not be checked (${describeError(error)})`);
  }
}

function checkScript(parser: ShellParser, source: string, depth: number): ShellVerdict {
  if (source.trim() === '') return refuse('command', 'the command is empty');
  if (source.length > MAX_COMMAND_LENGTH) return refuse('parse', 'the command is too long to check');
  // bash -c stops reading at a NUL byte; what it would run is not what we would read.
  if (source.includes('\u0000')) return refuse('parse', 'the command contains a NUL character');
  return checkParsedScript(parser.parse(source), parser, depth);
}

/** Checks an already parsed script (exported so tests can feed hand-made trees). */
export function checkParsedScript(script: ParsedScript, parser: ShellParser, depth = 0): ShellVerdict {
  if (script.hasError) return refuse('parse', 'the command has a syntax error');
  const hazard = findHazard(script);
  if (!hazard.readOnly) return hazard;
  return walkScript(script, contextAt(parser, depth));
}

function contextAt(parser: ShellParser, depth: number): CommandContext {
  return {
    depth,
    checkArgv: (argv, innerDepth) => classifyArgv(argv, contextAt(parser, innerDepth)),
    checkScript: (source, innerDepth) => checkScript(parser, source, innerDepth),
  };
}

function describeError(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
