// The host⇄webview protocol's runtime validators and the page HTML the host serves (plain Node).
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chatContentSecurityPolicy, makeNonce, renderChatHtml } from '../../src/shared/chatHtml';
import {
  parseHostMessage,
  parseWebviewMessage,
  speculationNoticeText,
  type HostMessageType,
  type HostToWebview,
  type WebviewMessageType,
  type WebviewToHost,
} from '../../src/shared/protocol';
import { repoRoot } from './harness';

/** One valid message of every webview→host type (the mapped type makes a missing one a compile error). */
const WEBVIEW_EXAMPLES: { [K in WebviewMessageType]: Extract<WebviewToHost, { type: K }> } = {
  ready: { type: 'ready' },
  submit: { type: 'submit', text: 'explain this' },
  acceptSuggestion: { type: 'acceptSuggestion', suggestionId: 's1', method: 'tab' },
  acceptRevealed: { type: 'acceptRevealed', suggestionId: 's1', seq: 4, method: 'tab' },
  suggestionDismissed: { type: 'suggestionDismissed', suggestionId: 's1', why: 'edit' },
  typing: { type: 'typing', hasText: true },
  approvalAnswer: { type: 'approvalAnswer', id: 'ap1', decision: 'always' },
  stopTurn: { type: 'stopTurn' },
  retry: { type: 'retry', errorId: 'e1' },
  previewChanges: { type: 'previewChanges', path: 'src/a.ts' },
  abortSpeculation: { type: 'abortSpeculation' },
  conflictChoice: { type: 'conflictChoice', conflictId: 'k1', path: 'src/a.ts', choice: 'keep-mine' },
  newChat: { type: 'newChat' },
  openFile: { type: 'openFile', path: 'src/a.ts', line: 3 },
  openLink: { type: 'openLink', url: 'https://example.com' },
  copyText: { type: 'copyText', text: 'npm test' },
  editMessage: { type: 'editMessage', id: 'u1', text: 'explain it shorter' },
  regenerate: { type: 'regenerate' },
  historyQuery: { type: 'historyQuery', query: 'farewell' },
  historyOpen: { type: 'historyOpen', id: 'chat-1-2' },
  historyRename: { type: 'historyRename', id: 'chat-1-2', title: 'Greeting bug' },
  historyDelete: { type: 'historyDelete', id: 'chat-1-2' },
  mentionQuery: { type: 'mentionQuery', requestId: 3, query: 'gre' },
  attach: { type: 'attach', kind: 'file', path: 'src/greet.ts' },
  removeAttachment: { type: 'removeAttachment', id: 'att1' },
  pickAttachment: { type: 'pickAttachment' },
  listModels: { type: 'listModels', role: 'fast' },
  selectModel: { type: 'selectModel', role: 'fast', model: '' },
  chatAction: { type: 'chatAction', action: 'openUserSettings', setting: 'speculate.baseUrl' },
  checkpointAction: { type: 'checkpointAction', checkpointId: '20261201-101530-3fa9c2d1', action: 'changes' },
  restoreTo: { type: 'restoreTo', turnEndId: 't3' },
  undoConflictChoice: { type: 'undoConflictChoice', conflictId: 'uc1', path: 'src/a.ts', choice: 'restore' },
  excludeFile: { type: 'excludeFile', runId: 'spec-1', path: 'src/a.ts', excluded: true },
  pickFolder: { type: 'pickFolder' },
  mcpAction: { type: 'mcpAction', action: 'allow', server: 'everything', source: 'demo/.vscode/mcp.json' },
};

