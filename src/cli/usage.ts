// Usage errors (exit 2, one line) and the help text of the headless CLI.
export class UsageError extends Error {}

export const USAGE = `Usage: node dist/cli.js <command> [options]

Stream commands read JSON lines on stdin and write JSON lines on stdout:
  shell-check         {"command"} → {"command", "readOnly", "reason"}
  filter-suggestion   {"text"} → {"text", "reason"}
  gate                {"tool", "args", "approvalMode", "workspace"?} → {"tool", "decision", "reason"}

  speculate --workspace DIR --base-url URL --model NAME --suggestion TEXT
            [--api-key KEY] [--approval-mode default|auto-edit|yolo|plan] [--history FILE.json]
            [--max-turns N] [--accept] [--timeout-ms N]
      Runs one speculation exactly as the extension would and prints one JSON object.

Exit codes: 0 ran (whatever the verdicts), 2 bad usage, 1 internal failure.
`;
