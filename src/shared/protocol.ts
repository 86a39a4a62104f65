// The one typed message protocol between the extension host (src/vscode/chat/chatView.ts) and the chat
// webview (src/webview/); both sides import it. Runtime validators guard each direction.
//
// Conversation order (what the host sends, what it hears back):
//   load        webview → ready;  host → init (full snapshot; resent whenever the webview reloads)
//   a turn      webview → submit{text};  host → userMessage, turnState{busy:true},
//               assistantStart, assistantDelta…, assistantEnd, toolGroupStart, toolCallUpdate…,
//               (approvalRequest → webview → approvalAnswer → host → approvalResolved),
//               toolGroupEnd, [more assistant/tool rounds], turnState{busy:false}
//   suggestion  host → suggestion{id,text}, speculation{state:'running'…} … speculation{state:'ready'}
//   Tab         webview → acceptSuggestion{suggestionId, method:'tab'};  host → suggestionCleared,
//               appendItems{items} (the speculated turn at once), notice, speculation{state:'idle'},
//               and the pipelined suggestion{…}. If files changed meanwhile: conflicts{…} →
//               webview → conflictChoice… → host → conflictResolved per file.
//   preview     while a speculation runs, host → speculationPreview{preview} after each change: its
//               turns, which the webview renders off-screen, and (once known) the pipelined suggestion.
//   Tab, one    when the webview holds a final preview of the shown suggestion, Tab reveals it in the
//   frame       same frame, marked "applying…": webview → acceptRevealed{suggestionId, seq};
//               host → revealAnswer{seq, outcome}: 'applied' (then notice, speculation{idle}, the
//               pipelined suggestion{…}), 'conflicts' (then conflicts{…} as above, and 'applied' once
//               every file is settled) or 'withdrawn' (the block leaves the transcript; what the host
//               does instead follows the usual way: appendItems for a stale preview, a notice and a
//               live turn when the apply failed).
//   dismiss     webview → suggestionDismissed{suggestionId, why};  host aborts the speculation and
//               sends suggestionCleared + speculation{state:'idle'}.
//   MCP         host → mcpServers{view} after ready and on every change of a server; webview →
//               mcpAction{restart | allow (with the definition's hash it showed) | showLog | openSettings}.
// Ids (message, tool group, approval, error, notice, conflict set, suggestion) are chosen by the
// host and unique within one chat; the webview only echoes them back.
//
// The types live in views.ts (what the chat shows) and messages.ts (the two directions); the runtime
// validators in guards.ts. Both sides import this file only.

export * from './views';
export * from './messages';
export { isTranscriptItem, parseHostMessage, parseWebviewMessage } from './guards';

/** The wording of the notice after an accepted speculation, kept here so every front says it alike. */
export function speculationNoticeText(toolCalls: number, savedMs: number): string {
  const calls = `Speculated ${toolCalls} tool call${toolCalls === 1 ? '' : 's'}`;
  const seconds = Math.max(0, savedMs) / 1000;
  return `${calls} · ${seconds < 10 ? seconds.toFixed(1) : Math.round(seconds)} s saved`;
}
