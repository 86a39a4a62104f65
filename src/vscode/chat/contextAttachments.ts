// The editor side of `@` context: the completion list (workspace files from VS Code's file search,
// ranked fuzzily; @selection; @problems), and the chips waiting above the input until they are sent.
import * as vscode from 'vscode';
import { attachmentLabel, readFileAttachment, type Attachment, type Problem } from '../../core/context/attachments';
import { resolveInsideWorkspace } from '../../core/fs/paths';
import type { WorkspaceFs } from '../../core/fs/workspaceFs';
import type { AttachmentKind, AttachmentView, MentionItem } from '../../shared/protocol';
import { rankPaths } from './fuzzyMatch';

/** How many files the list offers at once. */
const MAX_FILE_ITEMS = 30;
/** VS Code's file search is asked for at most this many files; the list is kept a short while. */
const MAX_FILES_SEARCHED = 20_000;
const FILE_LIST_TTL_MS = 10_000;
const MAX_PROBLEMS = 50;

/** A chip before sending: a file is read when the message is sent; selection and problems as picked. */
type Pending = { kind: 'file'; path: string } | { kind: 'captured'; attachment: Attachment };

export type AttachResult = { ok: true; view: AttachmentView } | { ok: false; reason: string };

export interface ContextAttachmentsDeps {
  folder: () => vscode.WorkspaceFolder | undefined;
  /** The workspace's file system (paths checked, symlinks resolved), once the session has one. */
  fs: () => WorkspaceFs | undefined;
}

const SEVERITY: Record<vscode.DiagnosticSeverity, Problem['severity']> = {
  [vscode.DiagnosticSeverity.Error]: 'error',
  [vscode.DiagnosticSeverity.Warning]: 'warning',
  [vscode.DiagnosticSeverity.Information]: 'info',
  [vscode.DiagnosticSeverity.Hint]: 'hint',
};

export class ContextAttachments {
  private readonly pending = new Map<string, Pending>();
  private counter = 0;
  private files: { at: number; paths: Promise<string[]> } | undefined;
  /** The last text editor the user was in: the chat input has the focus when @selection is picked. */
  private lastEditor: vscode.TextEditor | undefined = vscode.window.activeTextEditor;
  private readonly subscription = vscode.window.onDidChangeActiveTextEditor((editor) => {
    if (editor) this.lastEditor = editor;
  });

  constructor(private readonly deps: ContextAttachmentsDeps) {}

  private editor(): vscode.TextEditor | undefined {
    const editor = vscode.window.activeTextEditor ?? this.lastEditor;
    return editor && !editor.document.isClosed ? editor : undefined;
  }

  private relative(uri: vscode.Uri): string | undefined {
    const folder = this.deps.folder();
    if (!folder) return undefined;
    // In a remote window the explorer names the host's files vscode-remote://<this remote>/path.
    const sameMachine = uri.scheme === 'vscode-remote' && folder.uri.scheme === 'file';
    if (!sameMachine && (uri.scheme !== folder.uri.scheme || uri.authority !== folder.uri.authority)) return undefined;
    const root = folder.uri.path.replace(/\/$/, '');
    return uri.path.startsWith(`${root}/`) ? uri.path.slice(root.length + 1) : undefined;
  }

  private workspaceFiles(): Promise<string[]> {
    if (!this.files || Date.now() - this.files.at > FILE_LIST_TTL_MS) {
      const folder = this.deps.folder();
      const paths = folder
        ? Promise.resolve(vscode.workspace.findFiles(new vscode.RelativePattern(folder, '**/*'), undefined, MAX_FILES_SEARCHED)).then((uris) =>
            uris.map((uri) => this.relative(uri)).filter((p): p is string => p !== undefined),
          )
        : Promise.resolve([]);
      this.files = { at: Date.now(), paths };
    }
    return this.files.paths;
  }

  /** The `@` list for what the user typed after the `@`. */
  async mentions(query: string): Promise<MentionItem[]> {
    const items: MentionItem[] = [];
    const q = query.toLowerCase();
    const editor = this.editor();
    const editorPath = editor ? this.relative(editor.document.uri) : undefined;
    if ('selection'.startsWith(q)) {
      const selection = editor?.selection;
      items.push({
        kind: 'selection',
        label: '@selection',
        detail: editorPath && selection && !selection.isEmpty ? `lines ${selection.start.line + 1}–${selection.end.line + 1} of ${editorPath}` : 'select some text in an editor first',
      });
    }
    if ('problems'.startsWith(q)) {
      const count = editor ? vscode.languages.getDiagnostics(editor.document.uri).length : 0;
      items.push({ kind: 'problems', label: '@problems', detail: editorPath ? `${count} in ${editorPath}` : 'open a file in an editor first' });
    }
    for (const path of rankPaths(await this.workspaceFiles(), query, MAX_FILE_ITEMS)) {
      const slash = path.lastIndexOf('/');
      items.push({ kind: 'file', label: path.slice(slash + 1), detail: slash > 0 ? path.slice(0, slash) : '', path });
    }
    return items;
  }

