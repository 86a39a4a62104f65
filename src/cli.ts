// The headless front over src/core (HEADLESS-CLI.md): JSON lines in, JSON lines out.
const USAGE = `Usage: node dist/cli.js <command> [options]

Commands:
  shell-check         classify shell commands as read-only or not (JSON lines on stdin)
  filter-suggestion   run the 12 suggestion filter rules (JSON lines on stdin)
  gate                decide allow/redirect/boundary for tool calls (JSON lines on stdin)
  speculate           run one speculation against an OpenAI-compatible endpoint
  --help              show this help
`;

async function main(argv: string[]): Promise<number> {
  const [command] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  process.stderr.write(`speculate: unknown command "${command}" (see --help)\n`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`speculate: internal error: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
