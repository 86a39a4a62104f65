// Commands that run another command (env, nice, timeout, time, command, stdbuf, xargs, bash -c):
// each is read-only exactly when the command it runs is, so it is checked one level deeper.
import { isHarmlessAssignment } from './environment';
import { hasOption, scanOptions, type OptionSpec } from './options';
import type { CommandContext, CommandRule } from './ruleTypes';
import { OK, refuse, type ShellVerdict } from './verdict';
import { UNKNOWN_ARG, type Arg } from './words';

/** Scans the wrapper's own options POSIX-style, then checks what follows as a command. */
function wrapper(spec: OptionSpec, runs: (operands: Arg[], context: CommandContext, name: string) => ShellVerdict): CommandRule {
  return (args, context, name) => {
    const result = scanOptions(name, args, { ...spec, stopAtOperand: true });
    if (!result.ok) return result.verdict;
    return runs(result.args.operands, context, name);
  };
}

function runInner(argv: readonly Arg[], context: CommandContext): ShellVerdict {
  return argv.length === 0 ? OK : context.checkArgv(argv, context.depth + 1);
}

/** env [VAR=value…] [command…]; -i/-u would drop the environment that neutralises git's hooks. */
export const env = wrapper({ allowedShort: '0v', allowedLong: ['null', 'debug'] }, (operands, context) => {
  let i = 0;
  for (; i < operands.length; i++) {
    const operand = operands[i];
    if (operand.kind !== 'literal') return refuse('argument', 'env: an argument only known at run time may be an assignment or a command');
    const eq = operand.value.indexOf('=');
    if (eq <= 0) break;
    const name = operand.value.slice(0, eq);
    if (!isHarmlessAssignment(name, operand.value.slice(eq + 1))) {
      return refuse('assignment', `env ${name}=… can change what the command runs`);
    }
  }
  return runInner(operands.slice(i), context);
});

export const nice: CommandRule = (args, context, name) => {
  // nice -10 cmd: a numeric adjustment written as an option.
  const rest = args[0]?.kind === 'literal' && /^-[0-9]+$/.test(args[0].value) ? args.slice(1) : args;
  return wrapper({ allowedShort: 'n', shortWithValue: 'n', allowedLong: ['adjustment'], longWithValue: ['adjustment'] }, (operands, ctx) =>
    runInner(operands, ctx),
  )(rest, context, name);
};

export const timeout = wrapper(
  {
    allowedShort: 'ksv',
    shortWithValue: 'ks',
    allowedLong: ['kill-after', 'signal', 'preserve-status', 'foreground', 'verbose'],
    longWithValue: ['kill-after', 'signal'],
  },
  (operands, context) => runInner(operands.slice(1), context),
);

/**
 * The time keyword, and GNU /usr/bin/time (also reached through env time): -o/--output and
 * -a/--append would write the report to a file, so only the options that print are allowed.
 */
export const time = wrapper(
  { allowedShort: 'pvqf', shortWithValue: 'f', allowedLong: ['portability', 'verbose', 'quiet', 'format'], longWithValue: ['format'] },
  (operands, context) => runInner(operands, context),
);

export const stdbuf = wrapper(
  { allowedShort: 'ioe', shortWithValue: 'ioe', allowedLong: ['input', 'output', 'error'], longWithValue: ['input', 'output', 'error'] },
  (operands, context) => runInner(operands, context),
);

/**
 * read [-r] … name…: sets variables of this script only. Lower-case names only (as for loop
 * variables): an upper-case one may be PATH, IFS, PS4 or another variable that changes what later
 * commands run. What it reads is only known at run time, so later uses are dynamic words.
 */
