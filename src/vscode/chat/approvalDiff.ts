// An edit waiting for approval shows its diff: the tool's own preview (the one the approval's diff
// text comes from) gives the exact bytes it would write, and the diff opens beside the chat without
// taking the focus.
import * as vscode from 'vscode';
import type { ApprovalAnswer, ApprovalPrompter, ApprovalRequest, PartialApproval } from '../../core/chat/approvals';
import { applyHunks, describeHunk, partialEditNote, splitHunks, textForHunks, type Hunk } from '../../core/checkpoints/hunks';
import type { WorkspaceServices } from '../../core/workspaceServices';
import { PROPOSED_SCHEME, proposedUri, type CheckpointDocumentProvider } from '../checkpoints/checkpointDocuments';
import { EMPTY_SCHEME } from '../speculation/diffPreview';
import { hunkAtLine } from '../speculation/hunkLenses';

/** An open approval diff: closes it, and says what the user kept when they dropped some changes. */
export interface ApprovalDiffHandle {
  close(): Promise<void>;
  /** The write to make instead of the tool's, when changes were dropped; undefined otherwise. */
  partial(): PartialApproval['partial'] | undefined;
}

/** One proposal whose changes can be dropped: a text file that exists (a new file is taken whole). */
interface Proposal {
  path: string;
  before: Uint8Array;
  beforeText: string;
  afterText: string;
  hunks: Hunk[];
  dropped: Set<string>;
}

export interface ApprovalDiffDeps {
  services(): WorkspaceServices | undefined;
  workspace(): vscode.Uri | undefined;
  documents: CheckpointDocumentProvider;
  log(line: string): void;
}

/**
 * The chat's approvals with an edit's diff beside the chat while the question is open; allowed with
 * changes dropped in the diff, the kept ones are written and the model is told.
 */
export function approvalWithDiff(chat: { request(request: ApprovalRequest): Promise<ApprovalAnswer> }, diffs: ApprovalDiffs): ApprovalPrompter {
  return {
    request: async (request) => {
      const diff = diffs.open(request).catch(() => undefined);
      try {
        const answer = await chat.request(request);
        const partial = answer === 'deny' ? undefined : (await diff)?.partial();
        return partial ? { answer: 'allow' as const, partial } : answer;
      } finally {
        void diff.then((handle) => handle?.close());
      }
    },
  };
}

export class ApprovalDiffs implements vscode.CodeLensProvider {
  private counter = 0;
  private readonly proposals = new Map<string, Proposal>();
  private readonly changeEmitter = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changeEmitter.event;

  constructor(private readonly deps: ApprovalDiffDeps) {}

