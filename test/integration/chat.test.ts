// The chat in the real extension host, spoken to through the webview protocol exactly as the chat
// view does: a message, a streamed answer with a tool group, an approval asked and granted, and the
// file edited in the workspace; then a wrong endpoint gives a clear error and keeps the message.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type * as vscode from 'vscode';
import type { HostToWebview } from '../../src/shared/protocol';
import { demoReply } from '../fixtures/scripted/demoScript';
import { ScriptedServer } from '../fixtures/scriptedServer';
import { speculateApi, workspaceRoot } from './api';
import { clearUserSettings, setUserSettings, until } from './helpers';

describe('chat in the extension host', function () {
  this.timeout(60_000);
  let model: ScriptedServer;
  const posted: HostToWebview[] = [];
  let subscription: vscode.Disposable;

  before(async () => {
    model = new ScriptedServer({ script: (request) => demoReply(request.body ?? {}) });
    await model.start();
    // Endpoint and approval mode are user settings: a workspace cannot set them.
    await setUserSettings({ baseUrl: model.baseUrl, model: 'scripted-demo', approvalMode: 'default' });
    const api = await speculateApi();
    subscription = api.controller.onDidPostToWebview((message) => posted.push(message));
  });
  after(async () => {
    subscription?.dispose();
    await clearUserSettings(['baseUrl', 'model', 'approvalMode']);
    await model?.close();
  });

  it('streams an answer with tool groups, asks before editing, and edits the file once allowed', async () => {
    const api = await speculateApi();
    posted.length = 0;
    void api.controller.handleWebviewMessage({ type: 'submit', text: 'read src/greet.ts and add a farewell' });
    await until(posted, (m) => (m.type === 'userMessage' && m.text === 'read src/greet.ts and add a farewell' ? m : undefined), 'the user message');
    await until(posted, (m) => (m.type === 'assistantDelta' ? m : undefined), 'streamed text');
    await until(posted, (m) => (m.type === 'toolGroupStart' && m.calls[0]?.tool === 'read_file' ? m : undefined), 'the read_file tool group');
    const approval = await until(posted, (m) => (m.type === 'approvalRequest' ? m : undefined), 'the approval request');
    assert.equal(approval.tool, 'edit');
    assert.match(approval.detail, /src\/greet\.ts/);
    const file = join(workspaceRoot().fsPath, 'src/greet.ts');
    assert.doesNotMatch(readFileSync(file, 'utf8'), /farewell/, 'nothing is written before the user allows it');
    await api.controller.handleWebviewMessage({ type: 'approvalAnswer', id: approval.id, decision: 'allow' });
    await until(posted, (m) => (m.type === 'approvalResolved' && m.id === approval.id ? m : undefined), 'the approval to resolve');
    await until(posted, (m) => (m.type === 'toolCallUpdate' && m.call.tool === 'edit' && m.call.status === 'ok' ? m : undefined), 'the edit to finish');
    await until(posted, (m) => (m.type === 'turnState' && !m.busy ? m : undefined), 'the turn to end');
    assert.match(readFileSync(file, 'utf8'), /export function farewell/);
  });

  it('a denied edit changes nothing and the model is told', async () => {
    const api = await speculateApi();
    posted.length = 0;
    const file = join(workspaceRoot().fsPath, 'README.md');
    const before = readFileSync(file, 'utf8');
    void api.controller.handleWebviewMessage({ type: 'submit', text: 'read README.md and add a goodbye line' });
    const approval = await until(posted, (m) => (m.type === 'approvalRequest' ? m : undefined), 'the approval request');
    await api.controller.handleWebviewMessage({ type: 'approvalAnswer', id: approval.id, decision: 'deny' });
    await until(posted, (m) => (m.type === 'toolCallUpdate' && m.call.status === 'denied' ? m : undefined), 'the denied status');
    await until(posted, (m) => (m.type === 'turnState' && !m.busy ? m : undefined), 'the turn to end');
    assert.equal(readFileSync(file, 'utf8'), before);
  });

  it('an unreachable endpoint gives an error that says what to do, and Retry works once it is fixed', async () => {
    const api = await speculateApi();
    posted.length = 0;
    await setUserSettings({ baseUrl: 'http://127.0.0.1:9/v1' });
    void api.controller.handleWebviewMessage({ type: 'submit', text: 'list the files' });
    const error = await until(posted, (m) => (m.type === 'error' ? m : undefined), 'the error block', 40_000);
    assert.match(error.message, /127\.0\.0\.1:9/);
    assert.match(error.message, /speculate\.baseUrl/);
    assert.equal(error.retryable, true);
    await until(posted, (m) => (m.type === 'turnState' && !m.busy ? m : undefined), 'the turn to end');
    await setUserSettings({ baseUrl: model.baseUrl });
    posted.length = 0;
    void api.controller.handleWebviewMessage({ type: 'retry', errorId: error.id });
    await until(posted, (m) => (m.type === 'toolGroupStart' && m.calls[0]?.tool === 'list_directory' ? m : undefined), 'the retried turn');
    await until(posted, (m) => (m.type === 'turnState' && !m.busy ? m : undefined), 'the retried turn to end');
  });
});
