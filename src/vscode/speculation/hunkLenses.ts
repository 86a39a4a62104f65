// Keep / Drop on each change of a speculated file: a CodeLens pair above every hunk of a
// `speculation:` document (the right side of the preview diff), and the same two commands from the
// keyboard for the change at the cursor. Drop rewrites the overlay's file without the change, so the
// diff updates itself; Keep only marks the change reviewed (Tab applies it either way).
import * as vscode from 'vscode';
import { describeHunk, type Hunk } from '../../core/checkpoints/hunks';
import type { ChatSession } from '../../core/session';
import { SPECULATION_SCHEME } from './speculationFs';

export interface HunkLensDeps {
  session(): ChatSession | undefined;
  /** A hunk was dropped: the review list's "n of m changes kept" changed. */
  onDropped(): void;
  log(line: string): void;
}

/** Which run and file a `speculation:` URI shows: speculation://<run>/<folder>/<path>. */
export function hunkTarget(uri: vscode.Uri): { runId: string; path: string } | undefined {
  if (uri.scheme !== SPECULATION_SCHEME) return undefined;
  const [, ...rest] = uri.path.replace(/^\/+/, '').split('/');
  const path = rest.join('/');
  return path === '' ? undefined : { runId: uri.authority, path };
}

/**
 * The hunk a cursor on `line` (0-based) is in, else the nearest after it, else the last; `side` says
 * which text the line is of: the speculated one (right) or the workspace's (left of the diff).
 */
export function hunkAtLine(hunks: readonly Hunk[], line: number, side: 'new' | 'old' = 'new'): Hunk | undefined {
  const start = (hunk: Hunk) => (side === 'new' ? hunk.newStart : hunk.oldStart);
  const length = (hunk: Hunk) => (side === 'new' ? hunk.newLines.length : hunk.oldLines.length);
  const inside = hunks.find((hunk) => line >= start(hunk) && line < start(hunk) + Math.max(1, length(hunk)));
  return inside ?? hunks.find((hunk) => start(hunk) >= line) ?? hunks[hunks.length - 1];
}

/**
 * The speculated file an editor shows, and which side of its diff the editor is: the right side
 * is the `speculation:` document itself; on the left, the workspace file of a diff whose right side
 * is visible next to it.
 */
function locate(editor: vscode.TextEditor): { target: { runId: string; path: string }; side: 'new' | 'old' } | undefined {
  const direct = hunkTarget(editor.document.uri);
  if (direct) return { target: direct, side: 'new' };
  const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
  const input = tab?.input;
  if (!(input instanceof vscode.TabInputTextDiff) || input.original.toString() !== editor.document.uri.toString()) return undefined;
  const target = hunkTarget(input.modified);
  return target ? { target, side: 'old' } : undefined;
}

interface HunkArgs {
  runId: string;
  path: string;
  hunkId: string;
}

function isHunkArgs(value: unknown): value is HunkArgs {
  const v = value as Partial<HunkArgs> | undefined;
  return typeof v?.runId === 'string' && typeof v.path === 'string' && typeof v.hunkId === 'string';
}

export class SpeculationHunkLenses implements vscode.CodeLensProvider, vscode.Disposable {
  private readonly changeEmitter = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changeEmitter.event;
  /** Changes the user kept, per run: `path\0hunkId`. */
  private readonly kept = new Map<string, Set<string>>();

  constructor(private readonly deps: HunkLensDeps) {}

  /** The speculation changed (a write, a drop, a new run): the lenses are recomputed. */
  refresh(): void {
    this.changeEmitter.fire();
  }

  async provideCodeLenses(document: vscode.TextDocument): Promise<vscode.CodeLens[]> {
    const target = hunkTarget(document.uri);
    const session = this.deps.session();
    const run = session?.currentSpeculation;
    // While the run still writes, its changes are not final: the lenses come when it has finished.
    if (!target || !session || run?.id !== target.runId || run.status === 'running') return [];
    let hunks: Hunk[];
    try {
      hunks = await session.speculationHunks(target.runId, target.path);
    } catch {
      // A created, deleted or binary file, or a run just gone: no per-change lenses (the whole file is kept or left out).
      return [];
    }
    const kept = this.kept.get(target.runId) ?? new Set<string>();
    const total = hunks.length;
    return hunks.flatMap((hunk, index) => {
      const line = Math.min(hunk.newStart, Math.max(0, document.lineCount - 1));
      const range = new vscode.Range(line, 0, line, 0);
      const args: HunkArgs = { runId: target.runId, path: target.path, hunkId: hunk.id };
      const where = `change ${index + 1} of ${total}, ${describeHunk(hunk)}`;
      const isKept = kept.has(`${target.path}\0${hunk.id}`);
      return [
        new vscode.CodeLens(range, { title: isKept ? '$(check) Kept' : '$(check) Keep', tooltip: `Keep ${where}: Tab applies it`, command: 'speculate.keepHunk', arguments: [args] }),
        new vscode.CodeLens(range, { title: '$(discard) Drop', tooltip: `Drop ${where}: Tab leaves it out`, command: 'speculate.dropHunk', arguments: [args] }),
      ];
    });
  }

