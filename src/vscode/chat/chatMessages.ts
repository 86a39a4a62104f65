// What the chat view's own controls ask of the host: send, stop, retry, edit & resend, regenerate,
// attachments and mentions, links and files, the model pickers, the folder, the notices' buttons.
import * as vscode from 'vscode';
import { resolveInsideWorkspace } from '../../core/fs/paths';
import type { ChatSession } from '../../core/session';
import type { WorkspaceServices } from '../../core/workspaceServices';
import type { ModelRole, WebviewToHost } from '../../shared/protocol';
import { messageTypeGuard, unhandledMessage } from '../common/unhandledMessage';
import type { CheckpointActions } from '../checkpoints/checkpointActions';
import type { HistoryActions } from '../history/historyActions';
import { NO_ENDPOINT_ACTIONS, NO_ENDPOINT_MESSAGE, type Endpoint, type SettingsLlmClient } from '../setup/endpoint';
import { updateSetting } from '../setup/settings';
import { runChatAction } from './chatActions';
import type { ChatFolder } from './chatFolder';
import type { ChatPresenter } from './chatPresenter';
import type { ContextAttachments } from './contextAttachments';

/** The webview's messages this room answers. */
const CHAT_VIEW_MESSAGE_TYPES = [
  'ready',
  'submit',
  'typing',
  'approvalAnswer',
  'stopTurn',
  'retry',
  'newChat',
  'openFile',
  'openLink',
  'copyText',
  'chatAction',
  'editMessage',
  'regenerate',
  'mentionQuery',
  'attach',
  'removeAttachment',
  'pickAttachment',
  'listModels',
  'selectModel',
  'pickFolder',
] as const;
export type ChatViewMessage = Extract<WebviewToHost, { type: (typeof CHAT_VIEW_MESSAGE_TYPES)[number] }>;
export const isChatViewMessage = messageTypeGuard<ChatViewMessage>(CHAT_VIEW_MESSAGE_TYPES);

export interface ChatMessagesDeps {
  session(): ChatSession | undefined;
  /** The session for the chat's folder, created on first use. */
  ensureSession(): Promise<ChatSession | undefined>;
  services(): WorkspaceServices | undefined;
  /** The folder the chat works on (the session's once the chat has begun). */
  workingFolder(): vscode.WorkspaceFolder | undefined;
  endpoint(): Endpoint | undefined;
  fastModel(): string;
  trusted(): boolean;
  llm: SettingsLlmClient;
  presenter: ChatPresenter;
  attachments: ContextAttachments;
  checkpoints: CheckpointActions;
  history: HistoryActions;
  folder: ChatFolder;
  chatView: { reveal(focus: boolean): Promise<void> };
}

export class ChatMessages {
  constructor(private readonly deps: ChatMessagesDeps) {}

