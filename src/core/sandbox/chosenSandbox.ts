// Which backend runs this process's sandboxed commands: Linux namespaces (the overlay, SANDBOX.md's
// recipe) where their probe passes, else Landlock + seccomp (read-only commands only), else none —
// each answer with why. SPECULATE_SANDBOX=off|namespaces|landlock forces one (tests, diagnosis).
import type { SandboxAvailability, SandboxLayer, SandboxLimits, SandboxOutcome, SandboxRunRequest, SandboxSession, ShellSandbox } from './shellSandbox';

export type SandboxChoice = 'auto' | 'off' | 'namespaces' | 'landlock';

/** SPECULATE_SANDBOX's value; anything else is the automatic choice. */
export function sandboxChoice(value: string | undefined): SandboxChoice {
  return value === 'off' || value === 'namespaces' || value === 'landlock' ? value : 'auto';
}

export class ChosenSandbox implements ShellSandbox {
  private chosen: Promise<{ sandbox: ShellSandbox | undefined; availability: SandboxAvailability }> | undefined;

  constructor(
    private readonly namespaces: ShellSandbox,
    private readonly landlock: ShellSandbox,
    private readonly choice: SandboxChoice = 'auto',
  ) {}

  private choose(): Promise<{ sandbox: ShellSandbox | undefined; availability: SandboxAvailability }> {
    this.chosen ??= (async () => {
      if (this.choice === 'off') return { sandbox: undefined, availability: { available: false, reason: 'the sandbox is switched off (SPECULATE_SANDBOX=off)', action: null } };
      if (this.choice === 'landlock') {
        const landlock = await this.landlock.probe();
        return { sandbox: this.landlock, availability: landlock.available ? { ...landlock, why: 'chosen by SPECULATE_SANDBOX=landlock' } : landlock };
      }
      const namespaces = await this.namespaces.probe();
      if (namespaces.available || this.choice === 'namespaces') return { sandbox: this.namespaces, availability: namespaces };
      const landlock = await this.landlock.probe();
      if (landlock.available) return { sandbox: this.landlock, availability: { ...landlock, why: namespaces.reason } };
      // Neither: the namespace reason leads (its action is what gives the full sandbox back).
      return { sandbox: undefined, availability: { ...namespaces, reason: `${namespaces.reason}; and the Landlock fallback cannot run either: ${landlock.reason}` } };
    })();
    return this.chosen;
  }

  async probe(): Promise<SandboxAvailability> {
    return (await this.choose()).availability;
  }

  async run(request: SandboxRunRequest): Promise<SandboxOutcome> {
    const { sandbox, availability } = await this.choose();
    if (!sandbox || !availability.available) return { ok: false, reason: availability.available ? 'no sandbox' : availability.reason, aborted: false };
    return sandbox.run(request);
  }

  async prepareSession(session: SandboxSession, root: string, limits: SandboxLimits, layer?: SandboxLayer): Promise<void> {
    const { sandbox, availability } = await this.choose();
    if (availability.available) await sandbox?.prepareSession?.(session, root, limits, layer);
  }

  async sessionEnded(id: string): Promise<void> {
    const { sandbox } = await this.choose();
    await sandbox?.sessionEnded?.(id);
  }
}

/** The backend in words, for the log, the gate's reasons and the status bar. */
export function describeBackend(availability: SandboxAvailability): string {
  if (!availability.available) return `no sandbox: ${availability.reason}`;
  if (availability.backend === 'linux-namespaces') return 'Linux namespaces over the speculation (commands may write into its overlay)';
  const notes = [availability.why, availability.limitsNote].filter(Boolean).join('; ');
  return `Landlock${availability.abi ? ` ABI ${availability.abi}` : ''} + seccomp (read-only commands only; commands that change files stop speculation${notes ? `; ${notes}` : ''})`;
}
