// The capability to run a shell command, owned by this floor: tools receive an implementation
// through ToolContext (NodeProcessRunner in the editor and the CLI, fakes in tests).

/** Runs a shell command; the VS Code side and the CLI pass a real one, tests may pass fakes. */
export interface ProcessRunner {
  run(
    command: string,
    options: { cwd: string; timeoutMs: number; maxOutputBytes: number; signal?: AbortSignal; env?: Record<string, string> },
  ): Promise<{ exitCode: number | null; signal: string | null; output: string; truncated: boolean; timedOut: boolean }>;
}
