// What the chat's speculation controls and the palette do to the running speculation: accept (also
// of a block the webview already revealed), dismiss, abort, discard, preview its diffs, settle conflicts.
import * as vscode from 'vscode';
import type { ChatSession } from '../../core/session';
import type { WebviewToHost } from '../../shared/protocol';
import { messageTypeGuard, unhandledMessage } from '../common/unhandledMessage';
import { openSpeculationPreview } from './diffPreview';
import { speculationUri } from './speculationFs';
import { acceptRevealed, type RevealHost } from './speculationPreview';
import type { SpeculationReview } from './speculationReview';

/** The webview's messages this room answers. */
const SPECULATION_MESSAGE_TYPES = ['acceptSuggestion', 'acceptRevealed', 'suggestionDismissed', 'previewChanges', 'abortSpeculation', 'conflictChoice', 'excludeFile'] as const;
export type SpeculationMessage = Extract<WebviewToHost, { type: (typeof SPECULATION_MESSAGE_TYPES)[number] }>;
export const isSpeculationMessage = messageTypeGuard<SpeculationMessage>(SPECULATION_MESSAGE_TYPES);

/** The chat's side of the speculation's controls: the presenter implements it. */
export interface SpeculationTranscript extends RevealHost {
  /** A conflict the user settled (Overwrite / Keep Mine) in the chat's conflict block. */
  conflictResolved(path: string, resolution: 'overwrite' | 'keep-mine'): void;
}

export interface SpeculationMessagesDeps {
  session(): ChatSession | undefined;
  /** The folder the session works on (the speculation's files are its files). */
  sessionFolder(): vscode.WorkspaceFolder | undefined;
  presenter: SpeculationTranscript;
  review: SpeculationReview;
  chatView: { readonly visible: boolean; reveal(focus: boolean): Promise<void> };
  /** Opens a workspace file (a changed path on a tool card after Tab). */
  openFile(path: string): Promise<void>;
}

export class SpeculationMessages {
  /** The accept of a block the webview revealed on Tab, while it runs. */
  private revealing: Promise<void> | undefined;

  constructor(private readonly deps: SpeculationMessagesDeps) {}

  async handle(message: SpeculationMessage): Promise<void> {
    switch (message.type) {
      case 'acceptSuggestion':
        if (this.revealing) await this.revealing;
        if (message.suggestionId !== this.deps.presenter.currentSuggestionId) return;
        return this.accept(message.method === 'enter' ? 'enter' : 'tab');
      case 'acceptRevealed':
        return this.acceptRevealed(message.suggestionId, message.seq, message.method === 'enter' ? 'enter' : 'tab');
      case 'suggestionDismissed':
        // The webview shows the next suggestion with a revealed block, before the host does.
        if (this.revealing) await this.revealing;
        if (message.suggestionId !== this.deps.presenter.currentSuggestionId) return;
        this.deps.session()?.dismissSuggestion();
        return;
      case 'previewChanges':
        return this.preview(message.path);
      case 'abortSpeculation':
        return this.abort();
      case 'conflictChoice':
        return this.conflictChoice(message.path, message.choice);
      case 'excludeFile':
        this.deps.review.exclude(message.runId, message.path, message.excluded);
        return;
      default:
        return unhandledMessage(message, 'speculation room');
    }
  }

  private async acceptRevealed(suggestionId: string, seq: number, method: 'tab' | 'enter'): Promise<void> {
    const accepting = acceptRevealed({ session: this.deps.session(), presenter: this.deps.presenter, acceptUsual: () => this.accept(method) }, { suggestionId, seq, method });
    this.revealing = accepting;
    try {
      await accepting;
    } finally {
      if (this.revealing === accepting) this.revealing = undefined;
    }
  }

  /** Tab / palette "Accept Speculation". */
  async accept(method: 'tab' | 'enter' = 'tab'): Promise<void> {
    const session = this.deps.session();
    if (!session || session.visibleSuggestion === null) {
      void vscode.window.showInformationMessage('Speculate: there is no suggestion to accept right now.');
      return;
    }
    await session.acceptSuggestion(method);
  }

  /** Palette "Abort Speculation": the request is cancelled, the overlay deleted, the ghost text goes. */
  async abort(): Promise<void> {
    const session = this.deps.session();
    if (!session) return;
    if (session.conflictsPending) await session.discard();
    else session.dismissSuggestion();
    await session.abortSpeculation('aborted from the palette');
  }

  async discard(): Promise<void> {
    await this.deps.session()?.discard();
  }

  /** The speculation's diffs: one file's, or all of them in the multi-file diff editor. */
  async preview(path?: string): Promise<void> {
    const snapshot = this.deps.session()?.currentSpeculation;
    const folder = this.deps.sessionFolder();
    // A changed path on a tool card after Tab: the change is in the workspace now, so show the file.
    if (path && !snapshot?.filesWritten.some((file) => file.path === path)) {
      await this.deps.openFile(path);
      return;
    }
    if (!snapshot || !folder) {
      void vscode.window.showInformationMessage('Speculate: no speculation is running, so there is nothing to preview.');
      return;
    }
    const files = path ? snapshot.filesWritten.filter((f) => f.path === path) : snapshot.filesWritten;
    await openSpeculationPreview(folder.uri, { id: snapshot.id, folder: folder.name, suggestion: snapshot.suggestion, files });
    // The multi-file diff editor takes focus; give it back to the chat input.
    if (files.length > 1 && this.deps.chatView.visible) await this.deps.chatView.reveal(true);
  }

  private async conflictChoice(path: string, choice: 'open-diff' | 'overwrite' | 'keep-mine'): Promise<void> {
    const session = this.deps.session();
    const folder = this.deps.sessionFolder();
    if (!session || !folder) return;
    if (choice === 'open-diff') {
      const runId = session.currentSpeculation?.id;
      if (!runId) return;
      const real = vscode.Uri.joinPath(folder.uri, ...path.split('/'));
      await vscode.commands.executeCommand('vscode.diff', real, speculationUri(runId, folder.name, path), `${path}: yours ⇄ speculated`, { preserveFocus: true, preview: true });
      return;
    }
    this.deps.presenter.conflictResolved(path, choice);
    await session.resolveConflict(path, choice);
  }
}
