// Why a speculation stopped, in the user's words: the step it stopped before (the command, the file),
// why that needs them, and what Tab does now. Built from the gate's boundary and the tool call it
// stopped at; the gate's own detail stays for the log and the CLI. Pure (no vscode import).
import type { Boundary } from '../../core/followup/speculationToolGate';
import type { ToolCallRecord } from '../../core/followup/speculation';

/** Longest command or path quoted in the sentence; the status line has one line to spare. */
const MAX_SUBJECT = 60;

function quoted(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  const short = line.length > MAX_SUBJECT ? `${line.slice(0, MAX_SUBJECT - 1)}…` : line;
  // A backtick inside would end the code span early.
  return `\`${short.replace(/`/g, "'")}\``;
}

function argument(record: ToolCallRecord | undefined, ...keys: string[]): string | undefined {
  for (const key of keys) {
    const value = record?.args?.[key];
    if (typeof value === 'string' && value.trim() !== '') return value;
  }
  return undefined;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** "Tab …": what accepting does from here, given how much already ran ahead. */
function tabDoes(done: number, then: string): string {
  return done > 0 ? `Tab applies the ${plural(done, 'finished step')}, then ${then}.` : `Tab ${then}.`;
}

/**
 * The sentence for the status line (inline markdown), e.g. "Stopped before `npm test`: it may
 * change files. Tab runs it with your approval."
 */
export function boundarySentence(boundary: Boundary, record: ToolCallRecord | undefined, finishedCalls: number): string {
  switch (boundary.type) {
    case 'shell': {
      const command = argument(record, 'command');
      if (!command) return `Stopped before a shell command without a command line. ${tabDoes(finishedCalls, 'continues live')}`;
      const why = /would not see the speculated edits/.test(boundary.detail) ? 'it would not see the edits made ahead' : 'it may change files';
      return `Stopped before ${quoted(command)}: ${why}. ${tabDoes(finishedCalls, 'runs it with your approval')}`;
    }
    case 'edit': {
      const file = argument(record, 'file_path', 'path');
      const mode = /in (\S+) mode/.exec(boundary.detail)?.[1];
      const verb = record?.name === 'write_file' ? 'writing' : 'editing';
      const target = file ? `${verb} ${quoted(file)}` : 'an edit';
      return `Stopped before ${target}: edits ask first${mode ? ` in ${mode} mode` : ''}. ${tabDoes(finishedCalls, 'asks you for it')}`;
    }
    case 'path': {
      const path = argument(record, 'file_path', 'path', 'directory');
      return `Stopped before ${path ? quoted(path) : 'a path'}: it is outside this folder. ${tabDoes(finishedCalls, 'continues live')}`;
    }
    case 'denied_tool': {
      if (/network/.test(boundary.detail)) {
        const url = argument(record, 'url', 'query');
        return `Stopped before ${url ? `fetching ${quoted(url)}` : 'a web request'}: the network needs your consent. ${tabDoes(finishedCalls, 'asks you for it')}`;
      }
      const why = /needs you: (.*)$/.exec(boundary.detail)?.[1] ?? 'it needs you';
      return `Stopped where the next step needs you (${why}). ${tabDoes(finishedCalls, 'continues live')}`;
    }
    case 'unknown_tool':
      return `Stopped before ${quoted(boundary.tool)}: it is not a built-in tool. ${tabDoes(finishedCalls, 'continues live')}`;
    case 'limit':
      return `Stopped ${boundary.detail.replace(/^stopped\s+/, '')}. ${tabDoes(finishedCalls, 'continues live')}`;
  }
}

/** The sentence as a screen reader should hear it (no code marks). */
export function spokenSentence(sentence: string): string {
  return sentence.replace(/`/g, '');
}
