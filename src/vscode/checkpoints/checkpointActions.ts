// What the chat's checkpoint buttons and "Speculate: Undo Last Change" do: plan the undo, ask about
// files changed since (in the chat, with a diff per file), undo or redo, rewind to an earlier point.
import * as vscode from 'vscode';
import type { RestoreConflict, RestorePlan } from '../../core/checkpoints';
import type { ChatSession } from '../../core/session';
import type { TranscriptItem, UndoConflictResolution, UndoDirection, WebviewToHost } from '../../shared/protocol';
import { messageTypeGuard, unhandledMessage } from '../common/unhandledMessage';
import { checkpointUri } from './checkpointDocuments';
import { openCheckpointChanges } from './checkpointChanges';
import { EMPTY_SCHEME } from '../speculation/diffPreview';

/** The chat's side of the checkpoint actions: the presenter implements it. */
export interface CheckpointTranscript {
  /** The turn-end line `id`, if it is in this chat. */
  turnEndItem(id: string): Extract<TranscriptItem, { kind: 'turnEnd' }> | undefined;
  /** The checkpoints after the item `itemId` that are not undone, newest first. */
  checkpointsAfter(itemId: string): string[];
  /** Shows the files an undo (or redo) found changed since; returns the block's id. */
  undoConflicts(checkpointId: string, direction: UndoDirection, conflicts: readonly RestoreConflict[]): string;
  undoConflictResolved(id: string, path: string, resolution: UndoConflictResolution): void;
}

export interface CheckpointActionsDeps {
  session(): ChatSession | undefined;
  presenter: CheckpointTranscript;
  /** The workspace folder the checkpoints belong to. */
  workspace(): vscode.Uri | undefined;
  /** Brings the chat into view (before asking there). */
  revealChat(): Promise<void>;
  log(line: string): void;
  /** A checkpoint's Changes review opened (with the files it shows), for per-change undo. */
  changesOpened?(checkpointId: string, paths: string[], state: 'recording' | 'applied' | 'undone'): void;
}

interface PendingQuestion {
  checkpointId: string;
  direction: UndoDirection;
  open: Set<string>;
  answers: Map<string, UndoConflictResolution>;
  done: (answers: Map<string, UndoConflictResolution>) => void;
}

/** The webview's messages this room answers. */
const CHECKPOINT_MESSAGE_TYPES = ['checkpointAction', 'restoreTo', 'undoConflictChoice'] as const;
export type CheckpointMessage = Extract<WebviewToHost, { type: (typeof CHECKPOINT_MESSAGE_TYPES)[number] }>;
export const isCheckpointMessage = messageTypeGuard<CheckpointMessage>(CHECKPOINT_MESSAGE_TYPES);

export class CheckpointActions {
  private readonly questions = new Map<string, PendingQuestion>();
  private busy = false;

  constructor(private readonly deps: CheckpointActionsDeps) {}

  handle(message: CheckpointMessage): Promise<void> {
    switch (message.type) {
      case 'checkpointAction':
        return this.act(message.checkpointId, message.action);
      case 'restoreTo':
        return this.restoreTo(message.turnEndId);
      case 'undoConflictChoice':
        return this.choose(message.conflictId, message.path, message.choice);
      default:
        return unhandledMessage(message, 'checkpoints room');
    }
  }

  private tell(message: string): void {
    void vscode.window.showInformationMessage(`Speculate: ${message}`);
  }

  async act(checkpointId: string, action: 'undo' | 'redo' | 'changes'): Promise<void> {
    if (action === 'changes') {
      const store = this.deps.session()?.checkpointStore;
      const workspace = this.deps.workspace();
      const record = store && workspace ? await openCheckpointChanges(store, checkpointId, workspace) : undefined;
      if (record) this.deps.changesOpened?.(checkpointId, record.files.map((f) => f.path), record.state);
      return;
    }
    await this.exclusive(() => this.rewind(checkpointId, action));
  }

