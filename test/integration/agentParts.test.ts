// Issue 26's parts as the extension wires them in the real host, through the webview protocol:
// the workspace's AGENTS.md in the prompt and named in the chat, save_memory writing to the
// extension's global storage (later turns hold it, Open Memory File opens it), the agent tool's
// sub-agent on the fast model with its steps on the card, and exit_plan_mode's card switching this
// chat (not the setting) from plan to auto-edit.
import * as assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { HostToWebview } from '../../src/shared/protocol';
import { ScriptedServer, type RecordedRequest, type ScriptedReply } from '../fixtures/scriptedServer';
import { speculateApi, workspaceRoot } from './api';
import { clearUserSettings, lastUserText, poll, setUserSettings, until } from './helpers';

const FACT = 'The user wants MARKER-FACT-26 in every commit message.';
const PLAN = '# Plan\n\n1. Write `notes/plan-26.txt` saying the plan ran.';
const SUB_AGENT_ANSWER = 'greet is defined in src/greet.ts, line 1.';

type Message = Record<string, unknown>;
const systemText = (request: RecordedRequest) => String(request.body?.messages?.[0]?.content ?? '');
/** The messages after the last user message: what this turn did so far. */
function sinceUser(request: RecordedRequest): Message[] {
  const messages = request.body?.messages ?? [];
  let last = messages.length - 1;
  while (last >= 0 && messages[last].role !== 'user') last--;
  return messages.slice(last + 1);
}

function reply(request: RecordedRequest): ScriptedReply {
  const system = systemText(request);
  const done = sinceUser(request).filter((m) => m.role === 'tool').map((m) => String(m.content));
  if (system.startsWith('You are a sub-agent')) {
    return done.length === 0 ? { toolCalls: [{ name: 'grep_search', arguments: { pattern: 'export function greet' } }] } : { text: SUB_AGENT_ANSWER };
  }
  const user = lastUserText(request.body);
  if (user === 'remember the commit rule') return done.length === 0 ? { toolCalls: [{ name: 'save_memory', arguments: { fact: FACT } }] } : { text: 'Saved.' };
  if (user === 'where is greet?') {
    return done.length === 0 ? { toolCalls: [{ name: 'agent', arguments: { description: 'find greet', prompt: 'Where is greet defined?' } }] } : { text: `Found: ${done[0]}` };
  }
  if (user === 'plan the notes file') {
    if (done.length === 0) return { toolCalls: [{ name: 'exit_plan_mode', arguments: { plan: PLAN } }] };
    if (done.length === 1 && /approved the plan/.test(done[0])) return { toolCalls: [{ name: 'write_file', arguments: { file_path: 'notes/plan-26.txt', content: 'the plan ran\n' } }] };
    return { text: 'Plan carried out.' };
  }
  return { text: 'ok' };
}