  /** A chip from the `@` list, the attach picker or a dropped file (a path or a URI). */
  async attach(kind: AttachmentKind, requested?: string): Promise<AttachResult> {
    if (kind === 'file') return this.attachFile(requested ?? '');
    const editor = this.editor();
    const path = editor ? this.relative(editor.document.uri) : undefined;
    if (!editor || !path) return { ok: false, reason: 'Open a file of this workspace in an editor first.' };
    if (kind === 'selection') {
      const selection = editor.selection;
      if (selection.isEmpty) return { ok: false, reason: `Select some text in ${path} first.` };
      // A selection ending at the start of a line does not include that line.
      const endLine = selection.end.character === 0 && selection.end.line > selection.start.line ? selection.end.line : selection.end.line + 1;
      return this.add({ kind: 'captured', attachment: { kind: 'selection', path, startLine: selection.start.line + 1, endLine, text: editor.document.getText(selection) } });
    }
    const problems: Problem[] = vscode.languages
      .getDiagnostics(editor.document.uri)
      .slice(0, MAX_PROBLEMS)
      .map((d) => ({
        line: d.range.start.line + 1,
        column: d.range.start.character + 1,
        severity: SEVERITY[d.severity],
        message: d.message,
        source: [d.source, typeof d.code === 'object' ? String(d.code.value) : d.code === undefined ? '' : String(d.code)].filter(Boolean).join(' '),
      }));
    return this.add({ kind: 'captured', attachment: { kind: 'problems', path, problems } });
  }

  private async attachFile(requested: string): Promise<AttachResult> {
    const folder = this.deps.folder();
    if (!folder) return { ok: false, reason: 'Open a folder first: attachments come from its files.' };
    let candidate = requested;
    if (/^[a-z][a-z0-9+.-]*:/i.test(requested) && !/^[a-z]:[\\/]/i.test(requested)) {
      // A dropped file arrives as a URI; only this workspace's own files are taken.
      let relative: string | undefined;
      try {
        relative = this.relative(vscode.Uri.parse(requested, true));
      } catch {
        relative = undefined;
      }
      if (relative === undefined) return { ok: false, reason: `${requested} is not a file of this workspace, so it was not attached.` };
      candidate = relative;
    }
    const fs = this.deps.fs();
    let path: string;
    try {
      // Through the workspace file system: a symlink out of the workspace is refused like a path.
      path = fs ? await fs.resolve(candidate) : await resolveInsideWorkspace(folder.uri.fsPath, candidate, [folder.uri.fsPath]);
    } catch {
      return { ok: false, reason: `${candidate} is outside the workspace, so it was not attached.` };
    }
    const stat = fs ? await fs.stat(path).catch(() => undefined) : undefined;
    if (fs && stat?.type !== 'file') return { ok: false, reason: stat ? `${path} is a folder; attach the files in it instead.` : `${path} does not exist.` };
    return this.add({ kind: 'file', path });
  }

  private add(pending: Pending): AttachResult {
    const id = `att-${++this.counter}`;
    this.pending.set(id, pending);
    const path = pending.kind === 'file' ? pending.path : pending.attachment.path;
    const label = pending.kind === 'file' ? (path.split('/').pop() ?? path) : attachmentLabel(pending.attachment);
    const line = pending.kind === 'captured' && pending.attachment.kind === 'selection' ? pending.attachment.startLine : undefined;
    return { ok: true, view: { id, kind: pending.kind === 'file' ? 'file' : pending.attachment.kind, label, path, ...(line !== undefined ? { line } : {}) } };
  }

  remove(id: string): void {
    this.pending.delete(id);
  }

  /** The chips sent with a message, read now; each one that cannot be read says why. */
  async take(ids: readonly string[]): Promise<{ attachments: Attachment[]; problems: string[] }> {
    const attachments: Attachment[] = [];
    const problems: string[] = [];
    for (const id of ids) {
      const pending = this.pending.get(id);
      this.pending.delete(id);
      if (!pending) continue;
      if (pending.kind === 'captured') {
        attachments.push(pending.attachment);
        continue;
      }
      const fs = this.deps.fs();
      if (!fs) continue;
      const read = await readFileAttachment(fs, pending.path);
      if (read.ok) attachments.push(read.attachment);
      else problems.push(read.reason);
    }
    return { attachments, problems };
  }

  /** New chat: chips waiting for the old one go. */
  clear(): void {
    this.pending.clear();
  }

  dispose(): void {
    this.subscription.dispose();
  }
}
