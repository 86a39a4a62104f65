// The sandbox floor's front: the ShellSandbox port and the one sandbox of this process (probed once,
// cached): Linux namespaces where the machine has them, Landlock + seccomp where it refuses them,
// and a sandbox that says why not elsewhere.
import { ChosenSandbox, sandboxChoice } from './chosenSandbox';
import { LandlockSandbox } from './landlockSandbox';
import { LinuxSandbox, type LinuxSandboxOptions } from './linuxSandbox';
import type { SandboxAvailability, SandboxOutcome, ShellSandbox } from './shellSandbox';

export * from './shellSandbox';
export { LinuxSandbox, type LinuxSandboxOptions } from './linuxSandbox';
export { LandlockSandbox, type LandlockSandboxOptions } from './landlockSandbox';
export { ChosenSandbox, describeBackend, sandboxChoice, type SandboxChoice } from './chosenSandbox';
export { formatBytes } from './readback';

/** A sandbox that never runs anything: settings turned it off, or a test needs the not-available path. */
export class UnavailableSandbox implements ShellSandbox {
  constructor(private readonly reason: string, private readonly action: string | null = null) {}

  probe(): Promise<SandboxAvailability> {
    return Promise.resolve({ available: false, reason: this.reason, action: this.action });
  }

  run(): Promise<SandboxOutcome> {
    return Promise.resolve({ ok: false, reason: this.reason, aborted: false });
  }
}

let shared: ShellSandbox | undefined;

/** The process's sandbox: one probe per process, whoever asks first (the extension, the CLI); SPECULATE_SANDBOX forces a backend. */
export function sharedShellSandbox(options?: LinuxSandboxOptions): ShellSandbox {
  shared ??= new ChosenSandbox(new LinuxSandbox(options), new LandlockSandbox(options), sandboxChoice(process.env.SPECULATE_SANDBOX));
  return shared;
}