const HOST_EXAMPLES: { [K in HostMessageType]: Extract<HostToWebview, { type: K }> } = {
  init: {
    type: 'init',
    state: {
      transcript: [
        { kind: 'user', id: 'u1', text: 'hi', attachments: [{ id: 'att1', kind: 'selection', label: 'greet.ts:3-5', path: 'src/greet.ts', line: 3 }] },
        { kind: 'assistant', id: 'a1', text: 'hello', reasoning: 'greet back', streaming: true },
        { kind: 'usage', id: 'us1', text: '1.2k in · 30 out', detail: 'gpt-4.1' },
        { kind: 'turnEnd', id: 't1', text: 'Changed a.ts', historyLength: 4, checkpoint: { checkpointId: 'cp1', state: 'undone', files: [{ path: 'a.ts', change: 'created' }] } },
        { kind: 'undoConflicts', id: 'uc1', checkpointId: 'cp1', direction: 'redo', files: [{ path: 'a.ts', reason: 'changed since', canRestore: false, resolution: 'keep-mine' }] },
        { kind: 'toolGroup', id: 'g1', done: false, calls: [{ callId: 'c1', tool: 'read_file', summary: 'a.ts', status: 'cancelled' }] },
        { kind: 'approval', id: 'ap1', tool: 'edit', summary: 'a.ts', detail: '', decision: 'allow' },
        { kind: 'error', id: 'e1', message: 'boom', retryable: true, actions: [{ action: 'openUserSettings', label: 'Open User Settings' }, { action: 'selectModel', label: 'Select Model' }] },
        { kind: 'notice', id: 'n1', text: 'Speculated 1 tool call · 1.0 s saved' },
        { kind: 'notice', id: 'n2', text: 'Restricted Mode', tone: 'warning', actions: [{ action: 'manageTrust', label: 'Manage Workspace Trust' }] },
        { kind: 'conflicts', id: 'k1', files: [{ path: 'a.ts', reason: 'changed', resolution: 'overwrite' }] },
      ],
      busy: false,
      draft: 'half',
      suggestion: { id: 's1', text: 'run the tests' },
      speculation: { state: 'boundary', toolCalls: 2, filesWritten: ['a.ts'], suggestionId: 's1', boundary: { type: 'shell', tool: 'run_shell_command', detail: '`npm i` writes' }, commitAhead: { moves: ['main: 1a2b3c4 → 5d6e7f8'], log: 'commit 5d6e7f8', note: 'dates' } },
      model: { label: 'm', demo: true, fast: 'small' },
      settings: { enterAcceptsSuggestion: false },
      usage: { text: 'This chat: 1.2k in · 30 out', detail: '' },
      title: 'hi',
      preview: { seq: 3, suggestionId: 's1', final: true, from: 0, items: [{ kind: 'user', id: 'v1.0', text: 'run the tests', speculated: true }], next: { id: 's2', text: 'commit' } },
    },
  },
  config: { type: 'config', model: { label: 'm', demo: false }, settings: { enterAcceptsSuggestion: true } },
  userMessage: { type: 'userMessage', id: 'u1', text: 'hi', speculated: true },
  assistantStart: { type: 'assistantStart', id: 'a1' },
  assistantDelta: { type: 'assistantDelta', id: 'a1', text: 'he' },
  reasoningDelta: { type: 'reasoningDelta', id: 'a1', text: 'hm' },
  assistantEnd: { type: 'assistantEnd', id: 'a1' },
  toolGroupStart: { type: 'toolGroupStart', id: 'g1', calls: [] },
  toolCallUpdate: { type: 'toolCallUpdate', groupId: 'g1', call: { callId: 'c1', tool: 'edit', summary: 'a.ts', status: 'ok', result: 'done' } },
  toolGroupEnd: { type: 'toolGroupEnd', id: 'g1' },
  approvalRequest: { type: 'approvalRequest', id: 'ap1', tool: 'edit', summary: 'a.ts', detail: 'replace 1 line', callId: 'c1' },
  approvalResolved: { type: 'approvalResolved', id: 'ap1', decision: 'deny' },
  error: { type: 'error', id: 'e1', message: 'boom', retryable: false, actions: [{ action: 'setApiKey', label: 'Set API Key' }] },
  turnState: { type: 'turnState', busy: true },
  notice: { type: 'notice', id: 'n1', text: 'ignored', tone: 'warning', actions: [{ action: 'openUserSettings', label: 'Open', setting: 'speculate.approvalMode' }] },
  suggestion: { type: 'suggestion', id: 's1', text: 'run the tests' },
  suggestionCleared: { type: 'suggestionCleared' },
  speculation: { type: 'speculation', status: { state: 'running', toolCalls: 0, filesWritten: [] } },
  appendItems: { type: 'appendItems', items: [{ kind: 'user', id: 'u2', text: 'go', speculated: true }] },
  conflicts: { type: 'conflicts', id: 'k1', files: [{ path: 'a.ts', reason: 'changed' }] },
  conflictResolved: { type: 'conflictResolved', id: 'k1', path: 'a.ts', resolution: 'keep-mine' },
  speculationPreview: { type: 'speculationPreview', preview: { seq: 1, suggestionId: 's1', final: false, from: 2, items: [], next: null } },
  revealAnswer: { type: 'revealAnswer', seq: 1, outcome: 'conflicts', notApplied: ['a.ts'] },
  clear: { type: 'clear' },
  focusInput: { type: 'focusInput' },
  truncate: { type: 'truncate', afterId: 'u1' },
  chatUsage: { type: 'chatUsage', usage: null },
  showHistory: { type: 'showHistory' },
  history: { type: 'history', query: '', entries: [{ id: 'chat-1-2', title: 'hi', updatedAt: 1_700_000_000_000, workspace: 'demo', model: 'm', current: true }] },
  chatTitle: { type: 'chatTitle', title: 'Greeting bug' },
  mentions: { type: 'mentions', requestId: 3, items: [{ kind: 'file', label: 'greet.ts', detail: 'src', path: 'src/greet.ts' }, { kind: 'problems', label: '@problems', detail: '2 in greet.ts' }] },
  attachmentAdded: { type: 'attachmentAdded', attachment: { id: 'att1', kind: 'file', label: 'greet.ts', path: 'src/greet.ts' } },
  models: { type: 'models', role: 'main', models: ['a', 'b'], current: 'a', error: 'HTTP 401' },
  checkpointUpdate: { type: 'checkpointUpdate', checkpoint: { checkpointId: 'cp1', state: 'applied', files: [] } },
  undoConflictResolved: { type: 'undoConflictResolved', id: 'uc1', path: 'a.ts', resolution: 'restore' },
  speculationFiles: { type: 'speculationFiles', files: { runId: 'spec-1', files: [{ path: 'a.ts', change: 'modified', added: 3, removed: 1, excluded: false, hunks: { kept: 2, total: 3 } }] } },
  mcpServers: {
    type: 'mcpServers',
    view: {
      servers: [
        { name: 'everything', source: 'settings (speculate.mcpServers)', fromWorkspace: false, transport: 'stdio', target: 'npx -y @modelcontextprotocol/server-everything', state: 'restarting', restartAt: 1764800000000, runAhead: true, tools: [{ name: 'echo', description: 'Echoes back the input', readOnly: true }] },
        { name: 'rigged', source: 'demo/.vscode/mcp.json', fromWorkspace: true, transport: 'http', target: 'https://mcp.example.com/mcp', state: 'awaiting-approval', runAhead: false, tools: [], changed: true },
      ],
      notes: ['settings (speculate.mcpServers): server "bad" needs "command": the program to run; it is not started.'],
    },
  },
};

