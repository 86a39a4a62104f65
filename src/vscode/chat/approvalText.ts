// What an approval shows beyond its summary: the command, the file and the size of the change, the
// change itself, and the warning for a protected file. Pure (no vscode import).
import type { ApprovalRequest } from '../../core/chat/approvals';

/** What an approval shows beyond its summary: the command, the file and the size of the change. */
export function approvalDetail(request: Pick<ApprovalRequest, 'tool' | 'args' | 'summary' | 'change'>): string {
  const base = callDetail(request);
  const change = request.change;
  if (!change) return base;
  // The change itself, so the user judges what will be written and not a summary of it.
  const warning = change.protected
    ? `Protected file: ${change.path} — ${change.protected.why} (it matches "${change.protected.pattern}" in speculate.protectedPaths).`
    : undefined;
  return [warning, base, change.diff].filter((part) => part !== undefined && part !== '').join('\n\n');
}

function callDetail(request: Pick<ApprovalRequest, 'tool' | 'args' | 'summary'>): string {
  const args = request.args;
  const str = (key: string) => (typeof args[key] === 'string' ? (args[key] as string) : '');
  switch (request.tool) {
    case 'run_shell_command':
      return str('directory') ? `${str('command')}\n(in ${str('directory')})` : str('command');
    case 'edit': {
      const removed = str('old_string').split('\n').length;
      const added = str('new_string').split('\n').length;
      return `${str('file_path')}: replace ${removed} line${removed === 1 ? '' : 's'} with ${added}${args.replace_all === true ? ' (every occurrence)' : ''}`;
    }
    case 'write_file':
      return `${str('file_path')}: write ${str('content').split('\n').length} lines`;
    case 'web_fetch':
      return str('url');
    case 'web_search':
      return str('query');
    case 'exit_plan_mode':
      // The plan card shows the whole plan: it is what the user approves.
      return str('plan');
    default:
      // An MCP call is judged on its arguments, as a command is on its text: all of them, as sent.
      if (request.tool.startsWith('mcp__')) return `${request.summary}\n${JSON.stringify(args, null, 2)}`;
      return request.summary;
  }
}