  /** Keep / Drop above each change still in the proposed file. */
  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const proposal = document.uri.scheme === PROPOSED_SCHEME ? this.proposals.get(document.uri.authority) : undefined;
    if (!proposal) return [];
    const remaining = proposal.hunks.filter((hunk) => !proposal.dropped.has(hunk.id));
    // Lines of the proposal as it is now (dropped changes are no longer in it).
    const shown = splitHunks(proposal.beforeText, this.contentOf(proposal));
    return shown.flatMap((hunk, index) => {
      const line = Math.min(hunk.newStart, Math.max(0, document.lineCount - 1));
      const range = new vscode.Range(line, 0, line, 0);
      const args = { key: document.uri.authority, hunkId: hunk.id };
      const where = `change ${index + 1} of ${remaining.length}, ${describeHunk(hunk)}`;
      return [
        new vscode.CodeLens(range, { title: '$(check) Keep', tooltip: `Keep ${where}: Allow writes it`, command: 'speculate.keepEditHunk', arguments: [args] }),
        new vscode.CodeLens(range, { title: '$(discard) Drop', tooltip: `Drop ${where}: Allow leaves it out`, command: 'speculate.dropEditHunk', arguments: [args] }),
      ];
    });
  }

  private contentOf(proposal: Proposal): string {
    return applyHunks(proposal.beforeText, proposal.afterText, new Set(proposal.hunks.filter((h) => !proposal.dropped.has(h.id)).map((h) => h.id)), proposal.path);
  }

  /** The proposal and hunk a command acts on: its lens's, or the change at the cursor of a proposed file. */
  private target(value: unknown): { key: string; proposal: Proposal; hunk: Hunk } | undefined {
    let key: string | undefined;
    let hunkId: string | undefined;
    const v = value as { key?: unknown; hunkId?: unknown } | undefined;
    if (typeof v?.key === 'string' && typeof v.hunkId === 'string') ({ key, hunkId } = { key: v.key, hunkId: v.hunkId });
    const editor = vscode.window.activeTextEditor;
    if (!key && editor?.document.uri.scheme === PROPOSED_SCHEME) key = editor.document.uri.authority;
    const proposal = key ? this.proposals.get(key) : undefined;
    if (!key || !proposal) return undefined;
    if (!hunkId && editor) hunkId = hunkAtLine(splitHunks(proposal.beforeText, this.contentOf(proposal)), editor.selection.active.line)?.id;
    const hunk = proposal.hunks.find((candidate) => candidate.id === hunkId);
    return hunk ? { key, proposal, hunk } : undefined;
  }

  /** Drops one change of an edit waiting for approval: the proposed file is shown without it. */
  drop(value?: unknown): void {
    const target = this.target(value);
    if (!target) {
      void vscode.window.showInformationMessage('Speculate: put the cursor in a change of an edit waiting for approval to drop it.');
      return;
    }
    const { key, proposal, hunk } = target;
    if (proposal.hunks.length - proposal.dropped.size <= 1 && !proposal.dropped.has(hunk.id)) {
      void vscode.window.showInformationMessage('Speculate: this is the edit\'s last change; to leave it all out, Deny the edit in the chat.');
      return;
    }
    proposal.dropped.add(hunk.id);
    this.deps.documents.update(key, new Map([[proposal.path, Buffer.from(this.contentOf(proposal), 'utf8')]]));
    this.changeEmitter.fire();
    const kept = proposal.hunks.length - proposal.dropped.size;
    void vscode.window.showInformationMessage(`Speculate: dropped ${describeHunk(hunk)} of ${proposal.path}; Allow writes ${kept} of ${proposal.hunks.length} changes.`);
  }

  /** Keep: the change stays in what Allow writes (said, so the keyboard user hears it). */
  keep(value?: unknown): void {
    const target = this.target(value);
    if (target) vscode.window.setStatusBarMessage(`Speculate: kept ${describeHunk(target.hunk)} of ${target.proposal.path}`, 4000);
  }

  dispose(): void {
    this.changeEmitter.dispose();
  }

  /**
   * Opens the diff of a write the user is asked about; resolves with a function that closes it
   * (when answered), or undefined when there is nothing to show (not a write, or the call would fail).
   */
  async open(request: ApprovalRequest): Promise<ApprovalDiffHandle | undefined> {
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
    const proposal = splittable(preview.path, preview.before, preview.after);
    if (proposal) {
      this.proposals.set(key, proposal);
      this.changeEmitter.fire();
    }
    const real = vscode.Uri.joinPath(workspace, ...preview.path.split('/'));
    const left = preview.before ? real : vscode.Uri.from({ scheme: EMPTY_SCHEME, path: `/${preview.path}` });
    await vscode.commands.executeCommand('vscode.diff', left, proposedUri(key, preview.path), `${preview.path}: proposed by ${request.tool} — Allow or Deny in the chat`, {
      preserveFocus: true,
      preview: true,
    } satisfies vscode.TextDocumentShowOptions);
    return {
      close: async () => {
        this.deps.documents.forget(key);
        this.proposals.delete(key);
        const tabs = vscode.window.tabGroups.all.flatMap((group) =>
          group.tabs.filter((tab) => tab.input instanceof vscode.TabInputTextDiff && tab.input.modified.scheme === PROPOSED_SCHEME && tab.input.modified.authority === key),
        );
        if (tabs.length > 0) await vscode.window.tabGroups.close(tabs, true);
      },
      partial: () => {
        const current = this.proposals.get(key);
        if (!current || current.dropped.size === 0) return undefined;
        const kept = current.hunks.filter((h) => !current.dropped.has(h.id));
        const dropped = current.hunks.filter((h) => current.dropped.has(h.id));
        return { path: current.path, expected: current.before, content: Buffer.from(this.contentOf(current), 'utf8'), note: partialEditNote(current.path, kept, dropped) };
      },
    };
  }
}

/** A proposal with at least two changes of an existing text file; anything else is allowed or denied whole. */
function splittable(path: string, before: Uint8Array | undefined, after: Uint8Array): Proposal | undefined {
  if (!before) return undefined;
  try {
    const beforeText = textForHunks(before, path);
    const afterText = textForHunks(after, path);
    const hunks = splitHunks(beforeText, afterText);
    return hunks.length >= 2 ? { path, before, beforeText, afterText, hunks, dropped: new Set() } : undefined;
  } catch {
    return undefined; // binary: whole
  }
}

export function registerApprovalHunks(context: vscode.ExtensionContext, diffs: ApprovalDiffs): void {
  context.subscriptions.push(
    diffs,
    vscode.languages.registerCodeLensProvider({ scheme: PROPOSED_SCHEME }, diffs),
    vscode.commands.registerCommand('speculate.keepEditHunk', (args?: unknown) => diffs.keep(args)),
    vscode.commands.registerCommand('speculate.dropEditHunk', (args?: unknown) => diffs.drop(args)),
  );
}