export const read: CommandRule = (args, context, name) => {
  const result = scanOptions(name, args, { allowedShort: 'rsdtnNpa', shortWithValue: 'dtnNpa' });
  if (!result.ok) return result.verdict;
  const names = [...result.args.operands, ...result.args.options.filter((option) => option.name === 'a').map((option) => option.value)];
  for (const variable of names) {
    if (!variable || variable.kind !== 'literal' || !/^[a-z_][a-z0-9_]*$/.test(variable.value) || variable.value.endsWith('_proxy')) {
      return refuse('assignment', `read ${variable?.value ?? ''}: only lower-case variable names, which cannot be an environment variable`);
    }
    // A loop variable counts as a checked path; read would put any text there (on the next round
    // of the loop too, before the words that use it).
    if (context.workspace.checkedVariables.has(variable.value)) {
      return refuse('assignment', `read ${variable.value} overwrites a loop variable whose values were checked as paths`);
    }
  }
  return OK;
};

/** command -v/-V only looks a name up; plain `command cmd` runs it. */
export const command: CommandRule = (args, context, name) => {
  const result = scanOptions(name, args, { allowedShort: 'pvV', stopAtOperand: true });
  if (!result.ok) return result.verdict;
  if (hasOption(result.args, 'v', 'V')) return OK;
  return runInner(result.args.operands, context);
};

/**
 * xargs runs its command with words read from input appended (or put in place of -I's string);
 * those words are unknown, so they count as arguments that may be options. No command means echo.
 */
export const xargs: CommandRule = (args, context, name) => {
  const result = scanOptions(name, args, {
    allowedShort: '0tdnLIPrsxEao',
    shortWithValue: 'dnLIPsEa',
    allowedLong: ['null', 'delimiter', 'max-args', 'max-lines', 'replace', 'max-procs', 'no-run-if-empty', 'verbose', 'max-chars', 'exit', 'arg-file', 'open-tty', 'show-limits'],
    longWithValue: ['delimiter', 'max-args', 'max-lines', 'max-procs', 'max-chars', 'arg-file'],
    stopAtOperand: true,
  });
  if (!result.ok) return result.verdict;
  const replace = result.args.options.find((option) => option.name === 'I' || option.name === 'replace');
  const inner = result.args.operands;
  if (inner.length === 0) return OK;
  if (!replace) return runInner([...inner, UNKNOWN_ARG], context);
  const marker = replace.value?.kind === 'literal' ? replace.value.value : replace.name === 'replace' ? '{}' : undefined;
  if (!marker) return refuse('argument', 'xargs: the replacement string is only known at run time');
  return runInner(
    inner.map((arg) => (arg.kind === 'literal' && arg.value.includes(marker) ? replaced(arg, marker) : arg)),
    context,
  );
};

function replaced(arg: Arg, marker: string): Arg {
  const prefix = arg.value.slice(0, arg.value.indexOf(marker));
  return { value: arg.value, kind: 'dynamic', mayBeOption: prefix === '' || prefix.startsWith('-') };
}

/**
 * bash/sh -c 'script': the script is parsed and checked like the outer command. Without -c the
 * shell runs a script file or reads commands from its input, neither of which can be seen here.
 */
export const shell: CommandRule = (args, context, name) => {
  const result = scanOptions(name, args, {
    allowedShort: 'ceuxfvo',
    shortWithValue: 'o',
    allowedLong: ['norc', 'noprofile'],
    stopAtOperand: true,
  });
  if (!result.ok) return result.verdict;
  if (!hasOption(result.args, 'c')) return refuse('command', `${name} without -c runs a script file or reads commands from its input`);
  const badOption = result.args.options.find((option) => option.name === 'o' && !['pipefail', 'errexit', 'nounset', 'xtrace', 'noglob'].includes(option.value?.value ?? ''));
  if (badOption) return refuse('argument', `${name} -o ${badOption.value?.value ?? ''} is not on the read-only list`);
  const script = result.args.operands[0];
  if (!script || script.kind !== 'literal') return refuse('argument', `${name} -c: the script is only known at run time`);
  return context.checkScript(script.value, context.depth + 1);
};