  /** `Speculate: Undo Last Change`: the newest change in this workspace that is not undone. */
  async undoLast(): Promise<void> {
    const store = this.deps.session()?.checkpointStore;
    if (!store) return this.tell('there is no change to undo yet in this workspace.');
    const last = (await store.list()).find((c) => c.state === 'applied');
    if (!last) return this.tell('there is no change to undo: every recorded change is undone already.');
    await this.exclusive(() => this.rewind(last.id, 'undo'));
  }

  /** Restore to here: the later changes undone newest first; the chat rewound too if the user says so. */
  async restoreTo(turnEndId: string): Promise<void> {
    const { presenter } = this.deps;
    const line = presenter.turnEndItem(turnEndId);
    const session = this.deps.session();
    if (!line || !session) return;
    const later = presenter.checkpointsAfter(turnEndId);
    const canRewind = line.historyLength !== undefined && line.historyLength < session.messages.length;
    if (later.length === 0 && !canRewind) return this.tell('nothing changed after this point.');
    const filesOnly = 'Restore Files';
    const withChat = 'Restore Files and Chat';
    const chatOnly = 'Rewind Chat';
    const choices = later.length === 0 ? [chatOnly] : canRewind ? [filesOnly, withChat] : [filesOnly];
    const changes = later.length === 1 ? '1 later change' : `${later.length} later changes`;
    const detail = later.length === 0
      ? 'No file changed after this point; the chat can go back to it (later messages are removed).'
      : `Undoes ${changes} to your files, newest first; files you changed since are asked about, never overwritten.${canRewind ? ' The chat can go back to this point too (later messages are removed).' : ''}`;
    const choice = await vscode.window.showInformationMessage('Restore to here?', { modal: true, detail }, ...choices);
    if (!choice) return;
    await this.exclusive(async () => {
      for (const id of later) {
        if (!(await this.rewind(id, 'undo'))) return;
      }
      if (choice === withChat || choice === chatOnly) {
        const rewound = await session.rewindConversation(line.historyLength ?? session.messages.length);
        if (!rewound.ok) this.tell(rewound.reason);
      }
    });
  }

  /**
   * Edit & resend with "Restore files and send": the changes made after the message are undone
   * first, newest first, with the conflict rule as always. False when one could not be undone.
   */
  async undoBeforeResend(later: readonly string[]): Promise<boolean> {
    let undone = false;
    await this.exclusive(async () => {
      undone = true;
      for (const id of later) {
        if (!(await this.rewind(id, 'undo'))) {
          undone = false;
          return;
        }
      }
    });
    return undone;
  }

  /** A button of the undo conflict block. */
  async choose(conflictId: string, path: string, choice: 'open-diff' | UndoConflictResolution): Promise<void> {
    const question = this.questions.get(conflictId);
    if (!question) return;
    if (choice === 'open-diff') return this.openConflictDiff(question, path);
    if (!question.open.delete(path)) return;
    question.answers.set(path, choice);
    this.deps.presenter.undoConflictResolved(conflictId, path, choice);
    if (question.open.size === 0) {
      this.questions.delete(conflictId);
      question.done(question.answers);
    }
  }

  private async exclusive(work: () => Promise<unknown>): Promise<void> {
    if (this.busy) return this.tell('an undo is still waiting for your answers in the chat (or still running).');
    this.busy = true;
    try {
      await work();
    } finally {
      this.busy = false;
    }
  }

  /** Undo or redo one checkpoint with the conflict rule; true when it went through. */
  private async rewind(checkpointId: string, direction: UndoDirection): Promise<boolean> {
    const session = this.deps.session();
    if (!session) return false;
    const plan: RestorePlan = direction === 'undo' ? await session.planUndo(checkpointId) : await session.planRedo(checkpointId);
    if (!plan.ok) {
      this.tell(plan.message);
      return false;
    }
    const conflicts = [...plan.conflicts, ...this.unsavedEditors(plan.restorable)];
    let force: string[] = [];
    let keep: string[] = [];
    if (conflicts.some((c) => c.canForce)) {
      const answers = await this.ask(checkpointId, direction, conflicts);
      force = [...answers].filter(([, a]) => a === 'restore').map(([p]) => p);
      keep = [...answers].filter(([, a]) => a === 'keep-mine').map(([p]) => p);
    }
    const outcome = direction === 'undo' ? await session.undoCheckpoint(checkpointId, force, keep) : await session.redoCheckpoint(checkpointId, force, keep);
    if (!outcome.ok) {
      this.tell(outcome.message);
      return false;
    }
    await this.showRestored(outcome.restored);
    const late = outcome.conflicts.filter((c) => !keep.includes(c.path) && !conflicts.some((k) => k.path === c.path && !k.canForce));
    if (late.length > 0) this.tell(late.map((c) => c.message).join(' '));
    const unsafe = conflicts.filter((c) => !c.canForce);
    if (unsafe.length > 0) this.tell(unsafe.map((c) => c.message).join(' '));
    return true;
  }

