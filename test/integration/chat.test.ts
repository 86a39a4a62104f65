// The chat in the real extension host, spoken to through the webview protocol exactly as the chat
// view does: a message, a streamed answer with a tool group, an approval asked and granted, and the
// file edited in the workspace; then a wrong endpoint gives a clear error and keeps the message.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { HostToWebview } from '../../src/shared/protocol';
import { demoReply } from '../fixtures/scripted/demoScript';
import { ScriptedServer } from '../fixtures/scriptedServer';
import { speculateApi, workspaceRoot } from './api';

async function until<T>(messages: HostToWebview[], find: (m: HostToWebview) => T | undefined, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const message of messages) {
      const found = find(message);
      if (found !== undefined) return found;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; got: ${messages.map((m) => m.type).join(', ')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('chat in the extension host', function () {
  this.timeout(60_000);
  let model: ScriptedServer;
  const posted: HostToWebview[] = [];
  let subscription: vscode.Disposable;
  const config = () => vscode.workspace.getConfiguration('speculate');

  before(async () => {
    model = new ScriptedServer({ script: (request) => demoReply(request.body ?? {}) });
    await model.start();
    await config().update('baseUrl', model.baseUrl, vscode.ConfigurationTarget.Workspace);
    await config().update('model', 'scripted-demo', vscode.ConfigurationTarget.Workspace);
    await config().update('approvalMode', 'default', vscode.ConfigurationTarget.Workspace);
    const api = await speculateApi();
    subscription = api.controller.onDidPostToWebview((message) => posted.push(message));
  });
  after(async () => {
    subscription?.dispose();
    for (const key of ['baseUrl', 'model', 'approvalMode']) await config().update(key, undefined, vscode.ConfigurationTarget.Workspace);
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
    await config().update('baseUrl', 'http://127.0.0.1:9/v1', vscode.ConfigurationTarget.Workspace);
    void api.controller.handleWebviewMessage({ type: 'submit', text: 'list the files' });
    const error = await until(posted, (m) => (m.type === 'error' ? m : undefined), 'the error block', 40_000);
    assert.match(error.message, /127\.0\.0\.1:9/);
    assert.match(error.message, /speculate\.baseUrl/);
    assert.equal(error.retryable, true);
    await until(posted, (m) => (m.type === 'turnState' && !m.busy ? m : undefined), 'the turn to end');
    await config().update('baseUrl', model.baseUrl, vscode.ConfigurationTarget.Workspace);
    posted.length = 0;
    void api.controller.handleWebviewMessage({ type: 'retry', errorId: error.id });
    await until(posted, (m) => (m.type === 'toolGroupStart' && m.calls[0]?.tool === 'list_directory' ? m : undefined), 'the retried turn');
    await until(posted, (m) => (m.type === 'turnState' && !m.busy ? m : undefined), 'the retried turn to end');
  });
});
