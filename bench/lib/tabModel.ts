// The scripted model of the Tab benchmark: two fast warm-up answers, then a suggestion whose task
// takes three paced tool-using turns (read_file → edit → write_file) and a final answer.
import type { ChatRequestBody, ScriptedReply } from '../../test/fixtures/scriptedServer';
import { isSuggestionPrompt } from '../../test/fixtures/scripted/demoScript';

/** A realistic pace for the task's replies: time to first token, then tokens per second. */
export const TASK_PACE = { latencyMs: 600, tokensPerSecond: 50 };
/** Warm-up answers and suggestions: as fast as the server goes, so samples stay short. */
const FAST = { latencyMs: 0 };

export function warmUpPrompts(sample: number): [string, string] {
  return [`bench sample ${sample}: say ok`, `bench sample ${sample}: say ok again`];
}

/** What the model predicts after the warm-ups, and what the speculation-off mode types. */
export function taskPrompt(sample: number): string {
  return `add a farewell to src/feature${sample}.ts and note it in notes/feature${sample}.md`;
}

/** The last words of the final answer: once they are in the DOM the whole answer is rendered. */
export function finalMarker(sample: number): string {
  return `That completes feature ${sample}.`;
}

/** The source file each sample's task edits (written into the workspace before the run). */
export function featureFile(sample: number): { path: string; content: string } {
  return { path: `src/feature${sample}.ts`, content: `export function hello${sample}(name: string): string {\n  return \`Hello, \${name}!\`;\n}\n` };
}

interface Message {
  role: string;
  content: string;
  toolNames: string[];
}

function readMessages(body: ChatRequestBody): Message[] {
  return (body.messages ?? []).map((raw) => {
    const content = typeof raw.content === 'string' ? raw.content : Array.isArray(raw.content) ? raw.content.map((p: { text?: unknown }) => String(p?.text ?? '')).join('') : '';
    const calls = Array.isArray(raw.tool_calls) ? (raw.tool_calls as Array<{ function?: { name?: unknown } }>) : [];
    return { role: String(raw.role), content, toolNames: calls.map((c) => String(c.function?.name ?? '')) };
  });
}

function lastIndex<T>(items: T[], predicate: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (predicate(items[i])) return i;
  return -1;
}

/**
 * The reply for one request of the Tab benchmark. `pace` is how the task's replies stream: the
 * live comparison needs TASK_PACE; runs that only measure Tab can take them as fast as they come.
 */
export function tabModelReply(body: ChatRequestBody, pace: { latencyMs: number; tokensPerSecond?: number } = TASK_PACE): ScriptedReply {
  const messages = readMessages(body);
  const users = messages.filter((m) => m.role === 'user');
  const sample = Number(/bench sample (\d+)/.exec(users[0]?.content ?? '')?.[1] ?? 0);
  const task = taskPrompt(sample);
  const lastUser = lastIndex(messages, (m) => m.role === 'user');
  const ask = messages[lastUser]?.content ?? '';

  if (isSuggestionPrompt(ask)) {
    // After the warm-ups the next step is the task; once the task is in the history, silence
    // (no pipelined suggestion, so nothing runs in the background after the measured render).
    const taskSeen = users.some((m) => m.content === task);
    return { text: taskSeen ? '' : task, ...FAST };
  }
  if (ask !== task) return { text: `ok ${users.length}`, ...FAST };

  const done = messages.slice(lastUser + 1).flatMap((m) => m.toolNames);
  const file = featureFile(sample).path;
  const notes = `notes/feature${sample}.md`;
  if (done.length === 0) {
    return { text: `Let me read \`${file}\` first to see what it exports.`, toolCalls: [{ name: 'read_file', arguments: { file_path: file } }], ...pace };
  }
  const last = done[done.length - 1];
  if (last === 'read_file') {
    return {
      text: `It exports \`hello${sample}\`. I'll add a \`farewell\` function right below it, written the same way.`,
      toolCalls: [{
        name: 'edit',
        arguments: {
          file_path: file,
          old_string: '  return `Hello, ${name}!`;\n}',
          new_string: '  return `Hello, ${name}!`;\n}\n\nexport function farewell(name: string): string {\n  return `Goodbye, ${name}!`;\n}',
        },
      }],
      ...pace,
    };
  }
  if (last === 'edit') {
    return {
      text: `The function is in. Now I'll note the change in \`${notes}\` so the team sees it.`,
      toolCalls: [{ name: 'write_file', arguments: { file_path: notes, content: `# Feature ${sample}\n\n- \`farewell(name)\` returns \`Goodbye, <name>!\`, next to \`hello${sample}\`.\n` } }],
      ...pace,
    };
  }
  return {
    text:
      `Done. \`${file}\` now exports \`farewell(name)\`, which returns \`Goodbye, <name>!\` exactly as \`hello${sample}\` ` +
      `returns \`Hello, <name>!\`, and \`${notes}\` records the change in one line. Nothing else in the workspace changed, ` +
      `so existing callers keep working. If you want, the next step is a small test that calls both functions and checks ` +
      `their output. ${finalMarker(sample)}`,
    ...pace,
  };
}
