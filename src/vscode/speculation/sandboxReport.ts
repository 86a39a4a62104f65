// Which sandbox runs shell commands here, said once per window: in the log, and in the status bar's
// tooltip (namespaces, Landlock, or none and why, with what the user can do about it).
import { describeBackend } from '../../core/sandbox/chosenSandbox';
import type { ShellSandbox } from '../../core/sandbox/shellSandbox';
import type { SpeculationStatusBar } from './statusBar';

export async function reportSandbox(sandbox: ShellSandbox, statusBar: SpeculationStatusBar, log: (line: string) => void): Promise<void> {
  const answer = await sandbox.probe();
  statusBar.sandboxNote = describeBackend(answer);
  if (answer.available && answer.backend === 'landlock') log(`Sandbox: ${describeBackend(answer)}.`);
  else if (answer.available) log(`Sandbox: shell commands run ahead in Linux namespaces over the speculation (${answer.backend}).`);
  else log(`Sandbox not available: ${answer.reason}. Commands that change files stop speculation.${answer.action ? ` ${answer.action}` : ''}`);
}
