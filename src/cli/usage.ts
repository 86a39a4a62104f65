// Usage errors (exit 2, one line) and the help text of the headless CLI.
export class UsageError extends Error {}

export const USAGE = `Usage: node dist/cli.js <command> [options]

Stream commands read JSON lines on stdin and write JSON lines on stdout:
  shell-check         {"command"} → {"command", "readOnly", "reason"}
  filter-suggestion   {"text"} → {"text", "reason"}
  gate                {"tool", "args", "approvalMode", "workspace"?} → {"tool", "decision", "reason"}

  speculate --workspace DIR --base-url URL --model NAME --suggestion TEXT
            [--api-key KEY] [--approval-mode default|auto-edit|yolo|plan] [--history FILE.json]
            [--max-turns N] [--accept] [--timeout-ms N] [--state-dir DIR] [--mcp-config FILE.json]
      Runs one speculation exactly as the extension would and prints one JSON object;
      with --accept it applies the result and names the checkpoint that undoes it.

  chat --workspace DIR --base-url URL --model NAME --prompt TEXT
       [--api-key KEY] [--approval-mode plan|default|auto-edit|yolo] [--approve deny|allow]
       [--history FILE.json] [--timeout-ms N] [--state-dir DIR] [--mcp-config FILE.json]
      Runs one turn of the main chat (tools until the model answers) and prints one JSON object;
      a call that would ask you is answered by --approve (default deny).

  undo --workspace DIR --checkpoint ID [--state-dir DIR] [--force]
      Restores every file the checkpoint's change touched to its state just before it; files
      changed since are conflicts and kept, unless --force. Prints {"restored", "conflicts", "error"}.

  --state-dir DIR holds checkpoints and what endpoints taught us (refused fields) between runs (default $XDG_STATE_HOME/speculate,
  or ~/.local/state/speculate).

Exit codes: 0 ran (whatever the verdicts), 2 bad usage, 1 internal failure.
`;