  /** A file with unsaved edits in an editor is the user's work too: asked about like a changed file. */
  private unsavedEditors(paths: readonly string[]): RestoreConflict[] {
    const workspace = this.deps.workspace();
    if (!workspace) return [];
    const dirty = new Set(vscode.workspace.textDocuments.filter((d) => d.isDirty && d.uri.scheme === 'file').map((d) => d.uri.fsPath));
    return paths
      .filter((p) => dirty.has(vscode.Uri.joinPath(workspace, ...p.split('/')).fsPath))
      .map((p) => ({ path: p, reason: 'modified', message: `"${p}" has unsaved changes in an editor; restoring it replaces the file on disk under them.`, canForce: true }));
  }

  private async ask(checkpointId: string, direction: UndoDirection, conflicts: RestoreConflict[]): Promise<Map<string, UndoConflictResolution>> {
    await this.deps.revealChat();
    const conflictId = this.deps.presenter.undoConflicts(checkpointId, direction, conflicts);
    return new Promise((done) => {
      const question: PendingQuestion = { checkpointId, direction, open: new Set(conflicts.filter((c) => c.canForce).map((c) => c.path)), answers: new Map(), done };
      // Files that cannot be restored safely are kept without asking.
      for (const conflict of conflicts.filter((c) => !c.canForce)) {
        question.answers.set(conflict.path, 'keep-mine');
        this.deps.presenter.undoConflictResolved(conflictId, conflict.path, 'keep-mine');
      }
      this.questions.set(conflictId, question);
    });
  }

  private async openConflictDiff(question: PendingQuestion, path: string): Promise<void> {
    const workspace = this.deps.workspace();
    if (!workspace) return;
    const real = vscode.Uri.joinPath(workspace, ...path.split('/'));
    // The version the undo (or redo) would put there, against the file as it is now.
    const side = question.direction === 'undo' ? 'before' : 'after';
    const store = this.deps.session()?.checkpointStore;
    const read = store ? await store.read(question.checkpointId) : undefined;
    const file = read?.ok ? read.record.files.find((f) => f.path === path) : undefined;
    const target = question.direction === 'undo' ? file?.before : read?.ok ? read.record.undo?.paths.find((p) => p.path === path)?.replaced : undefined;
    const left = target?.exists ? checkpointUri(question.checkpointId, side, path) : vscode.Uri.from({ scheme: EMPTY_SCHEME, path: `/${path}` });
    const title = `${path}: ${question.direction === 'undo' ? 'before the change' : 'the undone version'} ⇄ yours`;
    await vscode.commands.executeCommand('vscode.diff', left, real, title, { preserveFocus: true, preview: true } satisfies vscode.TextDocumentShowOptions);
  }

  /**
   * Open editors show the restored content: VS Code reloads a clean document when its file changes
   * on disk; reading it through the file system service makes it notice now rather than later.
   */
  private async showRestored(paths: readonly string[]): Promise<void> {
    const workspace = this.deps.workspace();
    if (!workspace) return;
    const open = new Set(vscode.workspace.textDocuments.map((d) => d.uri.toString()));
    for (const path of paths) {
      const uri = vscode.Uri.joinPath(workspace, ...path.split('/'));
      if (open.has(uri.toString())) await vscode.workspace.fs.stat(uri).then(() => undefined, () => undefined);
    }
  }
}
