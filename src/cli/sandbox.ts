// The sandbox the CLI's commands use: the process's one (probed once), unless SPECULATE_SANDBOX=off
// turns it off, as speculate.sandbox.enabled does in the editor.
import { sharedShellSandbox, type ShellSandbox } from '../core/sandbox';

export function cliShellSandbox(env: NodeJS.ProcessEnv = process.env): ShellSandbox | undefined {
  return env.SPECULATE_SANDBOX === 'off' ? undefined : sharedShellSandbox();
}
