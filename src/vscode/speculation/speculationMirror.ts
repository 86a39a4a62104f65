// Mirrors the current speculation into the workbench: the context keys its commands and buttons
// depend on, the speculation: file system (exactly the current run), and the status bar.
import type { ChatSession } from '../../core/session';
import { setContextKey } from '../common/contextKeys';
import { closeSpeculationTabs } from './diffPreview';
import type { SpeculationFileSystemProvider } from './speculationFs';
import type { SpeculationStatusBar } from './statusBar';

type OverlayListener = (paths: string[]) => void;

export class SpeculationMirror {
  /** The run the speculation: file system shows now. */
  private runInFs: string | undefined;

  constructor(
    private readonly fsProvider: SpeculationFileSystemProvider,
    private readonly statusBar: SpeculationStatusBar,
  ) {}

  /** After every speculation event, and when the session closes (undefined). */
  update(session: ChatSession | undefined, folderName: string): void {
    const snapshot = session?.currentSpeculation ?? null;
    const overlay = session?.currentOverlay;
    const active = snapshot !== null && (snapshot.status === 'running' || snapshot.status === 'completed' || snapshot.status === 'boundary');
    setContextKey('speculate.speculationActive', active || (session?.conflictsPending ?? false));
    setContextKey('speculate.speculationHasChanges', active && snapshot.filesWritten.length > 0);
    // The speculation: file system shows exactly the current run; a finished run's URIs go stale.
    if (this.runInFs && this.runInFs !== snapshot?.id) {
      this.fsProvider.removeRun(this.runInFs);
      void closeSpeculationTabs(this.runInFs);
      this.runInFs = undefined;
    }
    if (snapshot && overlay && active && !this.runInFs) {
      const source = {
        fs: overlay,
        ...('onDidChange' in overlay
          ? { onDidChange: (listener: OverlayListener) => (overlay as unknown as { onDidChange(l: OverlayListener): { dispose(): void } }).onDidChange(listener) }
          : {}),
      };
      this.fsProvider.addRun(snapshot.id, { ...source, folder: folderName });
      this.runInFs = snapshot.id;
    }
    if (!snapshot) this.statusBar.update({ state: 'idle' });
    else if (snapshot.status === 'running') this.statusBar.update({ state: 'running', toolCalls: snapshot.toolCalls.filter((c) => c.executed).length });
    else if (snapshot.status === 'completed') this.statusBar.update({ state: 'ready', files: snapshot.filesWritten.length });
    else if (snapshot.status === 'boundary') this.statusBar.update({ state: 'boundary', detail: snapshot.boundary?.detail ?? 'stopped', files: snapshot.filesWritten.length });
    else if (snapshot.status === 'failed') this.statusBar.update({ state: 'failed', error: snapshot.errorReason ?? snapshot.error ?? 'failed' });
    else this.statusBar.update({ state: 'idle' });
  }

  /** Accept found files changed since the speculation copied them: its commands stay enabled. */
  conflictsPending(): void {
    setContextKey('speculate.speculationActive', true);
  }
}
