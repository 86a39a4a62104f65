// The shape of a command rule and the context rules get: wrappers (env, xargs, bash -c …) check
// the command they run through the same entry points, one level deeper.
import type { ShellVerdict } from './verdict';
import type { Arg } from './words';

/** Where the command runs: what path operands and program lookups are checked against. */
export interface ShellWorkspace {
  /** Absolute, symlink-resolved workspace root. */
  root: string;
  /** Absolute working directory of the command (inside the workspace). */
  cwd: string;
  /** The PATH the command runs with when it runs without approval (no workspace entries). */
  searchPath: string;
  /**
   * Every folder the command may be in at some point (cwd, and each folder a `cd` of the script
   * leads to): paths are checked from all of them. Grows while the script is walked.
   */
  cwds: string[];
  /**
   * Loop variables whose every value was checked as a path and no option ("$f" in `for f in *.ts`), with the
   * folders `cwds` held then: after a later cd the values are no longer checked from there.
   */
  checkedVariables: Map<string, string>;
}

export interface CommandContext {
  workspace: ShellWorkspace;
  /** How many wrappers or nested scripts enclose the command being checked. */
  depth: number;
  /** Checks a complete argv (argv[0] is the command name) at the given depth. */
  checkArgv(argv: readonly Arg[], depth: number): ShellVerdict;
  /** Parses and checks an inline script (bash -c '…') at the given depth. */
  checkScript(source: string, depth: number): ShellVerdict;
}

/** Decides one command from its arguments (argv without the name). */
export type CommandRule = (args: readonly Arg[], context: CommandContext, name: string) => ShellVerdict;
