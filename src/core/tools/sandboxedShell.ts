// run_shell_command inside the sandbox (SANDBOX.md): for the speculation, over its overlay (the
// command sees the speculated edits, its changes become overlay changes); for commands the main
// chat runs without asking, with the workspace read-only. A run that is not a result is a boundary.
import { formatBytes } from '../sandbox';
import type { SandboxResult } from '../sandbox/shellSandbox';
import type { SandboxRun, ToolContext, ToolResult } from './types';
import { failure, success } from './toolSupport';

/** Lines of a failed git command's output (a pre-commit hook's complaint) that the boundary shows. */
const GIT_FAILURE_LINES = 12;

/** The sandbox's own default for what a command may write. */
export const SANDBOX_DEFAULT_MAX_WRITE_BYTES = 256 * 1024 * 1024;

export interface SandboxedShellInput {
  command: string;
  /** Absolute working directory inside the workspace. */
  cwd: string;
  context: ToolContext;
  /** Speculation: a run that is not a result stops it (boundary). Unattended: the main chat's read-only command, which falls back to today's run when no sandbox can take it. */
  purpose: 'speculation' | 'unattended';
  /** The shell tool's own limits; the sandbox's settings take precedence for the time limit. */
  timeoutMs: number;
  maxOutputBytes: number;
  run: SandboxRun;
}

/** The lines the model reads after a shell command: how it ended, its output, whether it was cut. */
export function shellResultText(result: { exitCode: number | null; signal: string | null; output: string; truncated: boolean; timedOut: boolean }, limits: { timeoutMs: number; maxOutputBytes: number }): string {
  const lines: string[] = [];
  if (result.timedOut) {
    lines.push(`The command timed out after ${Math.round(limits.timeoutMs / 1000)} s and was stopped, with everything it started.`);
  } else if (result.exitCode !== null) {
    lines.push(`Exit code: ${result.exitCode}`);
  } else {
    lines.push(`The command was ended by signal ${result.signal ?? 'unknown'}.`);
  }
  const output = result.output.replace(/\s+$/, '');
  lines.push(output === '' ? '(no output)' : `Output:\n${output}`);
  if (result.truncated) lines.push(`[Output was longer than ${Math.round(limits.maxOutputBytes / 1024)} KB; the middle was left out. Redirect to a file and read parts of it, or filter with grep/head/tail.]`);
  return lines.join('\n');
}

function boundaryResult(detail: string, output = ''): ToolResult {
  return { ok: false, output, boundary: detail };
}

/**
 * Runs the command in the sandbox. Undefined when no sandbox can run it and the caller may fall back
 * to running it as before (the main chat); for a speculation's `sandbox` decision that is a boundary.
 */
export async function runInSandbox(input: SandboxedShellInput): Promise<ToolResult | undefined> {
  const { context, run, command } = input;
  const sandbox = context.shellSandbox;
  const forSpeculation = input.purpose === 'speculation';
  if (!sandbox) return forSpeculation ? boundaryResult('no sandbox is configured here') : undefined;
  const availability = await sandbox.probe();
  if (!availability.available) return forSpeculation ? boundaryResult(`the sandbox is not available (${availability.reason})`) : undefined;

  const timeoutMs = context.sandboxLimits?.timeoutMs ?? input.timeoutMs;
  const maxWriteBytes = context.sandboxLimits?.maxWriteBytes ?? SANDBOX_DEFAULT_MAX_WRITE_BYTES;
  const access = run.git ? await run.git.access() : null;
  if (access && 'refused' in access) return boundaryResult(`changes the git repository, which cannot be done ahead here: ${access.refused}`);
  const git = access ?? undefined;
  const layer = run.target ? await run.target.layer() : undefined;
  const outcome = await sandbox.run({
    command,
    cwd: input.cwd,
    workspace: { root: context.fs.root, writable: run.writable, ...(layer ? { layer } : {}) },
    limits: { timeoutMs, maxOutputBytes: input.maxOutputBytes, maxWriteBytes },
    ...(context.signal ? { signal: context.signal } : {}),
    ...(git ? { git } : {}),
    ...(run.session ? { session: run.session } : {}),
  });
  if (!outcome.ok) {
    if (outcome.aborted) return failure('The command was cancelled and everything it started was stopped.');
    return forSpeculation ? boundaryResult(`the sandbox could not run it (${outcome.reason})`) : undefined;
  }
  const result = outcome.result;
  try {
    // Only a command the gate let write .git hands its git writes back (a read-only view hands nothing).
    return await settle(result, input, { timeoutMs, maxOutputBytes: input.maxOutputBytes, maxWriteBytes }, forSpeculation, git !== undefined && !git.readOnly);
  } finally {
    await result.dispose();
  }
}

async function settle(result: SandboxResult, input: SandboxedShellInput, limits: { timeoutMs: number; maxOutputBytes: number; maxWriteBytes: number }, forSpeculation: boolean, gitWrites: boolean): Promise<ToolResult> {
  const { run } = input;
  const text = shellResultText(result, limits);
  if (result.blockedBy) {
    if (forSpeculation) return boundaryResult(result.blockedBy.detail, text);
    // The main chat ran it without asking because it looked read-only; the sandbox says otherwise.
    return failure(`${text}\n[The command ran without approval in a sandbox (workspace read-only, no network), and ${result.blockedBy.detail}. To run it for real, ask the user.]`);
  }
  const problem = result.problems[0];
  if (problem) {
    const detail = problem.kind === 'too-large' ? `${problem.detail} (the limit is speculate.sandbox.maxWriteMegabytes, ${formatBytes(limits.maxWriteBytes)})` : problem.detail;
    return boundaryResult(detail, text);
  }
  if (run.git && gitWrites) {
    // A git command that failed (a pre-commit hook, nothing to commit) is where the user takes over, with its output.
    if (result.exitCode !== 0 || result.timedOut) {
      const said = result.output.trim().split('\n').slice(-GIT_FAILURE_LINES).join('\n');
      return boundaryResult(`changes the git repository and failed ahead (${result.timedOut ? 'timed out' : `exit code ${result.exitCode ?? result.signal}`})${said ? `:\n${said}` : ''}`, text);
    }
    if (!result.gitUpper) return boundaryResult('changes the git repository, and its git writes could not be read back', text);
    const absorbed = await run.git.absorb(result.gitUpper);
    // The preview of what Tab would commit is the speculation's to show (its snapshot), not the model's to read.
    if (!absorbed.ok) return boundaryResult(absorbed.detail, text);
  }
  const changed = run.writable && run.target ? await run.target.apply(result.changes, result.startedAt) : [];
  const note = (result.timedOut && run.writable ? '\n[What it had changed when it was stopped was dropped.]' : '');
  const tool: ToolResult = result.exitCode === 0 && !result.timedOut ? success(text + note, changed.length > 0 ? changed : undefined) : { ...failure(text + note), ...(changed.length > 0 ? { filesChanged: changed } : {}) };
  return { ...tool, sandboxed: { writable: run.writable, changed } };
}
