// The headless front over src/core (HEADLESS-CLI.md): JSON lines in, JSON lines out. Diagnostics go
// to stderr only; exit 0 when the command ran, 2 on bad usage, 1 on an internal failure.
import { runChat } from './cli/chat';
import { runFilterSuggestion } from './cli/filterSuggestion';
import { runGate } from './cli/gate';
import { runShellCheck } from './cli/shellCheck';
import { runSpeculate } from './cli/speculate';
import { runUndo } from './cli/undo';
import { USAGE, UsageError } from './cli/usage';

type Command = (args: string[]) => Promise<number>;

const io = { input: process.stdin, output: process.stdout };

const COMMANDS: Record<string, Command> = {
  'shell-check': () => runShellCheck(io),
  'filter-suggestion': () => runFilterSuggestion(io),
  gate: () => runGate(io),
  speculate: (args) => runSpeculate(args, process.stdout),
  undo: (args) => runUndo(args, process.stdout),
  chat: (args) => runChat(args, process.stdout),
};

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  const command = COMMANDS[name];
  if (!command) throw new UsageError(`unknown command "${name}" (see --help)`);
  return command(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`speculate: ${error.message}\n`);
      process.exitCode = 2;
      return;
    }
    process.stderr.write(`speculate: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
