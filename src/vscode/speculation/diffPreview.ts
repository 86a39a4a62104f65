// Previews a speculation before it is applied: one file opens as a diff (workspace ⇄ speculation:),
// several open together in the multi-file diff editor. Keeps the speculate.speculationDiffOpen
// context key true while such a diff is the active tab, for its Accept / Discard title buttons.
import * as vscode from 'vscode';
import { setContextKey } from '../common/contextKeys';
import { SPECULATION_SCHEME, speculationUri } from './speculationFs';

/** Left side for files that do not exist yet (and right side for files the run deletes). */
export const EMPTY_SCHEME = 'speculate-empty';
export const PREVIEW_TITLE_PREFIX = 'Speculation: ';

export interface PreviewRun {
  id: string;
  /** The name of the workspace folder the run works on (named in its speculation: URIs). */
  folder: string;
  suggestion: string;
  files: { path: string; kind: 'modified' | 'created' | 'deleted' }[];
}

class EmptyDocumentProvider implements vscode.TextDocumentContentProvider {
  provideTextDocumentContent(): string {
    return '';
  }
}

export function registerDiffPreview(context: vscode.ExtensionContext): void {
  context.subscriptions.push(vscode.workspace.registerTextDocumentContentProvider(EMPTY_SCHEME, new EmptyDocumentProvider()));
  const update = () => setContextKey('speculate.speculationDiffOpen', isSpeculationDiffActive());
  context.subscriptions.push(vscode.window.tabGroups.onDidChangeTabs(update), vscode.window.tabGroups.onDidChangeTabGroups(update));
  update();
}

function isSpeculationDiffActive(): boolean {
  const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
  if (!tab) return false;
  if (tab.input instanceof vscode.TabInputTextDiff) return tab.input.modified.scheme === SPECULATION_SCHEME;
  return tab.label.startsWith(PREVIEW_TITLE_PREFIX);
}

function sides(workspaceRoot: vscode.Uri, run: Pick<PreviewRun, 'id' | 'folder'>, file: PreviewRun['files'][number]): [vscode.Uri, vscode.Uri, vscode.Uri] {
  const real = vscode.Uri.joinPath(workspaceRoot, ...file.path.split('/'));
  const empty = vscode.Uri.from({ scheme: EMPTY_SCHEME, path: '/' + file.path });
  const left = file.kind === 'created' ? empty : real;
  const right = file.kind === 'deleted' ? empty : speculationUri(run.id, run.folder, file.path);
  return [real, left, right];
}

/** Opens the preview without taking focus from where the user is typing. */
export async function openSpeculationPreview(workspaceRoot: vscode.Uri, run: PreviewRun): Promise<void> {
  if (run.files.length === 0) {
    void vscode.window.showInformationMessage('Speculate: this speculation has not changed any files yet.');
    return;
  }
  const title = `${PREVIEW_TITLE_PREFIX}${run.suggestion}`;
  if (run.files.length === 1) {
    const [, left, right] = sides(workspaceRoot, run, run.files[0]);
    await vscode.commands.executeCommand('vscode.diff', left, right, `${title} — ${run.files[0].path}`, {
      preserveFocus: true,
      preview: true,
    } satisfies vscode.TextDocumentShowOptions);
    return;
  }
  await vscode.commands.executeCommand('vscode.changes', title, run.files.map((file) => sides(workspaceRoot, run, file)));
}

/** Closes the previews of a run that is gone (accepted or aborted): they could only show an error. */
export async function closeSpeculationTabs(runId: string): Promise<void> {
  const isRun = (uri: vscode.Uri | undefined) => uri?.scheme === SPECULATION_SCHEME && uri.authority === runId;
  const stale = vscode.window.tabGroups.all.flatMap((group) =>
    group.tabs.filter((tab) => {
      const input = tab.input;
      if (input instanceof vscode.TabInputTextDiff) return isRun(input.modified) || isRun(input.original);
      if (input instanceof vscode.TabInputText) return isRun(input.uri);
      return false;
    }),
  );
  if (stale.length > 0) await vscode.window.tabGroups.close(stale, true);
}
