// One tool call's card in a tool group: its status (icon and words for screen readers), name and
// summary, where it ran (the sandbox, with links to the diffs of what it changed), a sub-agent's
// steps, and its result, unfolded when short.
import type { ToolCallStatusView, ToolCallView } from '../shared/protocol';
import { append, button, h, srOnly } from './dom';
import { icon, type IconName } from './icons';
import { renderProgressFold } from './planCard';

/** Results up to this many lines and characters show unfolded; longer ones fold. */
const SHORT_RESULT_LINES = 4;
const SHORT_RESULT_CHARS = 320;

const STATUS_TEXT: Record<ToolCallStatusView, string> = {
  running: 'Running',
  ok: 'Done',
  error: 'Failed',
  denied: 'Denied',
  refused: 'Not allowed in this approval mode',
  cancelled: 'Cancelled',
  'pending-approval': 'Waiting for your approval',
};

const STATUS_ICON: Record<ToolCallStatusView, IconName> = {
  running: 'spinner',
  ok: 'ok',
  error: 'error',
  denied: 'denied',
  refused: 'denied',
  cancelled: 'denied',
  'pending-approval': 'pending',
};

/** "Ran ahead in the sandbox", and each path it changed as a link to its diff (through speculation:). */
function renderSandboxNote(sandbox: NonNullable<ToolCallView['sandbox']>, openDiff: (path: string) => void): HTMLElement {
  const where = sandbox.writable ? 'Ran ahead in the sandbox' : 'Ran in the sandbox (workspace read-only, no network)';
  const note = h('div', { class: 'tool-sandbox' }, icon('shield'), h('span', {}, where));
  if (!sandbox.writable) return note;
  if (sandbox.changed.length === 0) {
    note.append(h('span', { class: 'tool-sandbox-none' }, ' · changed no file'));
    return note;
  }
  const files = h('span', { class: 'tool-sandbox-files' }, ' · changed ');
  sandbox.changed.forEach((path, index) => {
    if (index > 0) files.append(', ');
    files.append(button(path, () => openDiff(path), { class: 'link-button tool-sandbox-file', title: `Show the change to ${path}`, 'data-path': path }));
  });
  note.append(files);
  return note;
}

export function renderToolCall(call: ToolCallView, openDiff: (path: string) => void): HTMLElement {
  const status = h('span', { class: 'tool-status' }, icon(STATUS_ICON[call.status], call.status === 'running' ? 'spin' : ''), srOnly(`${STATUS_TEXT[call.status]}: `));
  const head = h(
    'div',
    { class: 'tool-head' },
    status,
    h('span', { class: 'tool-name' }, call.tool),
    call.summary ? h('span', { class: 'tool-summary', title: call.summary }, call.summary) : null,
  );
  const row = h('li', { class: `tool-call status-${call.status}`, 'data-call-id': call.callId, 'data-status': call.status }, head);
  if (call.sandbox) append(row, renderSandboxNote(call.sandbox, openDiff));
  if (call.progress && call.progress.length > 0) append(row, renderProgressFold(call.progress, call.status === 'running'));
  const result = call.result ?? '';
  if (result.trim() !== '') {
    const lines = result.replace(/\n+$/, '').split('\n');
    const pre = h('pre', { class: 'tool-result', tabindex: '0' }, result.replace(/\n+$/, ''));
    if (lines.length <= SHORT_RESULT_LINES && result.length <= SHORT_RESULT_CHARS) append(row, pre);
    else {
      const label = call.status === 'error' ? 'Error output' : 'Output';
      append(row, h('details', { class: 'tool-fold' }, h('summary', {}, icon('chevron', 'fold-chevron'), `${label} · ${lines.length} lines`), pre));
    }
  }
  return row;
}