  /** The hunk a command acts on: the lens's, or the one at the cursor of the speculated file in front. */
  private async resolve(value: unknown): Promise<(HunkArgs & { hunk: Hunk; total: number }) | undefined> {
    const session = this.deps.session();
    if (!session) return undefined;
    let args = isHunkArgs(value) ? value : undefined;
    if (!args) {
      const editor = vscode.window.activeTextEditor;
      const located = editor && locate(editor);
      if (!editor || !located) {
        void vscode.window.showInformationMessage('Speculate: put the cursor in a change of a speculation diff to keep or drop it.');
        return undefined;
      }
      const { target, side } = located;
      const hunk = hunkAtLine(await session.speculationHunks(target.runId, target.path), editor.selection.active.line, side);
      if (!hunk) {
        void vscode.window.showInformationMessage(`Speculate: ${target.path} has no change left to keep or drop.`);
        return undefined;
      }
      args = { ...target, hunkId: hunk.id };
    }
    const hunks = await session.speculationHunks(args.runId, args.path);
    const index = hunks.findIndex((candidate) => candidate.id === args.hunkId);
    if (index < 0) throw new Error(`That change of ${args.path} is no longer there; look at the diff again.`);
    return { ...args, hunk: hunks[index], total: hunks.length };
  }

  /** Marks a change as kept (it stays in what Tab applies). */
  async keep(value?: unknown): Promise<void> {
    await this.run(async () => {
      const target = await this.resolve(value);
      if (!target) return;
      const kept = this.kept.get(target.runId) ?? new Set<string>();
      kept.add(`${target.path}\0${target.hunkId}`);
      this.kept.set(target.runId, kept);
      this.refresh();
      vscode.window.setStatusBarMessage(`Speculate: kept ${describeHunk(target.hunk)} of ${target.path}`, 4000);
    });
  }

  /** Drops a change: the speculated file is rewritten without it, and Tab leaves it out. */
  async drop(value?: unknown): Promise<void> {
    await this.run(async () => {
      const session = this.deps.session();
      const target = await this.resolve(value);
      if (!session || !target) return;
      const record = await session.dropSpeculationHunk(target.runId, target.path, target.hunkId);
      this.refresh();
      this.deps.onDropped();
      const left = record.total - record.dropped.length;
      // A notification is read out by screen readers; the diff itself changes silently.
      void vscode.window.showInformationMessage(`Speculate: dropped ${describeHunk(target.hunk)} of ${target.path}; ${left} of ${record.total} changes kept.`);
    });
  }

  private async run(action: () => Promise<void>): Promise<void> {
    try {
      await action();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.deps.log(`hunk review: ${message}`);
      void vscode.window.showWarningMessage(`Speculate: ${message}`);
    }
  }

  /** A run ended: its kept marks go with it. */
  forget(runId: string | undefined): void {
    for (const id of [...this.kept.keys()]) if (id !== runId) this.kept.delete(id);
    this.refresh();
  }

  dispose(): void {
    this.changeEmitter.dispose();
  }
}

/** Registers the lenses and the two commands; returns the provider so the controller can refresh it. */
export function registerHunkLenses(context: vscode.ExtensionContext, deps: HunkLensDeps): SpeculationHunkLenses {
  const lenses = new SpeculationHunkLenses(deps);
  context.subscriptions.push(
    lenses,
    vscode.languages.registerCodeLensProvider({ scheme: SPECULATION_SCHEME }, lenses),
    vscode.commands.registerCommand('speculate.keepHunk', (args?: unknown) => lenses.keep(args)),
    vscode.commands.registerCommand('speculate.dropHunk', (args?: unknown) => lenses.drop(args)),
  );
  return lenses;
}
