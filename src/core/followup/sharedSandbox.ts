// The sandbox a speculation's shell commands share (one per run, SandboxSession): started while the
// model writes its first answer, brought up to date after each tool changed files, and ended, with
// every process in it, when the run ends.
import type { SandboxAvailability, SandboxLayer, SandboxSession } from '../sandbox/shellSandbox';
import { SANDBOX_DEFAULT_MAX_WRITE_BYTES } from '../tools/sandboxedShell';
import type { ToolContext } from '../tools/types';
import type { SpeculationOverlay } from './speculationTypes';

export class SharedSandbox {
  private readonly lifetime = new AbortController();

  constructor(
    /** The speculation's id: the session's. */
    private readonly id: string,
    private readonly toolContext: Omit<ToolContext, 'fs' | 'signal'> | undefined,
  ) {}

  /** The session the shell commands of this run share a sandbox in. */
  get session(): SandboxSession {
    return { id: this.id, lifetime: this.lifetime.signal };
  }

  /**
   * Starts the shared sandbox while the model writes its first answer, so the first command does not
   * wait for it; with `layer`, brings what it shows up to date while the model writes its next one.
   */
  prepare(root: string, layer?: SandboxLayer): void {
    const sandbox = this.toolContext?.shellSandbox;
    const limits = this.toolContext?.sandboxLimits;
    // Of the limits only the process limit (the sandbox's default, as for the commands) shapes the kept sandbox; the rest are each command's own.
    void sandbox?.prepareSession?.(this.session, root, { timeoutMs: limits?.timeoutMs ?? 120_000, maxOutputBytes: 0, maxWriteBytes: limits?.maxWriteBytes ?? SANDBOX_DEFAULT_MAX_WRITE_BYTES }, layer);
  }

  /** After a tool changed files: the shared sandbox takes them in before the next command needs them. */
  refresh(overlay: SpeculationOverlay): void {
    if (!this.toolContext?.shellSandbox?.prepareSession || this.lifetime.signal.aborted) return;
    void overlay.sandboxLayer().then((layer) => this.prepare(overlay.root, layer), () => undefined);
  }

  /** Ends the shared sandbox with the run, and waits until nothing of it is left. */
  async end(): Promise<void> {
    if (this.lifetime.signal.aborted) return;
    this.lifetime.abort();
    await this.toolContext?.shellSandbox?.sessionEnded?.(this.id).catch(() => undefined);
  }

  /** Whether this machine's sandbox can run shell commands (probed once per process, cached); undefined: turned off. */
  async availability(): Promise<SandboxAvailability | undefined> {
    const sandbox = this.toolContext?.shellSandbox;
    if (!sandbox) return undefined;
    try {
      return await sandbox.probe();
    } catch (error) {
      return { available: false, reason: `its probe failed (${error instanceof Error ? error.message : String(error)})`, action: null };
    }
  }
}
