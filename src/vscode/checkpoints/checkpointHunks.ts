// Undo one change of a turn alone: while a turn's "Changes" review is open, each hunk of its files
// has an "Undo this change" CodeLens (the right side of the diff is the workspace file), and
// speculate.undoHunk does the same from the keyboard (the change at the cursor, or a pick of all).
// A change the user edited since is asked about in a modal, never overwritten unasked.
import * as vscode from 'vscode';
import { describeHunk, type Hunk } from '../../core/checkpoints/hunks';
import type { ChatSession } from '../../core/session';
import { setContextKey } from '../common/contextKeys';
import { hunkAtLine } from '../speculation/hunkLenses';

export const CHANGES_TITLE_PREFIX = 'Changes: ';

export interface CheckpointHunkDeps {
  session(): ChatSession | undefined;
  /** The workspace folder the checkpoints belong to. */
  workspace(): vscode.Uri | undefined;
  log(line: string): void;
}

interface Review {
  checkpointId: string;
  paths: Set<string>;
}

interface UndoArgs {
  checkpointId: string;
  path: string;
  hunkId: string;
}

function isUndoArgs(value: unknown): value is UndoArgs {
  const v = value as Partial<UndoArgs> | undefined;
  return typeof v?.checkpointId === 'string' && typeof v.path === 'string' && typeof v.hunkId === 'string';
}

export class CheckpointHunkReview implements vscode.CodeLensProvider, vscode.Disposable {
  private readonly changeEmitter = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changeEmitter.event;
  private review: Review | undefined;
  private busy = false;

  constructor(private readonly deps: CheckpointHunkDeps) {}

  /** The Changes review of a checkpoint opened: its files get per-change lenses. */
  async opened(checkpointId: string, paths: readonly string[]): Promise<void> {
    this.review = { checkpointId, paths: new Set(paths) };
    setContextKey('speculate.checkpointReviewOpen', true);
    // A copy of what the turn wrote, so a later edit of the user's can be told from its changes.
    await this.deps.session()?.rememberCheckpointAfter(checkpointId).catch((error: unknown) => this.deps.log(`keeping the change's copy failed: ${String(error)}`));
    this.changeEmitter.fire();
  }

  /** The tabs changed: the review ends with its last Changes tab. */
  tabsChanged(): void {
    if (!this.review) return;
    const open = vscode.window.tabGroups.all.some((group) => group.tabs.some((tab) => tab.label.startsWith(CHANGES_TITLE_PREFIX)));
    if (open) return;
    this.review = undefined;
    setContextKey('speculate.checkpointReviewOpen', false);
    this.changeEmitter.fire();
  }

  private relative(uri: vscode.Uri): string | undefined {
    const workspace = this.deps.workspace();
    if (!workspace || uri.scheme !== workspace.scheme) return undefined;
    const root = workspace.path.endsWith('/') ? workspace.path : `${workspace.path}/`;
    return uri.path.startsWith(root) ? uri.path.slice(root.length) : undefined;
  }

  async provideCodeLenses(document: vscode.TextDocument): Promise<vscode.CodeLens[]> {
    const review = this.review;
    const path = this.relative(document.uri);
    const session = this.deps.session();
    if (!review || !path || !review.paths.has(path) || !session) return [];
    let hunks: Hunk[];
    try {
      hunks = await session.checkpointHunks(review.checkpointId, path);
    } catch {
      return []; // created, deleted, binary or undone: the whole-change Undo is the way
    }
    return hunks.map((hunk, index) => {
      const line = Math.min(hunk.newStart, Math.max(0, document.lineCount - 1));
      const args: UndoArgs = { checkpointId: review.checkpointId, path, hunkId: hunk.id };
      return new vscode.CodeLens(new vscode.Range(line, 0, line, 0), {
        title: '$(discard) Undo this change',
        tooltip: `Undo change ${index + 1} of ${hunks.length} (${describeHunk(hunk)}) alone; the others stay`,
        command: 'speculate.undoHunk',
        arguments: [args],
      });
    });
  }

