// An edit waiting for approval shows its diff: the tool runs against a dry-run file system (so the
// right side is exactly what it would write), and the diff opens beside the chat without taking focus.
import * as vscode from 'vscode';
import type { ApprovalRequest } from '../core/chat/approvals';
import { DryRunWorkspaceFs } from '../core/checkpoints/dryRunFs';
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
    if (!services || !workspace || !tool) return undefined;
    const dry = new DryRunWorkspaceFs(services.fs);
    try {
      const result = await tool.execute(request.args, { ...services.toolContext, fs: dry, ...(request.signal ? { signal: request.signal } : {}) });
      if (!result.ok || dry.writes.size === 0) return undefined;
    } catch (error) {
      this.deps.log(`the diff of ${request.tool} could not be prepared: ${String(error)}`);
      return undefined;
    }
    if (request.signal?.aborted) return undefined;
    const key = `approval-${++this.counter}`;
    this.deps.documents.propose(key, dry.writes);
    const triples = await Promise.all(
      [...dry.writes.keys()].map(async (path): Promise<[vscode.Uri, vscode.Uri, vscode.Uri]> => {
        const real = vscode.Uri.joinPath(workspace, ...path.split('/'));
        const exists = (await services.fs.stat(path).catch(() => undefined))?.type === 'file';
        return [real, exists ? real : vscode.Uri.from({ scheme: EMPTY_SCHEME, path: `/${path}` }), proposedUri(key, path)];
      }),
    );
    const [, left, right] = triples[0];
    const path = [...dry.writes.keys()][0];
    await vscode.commands.executeCommand('vscode.diff', left, right, `${path}: proposed by ${request.tool} — Allow or Deny in the chat`, {
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
