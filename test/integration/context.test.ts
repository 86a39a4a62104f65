// `@` context in the real extension host: the list comes from VS Code's file search and the active
// editor, chips resolve from a path, a dropped file's URI or its path (this workspace only), and what
// was attached reaches the model inside the user message.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { AttachmentView, HostToWebview } from '../../src/shared/protocol';
import { demoReply } from '../fixtures/scripted/demoScript';
import { ScriptedServer } from '../fixtures/scriptedServer';
import { speculateApi, workspaceRoot } from './api';
import { clearUserSettings, setUserSettings, until } from './helpers';

describe('@ context in the extension host', function () {
  this.timeout(60_000);
  let model: ScriptedServer;
  const posted: HostToWebview[] = [];
  let subscription: vscode.Disposable;
  let diagnostics: vscode.DiagnosticCollection;
  const greet = () => vscode.Uri.joinPath(workspaceRoot(), 'src', 'greet.ts');

  before(async () => {
    model = new ScriptedServer({ script: (request) => demoReply(request.body ?? {}) });
    await model.start();
    await setUserSettings({ baseUrl: model.baseUrl, model: 'scripted-demo', 'suggestions.enabled': false });
    const api = await speculateApi();
    subscription = api.controller.onDidPostToWebview((message) => posted.push(message));
    diagnostics = vscode.languages.createDiagnosticCollection('speculate-test');
  });
  after(async () => {
    subscription?.dispose();
    diagnostics?.dispose();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await clearUserSettings(['baseUrl', 'model', 'suggestions.enabled']);
    await model?.close();
  });

  async function attach(kind: 'file' | 'selection' | 'problems', path?: string): Promise<AttachmentView | string> {
    const api = await speculateApi();
    posted.length = 0;
    await api.controller.handleWebviewMessage(path === undefined ? { type: 'attach', kind } : { type: 'attach', kind, path });
    return until(posted, (m) => (m.type === 'attachmentAdded' ? m.attachment : m.type === 'notice' ? m.text : undefined), 'a chip or a notice');
  }

  it('lists workspace files from VS Code\'s file search, best match first, with @selection and @problems', async () => {
    const api = await speculateApi();
    await vscode.window.showTextDocument(greet());
    posted.length = 0;
    await api.controller.handleWebviewMessage({ type: 'mentionQuery', requestId: 7, query: 'gre' });
    const items = await until(posted, (m) => (m.type === 'mentions' && m.requestId === 7 ? m.items : undefined), 'the list');
    assert.deepEqual(items[0], { kind: 'file', label: 'greet.ts', detail: 'src', path: 'src/greet.ts' });
    posted.length = 0;
    await api.controller.handleWebviewMessage({ type: 'mentionQuery', requestId: 8, query: '' });
    const all = await until(posted, (m) => (m.type === 'mentions' && m.requestId === 8 ? m.items : undefined), 'the full list');
    assert.deepEqual(all.slice(0, 2).map((i) => i.label), ['@selection', '@problems']);
    assert.equal(all[1]!.detail, '0 in src/greet.ts');
    assert.ok(all.some((i) => i.path === 'README.md'));
  });

  it('resolves a chip from a path, an absolute path or a dropped URI of this workspace, and refuses anything else', async () => {
    const byPath = await attach('file', 'src/greet.ts');
    assert.equal(typeof byPath === 'object' && byPath.path, 'src/greet.ts');
    const absolute = await attach('file', greet().fsPath);
    assert.equal(typeof absolute === 'object' && absolute.label, 'greet.ts');
    const remote = await attach('file', `vscode-remote://127.0.0.1:1234${greet().path}`);
    assert.equal(typeof remote === 'object' && remote.path, 'src/greet.ts', 'a remote window\'s explorer URI');
    const outside = await attach('file', '/etc/passwd');
    assert.match(String(outside), /^Not attached: .*outside the workspace/);
    const folder = await attach('file', 'src');
    assert.match(String(folder), /folder/);
    const missing = await attach('file', 'src/nothing.ts');
    assert.match(String(missing), /does not exist/);
  });

  it('attaches the selection and the problems of the active editor, and the model gets them in the message', async () => {
    const api = await speculateApi();
    const editor = await vscode.window.showTextDocument(greet());
    editor.selection = new vscode.Selection(0, 0, 1, 0);
    const selection = await attach('selection');
    assert.equal(typeof selection === 'object' && selection.label, 'greet.ts:1');
    const warning = new vscode.Diagnostic(new vscode.Range(1, 2, 1, 8), 'Greeting is misspelled', vscode.DiagnosticSeverity.Warning);
    warning.source = 'speculate-test';
    diagnostics.set(greet(), [warning]);
    await new Promise((r) => setTimeout(r, 100));
    const problems = await attach('problems');
    assert.equal(typeof problems === 'object' && problems.label, 'problems in greet.ts (1)');
    const ids = [selection, problems].map((a) => (typeof a === 'object' ? a.id : ''));
    const before = model.chatRequests.length;
    posted.length = 0;
    await api.controller.handleWebviewMessage({ type: 'submit', text: 'what is wrong here?', attachments: ids });
    const shown = await until(posted, (m) => (m.type === 'userMessage' ? m : undefined), 'the user message');
    assert.equal(shown.text, 'what is wrong here?');
    assert.deepEqual(shown.attachments?.map((a) => a.label), ['greet.ts:1', 'problems in greet.ts (1)']);
    await until(posted, (m) => (m.type === 'turnState' && !m.busy ? m : undefined), 'the turn to end');
    const request = model.chatRequests.slice(before).find((r) => JSON.stringify(r.body).includes('what is wrong here?'))!;
    const sent = JSON.stringify(request.body);
    assert.match(sent, /<selection path=\\"src\/greet.ts\\" lines=\\"1-1\\">\\nexport function greet/);
    assert.match(sent, /src\/greet.ts:2:3 warning: Greeting is misspelled \[speculate-test\]/);
  });
});