describe('agent parts in the extension host: instructions, memory, sub-agents, plan mode', function () {
  this.timeout(60_000);
  let model: ScriptedServer;
  const posted: HostToWebview[] = [];
  let subscription: vscode.Disposable;
  const agentsFile = () => join(workspaceRoot().fsPath, 'AGENTS.md');
  // The user's memory file outlives the window; later suites must not find this suite's fact in their prompts.
  let memoryFile: string | undefined;

  before(async () => {
    model = new ScriptedServer({ script: reply });
    await model.start();
    await setUserSettings({ baseUrl: model.baseUrl, model: 'scripted-model', fastModel: 'scripted-fast', approvalMode: 'default', 'suggestions.enabled': false });
    const api = await speculateApi();
    subscription = api.controller.onDidPostToWebview((message) => posted.push(message));
  });
  after(async () => {
    subscription?.dispose();
    rmSync(agentsFile(), { force: true });
    if (memoryFile) rmSync(memoryFile, { force: true });
    rmSync(join(workspaceRoot().fsPath, 'notes'), { recursive: true, force: true });
    await clearUserSettings(['baseUrl', 'model', 'fastModel', 'approvalMode', 'suggestions.enabled']);
    await (await speculateApi()).controller.newChat();
    await model?.close();
  });

  async function turn(text: string): Promise<void> {
    const api = await speculateApi();
    posted.length = 0;
    void api.controller.handleWebviewMessage({ type: 'submit', text });
    await until(posted, (m) => (m.type === 'userMessage' && m.text === text ? m : undefined), 'the user message');
    await until(posted, (m) => (m.type === 'turnState' && !m.busy ? m : undefined), 'the turn to end', 30_000);
  }
  const requestsFor = (text: string) => model.chatRequests.filter((r) => lastUserText(r.body) === text && !systemText(r).startsWith('You are a sub-agent'));

  it("holds the workspace's AGENTS.md in the prompt, names it in the chat, and save_memory's fact reaches later turns and Open Memory File", async () => {
    writeFileSync(agentsFile(), 'Run the tests with MARKER-AGENTS-26 before you say done.\n');
    await turn('remember the commit rule');
    const first = requestsFor('remember the commit rule')[0];
    assert.match(systemText(first), /<instructions path="AGENTS.md">\nRun the tests with MARKER-AGENTS-26/);
    assert.ok(posted.some((m) => m.type === 'notice' && /^Context: AGENTS\.md/.test(m.text)), 'the chat says which files the turn used');
    await until(posted, (m) => (m.type === 'toolCallUpdate' && m.call.tool === 'save_memory' && m.call.status === 'ok' ? m : undefined), 'save_memory to run');

    await turn('hello again');
    assert.match(systemText(requestsFor('hello again')[0]), new RegExp(`Memory: [^\\n]*\\n- ${FACT.replace(/\./g, '\\.')}`));

    await vscode.commands.executeCommand('speculate.openMemory');
    const editor = await poll(() => vscode.window.activeTextEditor?.document.fileName.endsWith('memory.md') && vscode.window.activeTextEditor, 'the memory file in an editor');
    const file = editor.document.uri.fsPath;
    memoryFile = file;
    assert.ok(!file.startsWith(workspaceRoot().fsPath), `the memory file is the user's, outside the workspace: ${file}`);
    assert.match(readFileSync(file, 'utf8'), new RegExp(`^- ${FACT.replace(/\./g, '\\.')}$`, 'm'));
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
  });

  it('runs the agent tool on the fast model with read tools only, its steps folded on its card', async () => {
    await turn('where is greet?');
    const sub = model.chatRequests.filter((r) => systemText(r).startsWith('You are a sub-agent'));
    assert.ok(sub.length >= 2);
    assert.ok(sub.every((r) => r.body?.model === 'scripted-fast'), 'the sub-agent runs on speculate.fastModel');
    assert.deepEqual(sub[0].body?.tools?.map((t) => (t as { function: { name: string } }).function.name), ['read_file', 'list_directory', 'glob', 'grep_search', 'lsp', 'skill']);
    const card = await until(posted, (m) => (m.type === 'toolCallUpdate' && m.call.tool === 'agent' && m.call.status === 'ok' ? m.call : undefined), 'the agent card to finish');
    assert.equal(card.result, SUB_AGENT_ANSWER);
    assert.deepEqual(card.progress, ['grep_search "export function greet"']);
    const parent = requestsFor('where is greet?');
    assert.equal(parent.at(-1)?.body?.messages?.at(-1)?.content, SUB_AGENT_ANSWER, 'the sub-agent report is the tool result the model reads');
  });

  it('plan mode: the plan card approved switches this chat to auto-edit and the plan runs; a new chat is back in plan mode', async () => {
    const api = await speculateApi();
    await setUserSettings({ approvalMode: 'plan' });
    await poll(() => api.controller.currentSession?.approvalMode === 'plan', 'the chat to take plan mode');
    posted.length = 0;
    void api.controller.handleWebviewMessage({ type: 'submit', text: 'plan the notes file' });
    const approval = await until(posted, (m) => (m.type === 'approvalRequest' ? m : undefined), 'the plan card');
    assert.equal(approval.tool, 'exit_plan_mode');
    assert.equal(approval.detail, PLAN, 'the card shows the whole plan');
    const target = join(workspaceRoot().fsPath, 'notes/plan-26.txt');
    assert.equal(existsSync(target), false);
    await api.controller.handleWebviewMessage({ type: 'approvalAnswer', id: approval.id, decision: 'allow' });
    await until(posted, (m) => (m.type === 'toolCallUpdate' && m.call.tool === 'write_file' && m.call.status === 'ok' ? m : undefined), 'the write to run without asking');
    await until(posted, (m) => (m.type === 'turnState' && !m.busy ? m : undefined), 'the turn to end', 30_000);
    assert.equal(posted.filter((m) => m.type === 'approvalRequest').length, 1, 'only the plan was asked about: auto-edit writes');
    assert.equal(readFileSync(target, 'utf8'), 'the plan ran\n');
    assert.equal(api.controller.currentSession?.approvalMode, 'auto-edit');
    assert.equal(vscode.workspace.getConfiguration('speculate').get('approvalMode'), 'plan', 'the setting is unchanged');
    await api.controller.newChat();
    assert.equal(api.controller.currentSession?.approvalMode, 'plan');
  });
});
