// An edit waiting for approval shows its diff: the tool's own preview (the one the approval's diff
// text comes from) gives the exact bytes it would write, and the diff opens beside the chat without
// taking the focus.
import * as vscode from 'vscode';
import type { ApprovalRequest } from '../core/chat/approvals';
import type { WorkspaceServices } from '../core/workspaceServices';
import { PROPOSED_SCHEME, proposedUri, type CheckpointDocumentProvider } from './checkpointDocuments';
import { EMPTY_SCHEME } from './diffPreview';

export interface ApprovalDiffDeps {
  services(): WorkspaceServices | undefined;
  workspace(): vscode.Uri | undefined;
  documents: CheckpointDocumentProvider;
  log(line: string): void;
}

export class ApprovalDiffs {
  private counter = 0;

  constructor(private readonly deps: ApprovalDiffDeps) {}

  /**
   * Opens the diff of a write the user is asked about; resolves with a function that closes it
   * (when answered), or undefined when there is nothing to show (not a write, or the call would fail).
   */
  async open(request: ApprovalRequest): Promise<(() => Promise<void>) | undefined> {
    if (request.kind !== 'write') return undefined;
    const services = this.deps.services();
    const workspace = this.deps.workspace();
    const tool = services?.tools.get(request.tool);
    if (!services || !workspace || !tool?.preview) return undefined;
    const preview = await tool.preview(request.args, { ...services.toolContext, ...(request.signal ? { signal: request.signal } : {}) }).catch((error: unknown) => {
      this.deps.log(`the diff of ${request.tool} could not be prepared: ${String(error)}`);
      return undefined;
    });
    // No preview: the call would fail when it runs, and says why then.
    if (!preview || request.signal?.aborted) return undefined;
    const key = `approval-${++this.counter}`;
    this.deps.documents.propose(key, new Map([[preview.path, preview.after]]));
    const real = vscode.Uri.joinPath(workspace, ...preview.path.split('/'));
    const left = preview.before ? real : vscode.Uri.from({ scheme: EMPTY_SCHEME, path: `/${preview.path}` });
    await vscode.commands.executeCommand('vscode.diff', left, proposedUri(key, preview.path), `${preview.path}: proposed by ${request.tool} — Allow or Deny in the chat`, {
      preserveFocus: true,
      preview: true,
    } satisfies vscode.TextDocumentShowOptions);
    return async () => {
      this.deps.documents.forget(key);
      const tabs = vscode.window.tabGroups.all.flatMap((group) =>
        group.tabs.filter((tab) => tab.input instanceof vscode.TabInputTextDiff && tab.input.modified.scheme === PROPOSED_SCHEME && tab.input.modified.authority === key),
      );
      if (tabs.length > 0) await vscode.window.tabGroups.close(tabs, true);
    };
  }
}