  /** speculate.undoHunk: the lens's change, the one at the cursor, or one picked from the review's list. */
  async undo(value?: unknown): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const args = isUndoArgs(value) ? value : await this.choose();
      if (args) await this.undoOne(args);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.deps.log(`undo one change: ${message}`);
      void vscode.window.showWarningMessage(`Speculate: ${message}`);
    } finally {
      this.busy = false;
    }
  }

  private async choose(): Promise<UndoArgs | undefined> {
    const review = this.review;
    const session = this.deps.session();
    if (!review || !session) {
      void vscode.window.showInformationMessage('Speculate: open a turn\'s Changes (on its line in the chat) to undo one of its changes.');
      return undefined;
    }
    const editor = vscode.window.activeTextEditor;
    const here = editor && this.relative(editor.document.uri);
    if (editor && here && review.paths.has(here)) {
      const hunk = hunkAtLine(await session.checkpointHunks(review.checkpointId, here), editor.selection.active.line);
      if (hunk) return { checkpointId: review.checkpointId, path: here, hunkId: hunk.id };
    }
    const items: (vscode.QuickPickItem & { args: UndoArgs })[] = [];
    for (const path of [...review.paths].sort()) {
      const hunks = await session.checkpointHunks(review.checkpointId, path).catch(() => [] as Hunk[]);
      for (const hunk of hunks) {
        const first = (hunk.newLines[0] ?? hunk.oldLines[0] ?? '').trim();
        items.push({ label: `${path}: ${describeHunk(hunk)}`, description: `+${hunk.newLines.length} −${hunk.oldLines.length}`, detail: first.slice(0, 120), args: { checkpointId: review.checkpointId, path, hunkId: hunk.id } });
      }
    }
    if (items.length === 0) {
      void vscode.window.showInformationMessage('Speculate: this change has no separate parts to undo; use Undo on its line for the whole change.');
      return undefined;
    }
    const picked = await vscode.window.showQuickPick(items, { title: 'Undo one change', placeHolder: 'The change to undo (the others stay)' });
    return picked?.args;
  }

  private async undoOne(args: UndoArgs): Promise<void> {
    const session = this.deps.session();
    if (!session) return;
    let overwrite = this.isDirty(args.path);
    if (overwrite) {
      // Unsaved edits are the user's work too: asked about like edits on disk.
      if (!(await this.confirm(`"${args.path}" has unsaved changes in an editor; undoing this change replaces the file on disk under them.`))) return;
    }
    let outcome = await session.undoCheckpointHunk(args.checkpointId, args.path, args.hunkId, { overwrite });
    if (!outcome.ok && outcome.reason === 'changed' && !overwrite) {
      if (!(await this.confirm(outcome.message))) return;
      overwrite = true;
      outcome = await session.undoCheckpointHunk(args.checkpointId, args.path, args.hunkId, { overwrite });
    }
    if (!outcome.ok) {
      void vscode.window.showWarningMessage(`Speculate: ${outcome.message}`);
      return;
    }
    this.changeEmitter.fire();
    void vscode.window.showInformationMessage(`Speculate: undid ${describeHunk(outcome.hunk)} of ${args.path}; its other changes stay. The chat has an Undo for this too.`);
  }

  private async confirm(message: string): Promise<boolean> {
    const anyway = 'Undo Anyway';
    const choice = await vscode.window.showWarningMessage(message, { modal: true, detail: 'Keep yours to leave the file as it is.' }, anyway, 'Keep Mine');
    return choice === anyway;
  }

  private isDirty(path: string): boolean {
    const workspace = this.deps.workspace();
    if (!workspace) return false;
    const uri = vscode.Uri.joinPath(workspace, ...path.split('/')).toString();
    return vscode.workspace.textDocuments.some((document) => document.isDirty && document.uri.toString() === uri);
  }

  dispose(): void {
    this.changeEmitter.dispose();
  }
}

export function registerCheckpointHunks(context: vscode.ExtensionContext, deps: CheckpointHunkDeps): CheckpointHunkReview {
  const review = new CheckpointHunkReview(deps);
  context.subscriptions.push(
    review,
    vscode.languages.registerCodeLensProvider({ scheme: 'file' }, review),
    vscode.commands.registerCommand('speculate.undoHunk', (args?: unknown) => review.undo(args)),
    vscode.window.tabGroups.onDidChangeTabs(() => review.tabsChanged()),
  );
  return review;
}
