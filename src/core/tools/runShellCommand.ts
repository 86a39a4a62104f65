// run_shell_command: a bash command in a workspace directory through context.processRunner, with a
// timeout and an output cap; the approval scheduler and the speculation gate decide whether it runs,
// and one run on a read-only verdict alone gets the environment that verdict assumes.
import { toAbsolute } from '../fs/paths';
import { readOnlyShellEnv } from '../process/readOnlyShellEnv';
import { isShellCommandReadOnly } from '../shell';
import type { Tool } from './types';
import { runInSandbox, shellResultText } from './sandboxedShell';
import { defineTool, displayPath, failure, oneLine, success } from './toolSupport';

export interface ShellToolOptions {
  /** Default 120 s. */
  timeoutMs?: number;
  /** Combined stdout+stderr kept for the model; default 64 KB. */
  maxOutputBytes?: number;
}

export const SHELL_DEFAULT_TIMEOUT_MS = 120_000;
export const SHELL_DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024;

function environment(extra: Record<string, string> | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  return { ...env, ...extra };
}

export function createShellTool(options: ShellToolOptions = {}): Tool {
  const timeoutMs = options.timeoutMs ?? SHELL_DEFAULT_TIMEOUT_MS;
  const maxOutputBytes = options.maxOutputBytes ?? SHELL_DEFAULT_MAX_OUTPUT_BYTES;
  return defineTool({
    name: 'run_shell_command',
    kind: 'shell',
    description:
      `Runs a bash command (bash -c) in the workspace and returns its exit code and combined output. ` +
      `directory sets the working directory (inside the workspace; default the root). Stops after ${Math.round(timeoutMs / 1000)} s; ` +
      `output beyond ${Math.round(maxOutputBytes / 1024)} KB is cut in the middle. Standard input is closed: do not run interactive programs.`,
    properties: {
      command: { type: 'string', description: 'The bash command to run.' },
      description: { type: 'string', description: 'A few words on what the command does, shown to the user (optional).' },
      directory: { type: 'string', description: 'Working directory, relative to the workspace root (optional).' },
    },
    required: ['command'],
    pathArgs: ['directory'],
    summarize(args) {
      const where = typeof args.directory === 'string' && args.directory.trim() !== '' && args.directory.trim() !== '.' ? ` (in ${oneLine(args.directory, 30)})` : '';
      const what = typeof args.description === 'string' && args.description.trim() !== '' ? args.description : args.command;
      return `${oneLine(what)}${where}`;
    },
    async run(args, context) {
      const { fs, processRunner, shellEnv, approvedAsReadOnly, signal } = context;
      const command = args.string('command');
      args.optionalString('description');
      const requested = args.optionalString('directory');
      const dir = await fs.resolve(requested ?? '');
      const info = await fs.stat(dir);
      if (!info) return failure(`Directory not found: ${displayPath(dir)}. Give an existing directory inside the workspace.`);
      if (info.type !== 'directory') return failure(`${dir} is a file; directory must be a folder inside the workspace.`);
      if (!processRunner) return failure('Shell commands are not available here (no process runner is configured).');

      const cwd = toAbsolute(fs.root, dir);
      // The speculation gate decided `sandbox`: the command runs there or not at all.
      if (context.sandboxRun) {
        const ran = await runInSandbox({ command, cwd, context, purpose: 'speculation', timeoutMs, maxOutputBytes, run: context.sandboxRun });
        return ran ?? { ok: false, output: '', boundary: 'the sandbox could not run it' };
      }
      let env = environment(shellEnv);
      if (approvedAsReadOnly) {
        // Checked again here, where the real working directory is known and just before it runs:
        // the verdict that let it run may have been given for another folder or an older tree.
        const verdict = await isShellCommandReadOnly(command, { workspaceRoot: fs.root, cwd, pathValue: env.PATH });
        if (!verdict.readOnly) {
          return failure(`The command was not run: it would run without approval, but here it is not read-only (${verdict.reason}). Ask the user to run it.`);
        }
        // A second line behind the classifier: where a sandbox is available, the command runs in it
        // with the workspace read-only and no network, so a misjudged command can neither write nor phone home.
        const sandboxed = await runInSandbox({ command, cwd, context, purpose: 'unattended', timeoutMs, maxOutputBytes, run: { writable: false } });
        if (sandboxed) return sandboxed;
        const safe = await readOnlyShellEnv({ env, workspaceRoot: fs.root });
        if (signal?.aborted) return failure('The command was cancelled before it started.');
        if (!safe.ok) {
          return failure(`The command was not run: it may run without approval only in a safe environment, and ${safe.reason}. Ask the user to run it.`);
        }
        env = safe.env;
      }
      const result = await processRunner.run(command, { cwd, timeoutMs, maxOutputBytes, signal, env });
      if (signal?.aborted) return failure('The command was cancelled and everything it started was stopped.');

      const text = shellResultText(result, { timeoutMs, maxOutputBytes });
      return result.exitCode === 0 && !result.timedOut ? success(text) : failure(text);
    },
  });
}

export const runShellCommandTool = createShellTool();