describe('webview protocol', () => {
  it('accepts a well-formed message of every webview→host type', () => {
    for (const message of Object.values(WEBVIEW_EXAMPLES)) {
      assert.deepEqual(parseWebviewMessage(JSON.parse(JSON.stringify(message))), message, message.type);
    }
  });

  it('accepts a well-formed message of every host→webview type', () => {
    for (const message of Object.values(HOST_EXAMPLES)) {
      assert.deepEqual(parseHostMessage(JSON.parse(JSON.stringify(message))), message, message.type);
    }
  });

  it('rejects malformed webview messages, so the host can ignore them', () => {
    const bad: unknown[] = [
      undefined,
      null,
      'ready',
      ['ready'],
      {},
      { type: 'unknown' },
      { type: 'constructor' },
      { type: '__proto__' },
      { type: 'hasOwnProperty' },
      { type: 'submit' },
      { type: 'submit', text: '   ' },
      { type: 'submit', text: 42 },
      { type: 'acceptSuggestion', suggestionId: 's1', method: 'space' },
      { type: 'acceptSuggestion', suggestionId: '', method: 'tab' },
      { type: 'suggestionDismissed', suggestionId: 's1', why: 'bored' },
      { type: 'typing', hasText: 'yes' },
      { type: 'approvalAnswer', id: 'ap1', decision: 'maybe' },
      { type: 'retry' },
      { type: 'chatAction', action: 'workbench.action.terminal.new' },
      { type: 'previewChanges', path: 7 },
      { type: 'conflictChoice', conflictId: 'k1', path: 'a.ts', choice: 'merge' },
      { type: 'conflictChoice', conflictId: 'k1', path: '', choice: 'overwrite' },
      { type: 'openFile', path: '' },
      { type: 'openFile', path: 'a.ts', line: 0 },
      { type: 'openFile', path: 'a.ts', line: 1.5 },
      { type: 'openLink', url: 'javascript:alert(1)' },
      { type: 'openLink', url: 'command:workbench.action.terminal.new' },
      { type: 'copyText' },
      { type: 'submit', text: 'hi', attachments: [''] },
      { type: 'editMessage', id: 'u1', text: '  ' },
      { type: 'historyRename', id: 'chat-1-2', title: '' },
      { type: 'historyOpen', id: 3 },
      { type: 'mentionQuery', requestId: -1, query: 'x' },
      { type: 'attach', kind: 'folder', path: 'src' },
      { type: 'selectModel', role: 'slow', model: 'x' },
      // The server list's buttons are the host's few actions on a named row.
      { type: 'mcpAction', action: 'runCommand', server: 'everything' },
      { type: 'mcpAction', action: 'allow', server: '' },
      // A notice button names one of the host's actions, never a command of its own.
      { type: 'chatAction', action: 'workbench.action.terminal.new' },
      { type: 'chatAction', action: 'openUserSettings', setting: 'terminal.integrated.env.linux' },
      { type: 'chatAction', action: 'openUserSettings', setting: 'speculate' },
      { type: 'acceptRevealed', suggestionId: 's1', method: 'tab' },
      { type: 'acceptRevealed', suggestionId: 's1', seq: -1, method: 'tab' },
      { type: 'acceptRevealed', suggestionId: 's1', seq: 2.5, method: 'tab' },
      { type: 'acceptRevealed', suggestionId: '', seq: 2, method: 'tab' },
      { type: 'checkpointAction', checkpointId: 'cp1', action: 'delete' },
      { type: 'undoConflictChoice', conflictId: 'uc1', path: 'a.ts', choice: 'overwrite' },
      { type: 'excludeFile', runId: 'r', path: 'a.ts', excluded: 'yes' },
    ];
    for (const raw of bad) assert.equal(parseWebviewMessage(raw), undefined, JSON.stringify(raw));
  });

  it('rejects host messages whose nested data is malformed', () => {
    const init = HOST_EXAMPLES.init;
    const withItem = (item: unknown): unknown => ({ ...init, state: { ...init.state, transcript: [item] } });
    const bad: unknown[] = [
      withItem({ kind: 'user', id: 'u1' }),
      withItem({ kind: 'script', id: 'x', text: 'alert(1)' }),
      withItem({ kind: 'toolGroup', id: 'g', done: true, calls: [{ callId: 'c', tool: 't', summary: '', status: 'exploded' }] }),
      withItem({ kind: 'approval', id: 'a', tool: 't', summary: '', detail: '', decision: 'perhaps' }),
      { ...init, state: { ...init.state, speculation: { state: 'ready', toolCalls: 1.5, filesWritten: [] } } },
      { ...init, state: { ...init.state, speculation: { state: 'done', toolCalls: 1, filesWritten: [] } } },
      { ...init, state: { ...init.state, suggestion: { id: 's', text: null } } },
      { ...init, state: { ...init.state, model: { label: 'm' } } },
      { type: 'appendItems', items: 'not a list' },
      { type: 'conflictResolved', id: 'k', path: 'a', resolution: 'open-diff' },
      { type: 'notice', id: 'n', text: 't', actions: [{ action: 'runCommand', label: 'x' }] },
      { type: 'notice', id: 'n', text: 't', tone: 'alarm' },
      { type: 'speculation', status: { state: 'boundary', toolCalls: 0, filesWritten: [], boundary: { tool: 'x' } } },
      { type: 'speculation', status: { state: 'ready', toolCalls: 0, filesWritten: [], commitAhead: { moves: 'main', log: '', note: '' } } },
      withItem({ kind: 'user', id: 'u1', text: 'hi', attachments: [{ id: 'a', kind: 'folder', label: 'x', path: 'x' }] }),
      withItem({ kind: 'usage', id: 'us', text: 1 }),
      { type: 'history', query: '', entries: [{ id: 'c', title: 't', updatedAt: -5, workspace: '', model: '', current: false }] },
      { type: 'models', role: 'main', models: [1], current: '' },
      { type: 'speculationPreview' },
      { type: 'speculationPreview', preview: { seq: 1, suggestionId: 's1', final: true, from: 0, items: [{ kind: 'script', id: 'x' }], next: null } },
      { type: 'speculationPreview', preview: { seq: 1, suggestionId: 's1', final: 'yes', from: 0, items: [], next: null } },
      { type: 'speculationPreview', preview: { seq: 1, suggestionId: 's1', final: true, from: -1, items: [], next: null } },
      { type: 'speculationPreview', preview: { seq: 1, suggestionId: 's1', final: true, from: 0, items: [], next: { id: '', text: 'x' } } },
      { type: 'revealAnswer', seq: 1, outcome: 'maybe', notApplied: [] },
      { type: 'revealAnswer', seq: 1, outcome: 'applied' },
      { ...init, state: { ...init.state, preview: { seq: 1 } } },
      { type: 'error', id: 'e1', message: 'boom', retryable: false, actions: [{ action: 'deleteWorkspace', label: 'x' }] },
      withItem({ kind: 'error', id: 'e1', message: 'boom', retryable: true, actions: 'setApiKey' }),
      withItem({ kind: 'turnEnd', id: 't', text: '', checkpoint: { checkpointId: 'cp', state: 'gone', files: [] } }),
      { type: 'speculationFiles', files: { runId: 'r', files: [{ path: 'a', change: 'modified', added: -1, removed: 0, excluded: false }] } },
      { type: 'speculationFiles', files: { runId: 'r', files: [{ path: 'a', change: 'modified', added: 1, removed: 0, excluded: false, hunks: { kept: 'two', total: 3 } }] } },
      { type: 'mcpServers', view: { servers: [{ name: 'x', source: 's', fromWorkspace: false, transport: 'stdio', target: 't', state: 'hacked', runAhead: false, tools: [] }], notes: [] } },
      { type: 'mcpServers', view: { servers: [], notes: 'none' } },
    ];
    for (const raw of bad) assert.equal(parseHostMessage(raw), undefined, JSON.stringify(raw).slice(0, 120));
  });

  it('imports nothing, so both the host and the browser bundle can use it', () => {
    const source = readFileSync(join(repoRoot(), 'src', 'shared', 'protocol.ts'), 'utf8');
    assert.doesNotMatch(source, /^\s*import\s/m);
    assert.doesNotMatch(source, /require\(/);
  });

  it('words the notice after an accepted speculation', () => {
    assert.equal(speculationNoticeText(3, 4200), 'Speculated 3 tool calls · 4.2 s saved');
    assert.equal(speculationNoticeText(1, 12_600), 'Speculated 1 tool call · 13 s saved');
    assert.equal(speculationNoticeText(0, -5), 'Speculated 0 tool calls · 0.0 s saved');
  });
});

describe('webview page html', () => {
  const options = {
    cspSource: 'https://*.vscode-cdn.net',
    nonce: 'abc123XYZ',
    scriptUri: 'https://file+.vscode-resource.vscode-cdn.net/ext/dist/webview.js',
    styleUri: 'https://file+.vscode-resource.vscode-cdn.net/ext/media/chat.css',
  };

  it('has a strict CSP: scripts only by nonce, styles and images only from the webview source', () => {
    const html = renderChatHtml(options);
    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(html)?.[1];
    assert.equal(
      csp,
      "default-src 'none'; style-src https://*.vscode-cdn.net; font-src https://*.vscode-cdn.net; img-src https://*.vscode-cdn.net data:; script-src 'nonce-abc123XYZ'".replace(/'/g, '&#39;'),
    );
    assert.match(html, /<script nonce="abc123XYZ" src="https:\/\/file\+\.vscode-resource\.vscode-cdn\.net\/ext\/dist\/webview\.js"><\/script>/);
    assert.match(html, /<link rel="stylesheet" href="https:\/\/file\+\.vscode-resource\.vscode-cdn\.net\/ext\/media\/chat\.css">/);
    assert.match(html, /<div id="app"><\/div>/);
    assert.equal(html.match(/<script/g)?.length, 1, 'one script, the bundle');
    assert.doesNotMatch(html, /\sstyle=|<style|\son[a-z]+=/i, 'no inline style or handlers');
  });

  it('escapes what it is given, so a hostile URI or source cannot add markup or widen the policy', () => {
    const html = renderChatHtml({
      cspSource: "https://x 'unsafe-inline'; script-src *",
      nonce: 'n"><script>alert(1)</script>',
      scriptUri: '"><script>alert(2)</script>',
      styleUri: "x' onload='alert(3)",
      title: '</title><script>alert(4)</script>',
    });
    assert.equal(html.match(/<script/g)?.length, 1);
    assert.doesNotMatch(html, /alert\(2\)<\/script>|onload='/);
    assert.equal(
      chatContentSecurityPolicy("https://x 'unsafe-inline'; script-src *", 'n'),
      "default-src 'none'; style-src https://x; font-src https://x; img-src https://x data:; script-src 'nonce-n'",
    );
    assert.match(chatContentSecurityPolicy("'self' https://*.vscode-cdn.net", 'n'), /style-src 'self' https:\/\/\*\.vscode-cdn\.net;/);
  });

  it('makes nonces of 32 letters and digits', () => {
    let seed = 7;
    const nonce = makeNonce((n) => Uint8Array.from({ length: n }, () => (seed = (seed * 31 + 17) % 256)));
    assert.match(nonce, /^[A-Za-z0-9]{32}$/);
  });
});