  async handle(message: ChatViewMessage): Promise<void> {
    const { presenter } = this.deps;
    switch (message.type) {
      case 'ready':
        // The open chat is restored when the session starts, so the first picture is the right one.
        if (this.deps.folder.current) await this.deps.ensureSession();
        presenter.sendInit();
        return;
      case 'submit':
        return this.submit(message.text, message.attachments ?? []);
      case 'typing':
        this.deps.session()?.setUserTyping(message.hasText);
        return;
      case 'approvalAnswer':
        presenter.answerApproval(message.id, message.decision);
        return;
      case 'stopTurn':
        this.deps.session()?.stop();
        return;
      case 'retry':
        await this.deps.session()?.retry();
        return;
      case 'newChat':
        return this.newChat();
      case 'openFile':
        return this.openFile(message.path, message.line);
      case 'openLink':
        if (/^https?:\/\//i.test(message.url)) await vscode.env.openExternal(vscode.Uri.parse(message.url));
        return;
      case 'copyText':
        await vscode.env.clipboard.writeText(message.text);
        return;
      case 'chatAction':
        // Not a command: the session runs the request its refused accept held back.
        if (message.action === 'runLive') await this.deps.session()?.runRefusedLive();
        else await runChatAction(message.action, message.setting);
        return;
      case 'editMessage':
        return this.editMessage(message.id, message.text, message.restoreFiles === true);
      case 'regenerate': {
        const outcome = await this.deps.session()?.regenerate();
        if (outcome?.status === 'refused') presenter.notice(outcome.reason);
        return;
      }
      case 'mentionQuery':
        presenter.post({ type: 'mentions', requestId: message.requestId, items: await this.deps.attachments.mentions(message.query) });
        return;
      case 'attach':
        return this.attach(message.kind, message.path);
      case 'removeAttachment':
        this.deps.attachments.remove(message.id);
        return;
      case 'pickAttachment':
        return this.pickAttachment();
      case 'listModels':
        return this.listModels(message.role);
      case 'selectModel':
        // The settings change aborts a speculation built on the old model (the controller's onSettingsChanged).
        await updateSetting(message.role === 'main' ? 'model' : 'fastModel', message.model, this.deps.trusted());
        return;
      case 'pickFolder':
        return this.pickFolder();
      default:
        return unhandledMessage(message, 'chat room');
    }
  }

  private async submit(text: string, attachmentIds: string[]): Promise<void> {
    const { presenter } = this.deps;
    if (!this.deps.endpoint()) {
      // Shown, but not in the history (-1): nothing was sent, so there is nothing to edit.
      presenter.handle({ type: 'user_message', text, historyIndex: -1, attachments: [] });
      presenter.error(NO_ENDPOINT_MESSAGE, false, NO_ENDPOINT_ACTIONS);
      return;
    }
    // A submit leaves the input empty; the webview sends no separate `typing` for it.
    const session = await this.deps.ensureSession();
    session?.setUserTyping(false);
    const { attachments, problems } = await this.deps.attachments.take(attachmentIds);
    for (const problem of problems) presenter.notice(`Not attached: ${problem}`);
    await session?.submit(text, attachments);
  }

  /** New Chat keeps the old chat in the history, so it asks nothing. */
  async newChat(): Promise<void> {
    await this.deps.history.newChat(this.deps.session());
    await this.deps.chatView.reveal(true);
  }

  /** The header's folder button. */
  async pickFolder(): Promise<void> {
    const current = this.deps.workingFolder();
    const chosen = await this.deps.folder.ask(current, (this.deps.session()?.messages.length ?? 0) > 0);
    if (chosen) this.deps.folder.pick(chosen);
    await this.deps.chatView.reveal(true);
  }

  private async editMessage(id: string, text: string, restoreFiles: boolean): Promise<void> {
    const { presenter } = this.deps;
    const session = await this.deps.ensureSession();
    const index = presenter.historyIndexOf(id);
    if (!session || index === undefined) {
      presenter.notice('This message can no longer be edited.');
      return;
    }
    // Files are not rewound unless the user asked (the editor's "Restore files and send").
    const later = restoreFiles ? presenter.checkpointsAfter(id) : [];
    if (later.length > 0 && !(await this.deps.checkpoints.undoBeforeResend(later))) return;
    presenter.prepareEdit(id);
    const outcome = await session.editAndResend(index, text);
    if (outcome?.status === 'refused') presenter.notice(outcome.reason);
  }

  private async attach(kind: 'file' | 'selection' | 'problems', path?: string): Promise<void> {
    if (kind === 'file') await this.deps.ensureSession();
    const result = await this.deps.attachments.attach(kind, path);
    if (result.ok) this.deps.presenter.post({ type: 'attachmentAdded', attachment: result.view });
    else this.deps.presenter.notice(`Not attached: ${result.reason}`);
  }

  /** The paperclip's "Browse…": VS Code's file dialog, opened in the workspace. */
  private async pickAttachment(): Promise<void> {
    const folder = this.deps.workingFolder();
    const picked = await vscode.window.showOpenDialog({ canSelectMany: true, canSelectFolders: false, defaultUri: folder?.uri, openLabel: 'Attach' });
    for (const uri of picked ?? []) await this.attach('file', uri.toString());
  }

  private async listModels(role: ModelRole): Promise<void> {
    const { presenter } = this.deps;
    const current = role === 'main' ? (this.deps.endpoint()?.model ?? '') : this.deps.fastModel();
    if (!this.deps.endpoint()) {
      presenter.post({ type: 'models', role, models: [], current, error: NO_ENDPOINT_MESSAGE });
      return;
    }
    try {
      const models = [...new Set(await this.deps.llm.listModels())].sort();
      presenter.post({ type: 'models', role, models, current });
    } catch (error) {
      presenter.post({ type: 'models', role, models: [], current, error: `Could not list the endpoint's models: ${error instanceof Error ? error.message : String(error)}` });
    }
  }

  /** A file the chat names (a tool card's path, a link in an answer), at a line. */
  async openFile(requested: string, line?: number): Promise<void> {
    const folder = this.deps.workingFolder();
    if (!folder) return;
    const services = this.deps.services();
    let relative: string;
    try {
      // The tools' view of the folders: a path into another open folder opens there.
      relative = services ? await services.toolContext.fs.resolve(requested) : await resolveInsideWorkspace(folder.uri.fsPath, requested, [folder.uri.fsPath]);
    } catch {
      void vscode.window.showWarningMessage(`Speculate: "${requested}" is outside the workspace and was not opened.`);
      return;
    }
    let uri: vscode.Uri | undefined = vscode.Uri.joinPath(folder.uri, ...relative.split('/'));
    // Answers often name a file without its folder ("session.ts:142"): find it in the workspace.
    if (!(await vscode.workspace.fs.stat(uri).then(() => true, () => false))) uri = await findByName(folder, relative);
    if (!uri) {
      void vscode.window.showWarningMessage(`Speculate: "${requested}" was not found in the workspace.`);
      return;
    }
    const position = new vscode.Position(Math.max(0, (line ?? 1) - 1), 0);
    await vscode.window.showTextDocument(uri, { selection: new vscode.Range(position, position), preview: true });
  }
}

/** The workspace file a path's last segments name (one match opens, several ask which). */
async function findByName(folder: vscode.WorkspaceFolder, relative: string): Promise<vscode.Uri | undefined> {
  const glob = `**/${relative.replace(/[[\]{}*?!]/g, (ch) => `[${ch}]`)}`;
  const found = await vscode.workspace.findFiles(new vscode.RelativePattern(folder, glob), undefined, 20);
  if (found.length <= 1) return found[0];
  const picked = await vscode.window.showQuickPick(
    found.map((uri) => ({ label: vscode.workspace.asRelativePath(uri, false), uri })),
    { title: `Speculate: which ${relative}?`, placeHolder: 'Several files in the workspace have this name' },
  );
  return picked?.uri;
}
