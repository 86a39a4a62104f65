// Runs in a window whose folder is not trusted (Restricted Mode) and whose .vscode/settings.json is
// hostile (test/fixtures/workspaces/hostile-settings.jsonc: yolo, an attacker's endpoint and search
// URL, its own model, speculation on — flat and nested). The user chose auto-edit. The agent runs in
// plan mode, nothing runs ahead, the workspace's settings do not count, and the chat says why with a
// button that opens the workspace trust editor.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { SpeculateStats } from '../../../src/core/stats/speculateStats';
import type { HostToWebview } from '../../../src/shared/protocol';
import { demoReply } from '../../fixtures/scripted/demoScript';
import { ScriptedServer } from '../../fixtures/scriptedServer';
import { speculateApi, workspaceRoot } from '../api';
import { clearUserSettings, lastUserText, poll, setUserSettings, until } from '../helpers';

describe('an untrusted folder (Restricted Mode)', function () {
  this.timeout(90_000);
  let model: ScriptedServer;
  const posted: HostToWebview[] = [];
  let subscription: vscode.Disposable | undefined;

  before(async () => {
    model = new ScriptedServer({ script: (request) => demoReply(request.body ?? {}) });
    await model.start();
    await setUserSettings({ baseUrl: model.baseUrl, model: 'scripted-demo' });
    const api = await speculateApi();
    subscription = api.controller.onDidPostToWebview((message) => posted.push(message));
  });
  after(async () => {
    subscription?.dispose();
    await clearUserSettings(['baseUrl', 'model']);
    await model?.close();
  });

  async function snapshot() {
    const api = await speculateApi();
    posted.length = 0;
    await api.controller.handleWebviewMessage({ type: 'ready' });
    return (await until(posted, (m) => (m.type === 'init' ? m : undefined), 'the init snapshot')).state;
  }

  it('the chat says why it only reads, with a button that manages workspace trust', async () => {
    assert.equal(vscode.workspace.isTrusted, false, 'the runner opened this folder untrusted');
    assert.equal(vscode.workspace.getConfiguration('speculate').inspect('approvalMode')?.globalValue, 'auto-edit');
    const notices = (await snapshot()).transcript.filter((item) => item.kind === 'notice' && /^Restricted Mode/.test(item.text));
    assert.equal(notices.length, 1);
    const notice = notices[0];
    assert.ok(notice.kind === 'notice');
    assert.match(notice.text, /plan mode/);
    assert.match(notice.text, /runs nothing ahead of you/);
    assert.equal(notice.tone, 'warning');
    assert.deepEqual(notice.actions, [{ action: 'manageTrust', label: 'Manage Workspace Trust' }]);
  });

  it('the button opens the workspace trust editor', async () => {
    const api = await speculateApi();
    await api.controller.handleWebviewMessage({ type: 'chatAction', action: 'manageTrust' });
    const tab = await poll(() => vscode.window.tabGroups.all.flatMap((group) => group.tabs).find((t) => /Workspace Trust/.test(t.label)), 'the Workspace Trust tab');
    await vscode.window.tabGroups.close(tab);
  });

  it("also names the workspace's user-only settings as ignored", async () => {
    const transcript = (await snapshot()).transcript;
    const ignored = transcript.filter((item) => item.kind === 'notice' && /ignored/.test(item.text));
    assert.equal(ignored.length, 1);
    assert.match(ignored[0].kind === 'notice' ? ignored[0].text : '', /speculate\.baseUrl, speculate\.approvalMode, speculate\.webSearchUrl are ignored/);
  });

  let statsBefore: ReturnType<SpeculateStats['toJSON']>;

  it('New Chat starts over, but the Restricted Mode notice stays', async () => {
    await (await speculateApi()).controller.newChat();
    const transcript = (await snapshot()).transcript;
    assert.deepEqual(transcript.map((item) => item.kind === 'notice' && item.text.slice(0, 16)), ['Restricted Mode:']);
  });

  it('the agent reads but changes nothing, with the user model at the user endpoint', async () => {
    const api = await speculateApi();
    statsBefore = api.controller.stats.toJSON();
    const file = join(workspaceRoot().fsPath, 'src/greet.ts');
    const before = readFileSync(file, 'utf8');
    posted.length = 0;
    void api.controller.handleWebviewMessage({ type: 'submit', text: 'read src/greet.ts and add a farewell' });
    await until(posted, (m) => (m.type === 'toolCallUpdate' && m.call.tool === 'read_file' && m.call.status === 'ok' ? m : undefined), 'read_file to run');
    const refused = await until(posted, (m) => (m.type === 'toolCallUpdate' && m.call.tool === 'edit' && m.call.status !== 'running' ? m : undefined), 'the edit to be settled');
    assert.equal(refused.call.status, 'refused', 'plan mode refuses the edit (auto-edit would have run it, yolo too)');
    await until(posted, (m) => (m.type === 'turnState' && !m.busy ? m : undefined), 'the turn to end');
    assert.equal(posted.filter((m) => m.type === 'approvalRequest').length, 0);
    assert.equal(readFileSync(file, 'utf8'), before);
    assert.ok(model.chatRequests.length >= 2);
    for (const request of model.chatRequests) assert.equal(request.body?.model, 'scripted-demo', "the workspace's model is not used");
  });

  it('nothing runs ahead: after the answer no suggestion is predicted and no speculation starts', async () => {
    const api = await speculateApi();
    // The decision after the turn: plan mode suppresses the prediction, so nothing can run ahead.
    await poll(() => (api.controller.stats.toJSON().suggestions.suppressed.plan_mode ?? 0) > (statsBefore.suggestions.suppressed.plan_mode ?? 0), 'the suggestion to be suppressed');
    const after = api.controller.stats.toJSON();
    assert.equal(after.speculations.started, statsBefore.speculations.started);
    assert.equal(after.forks.calls, statsBefore.forks.calls, 'no prediction or speculation request was sent');
    assert.equal(api.controller.currentSession?.currentSpeculation, null);
    assert.equal(posted.filter((m) => m.type === 'suggestion').length, 0);
    assert.equal(posted.filter((m) => m.type === 'speculation' && m.status.state !== 'idle').length, 0);
    assert.equal(model.chatRequests.filter((r) => /next-input prediction/i.test(lastUserText(r.body))).length, 0);
  });
});
