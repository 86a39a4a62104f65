// Context the user attaches to a message (@file, @selection, @problems), written once into the text
// of the user message itself: it then sits in the history, so every later fork repeats it byte for byte.
import { PathOutsideWorkspaceError, type WorkspaceFs } from '../fs/workspaceFs';

/** An attached file is cut at this many bytes… */
export const ATTACHMENT_MAX_BYTES = 64 * 1024;
/** …or this many lines, whichever comes first: it rides along in every later request. */
export const ATTACHMENT_MAX_LINES = 1500;
/** Larger files are not read at all (their first 64 KB would rarely be the part that matters). */
export const ATTACHMENT_MAX_READ_BYTES = 8 * 1024 * 1024;

export interface Problem {
  /** 1-based. */
  line: number;
  column: number;
  severity: 'error' | 'warning' | 'info' | 'hint';
  message: string;
  /** e.g. "ts(2304)"; empty when the reporter gave none. */
  source: string;
}

export type Attachment =
  | { kind: 'file'; path: string; text: string; /** lines left out at the end */ cutLines: number }
  | { kind: 'selection'; path: string; startLine: number; endLine: number; text: string }
  | { kind: 'problems'; path: string; problems: Problem[] };

/** Where the user's words end and the attached context begins, in a composed message. */
export const CONTEXT_OPENING = '\n\n<attached_context>\n';
const CONTEXT_CLOSING = '</attached_context>';

/** Double quotes and line breaks cannot end an attribute early: a path is data, not markup. */
function attribute(value: string): string {
  return value.replace(/["\r\n]/g, (ch) => (ch === '"' ? "'" : ' '));
}

function block(attachment: Attachment): string {
  switch (attachment.kind) {
    case 'file': {
      const note = attachment.cutLines > 0 ? `\n[${attachment.cutLines} more lines not attached; read_file can read them]` : '';
      return `<file path="${attribute(attachment.path)}">\n${withNewline(attachment.text)}</file>${note}`;
    }
    case 'selection':
      return `<selection path="${attribute(attachment.path)}" lines="${attachment.startLine}-${attachment.endLine}">\n${withNewline(attachment.text)}</selection>`;
    case 'problems': {
      const lines = attachment.problems.map(
        (p) => `${attachment.path}:${p.line}:${p.column} ${p.severity}: ${p.message.replace(/\s*\n\s*/g, ' ')}${p.source ? ` [${p.source}]` : ''}`,
      );
      const body = lines.length > 0 ? lines.join('\n') : 'No problems reported.';
      return `<problems path="${attribute(attachment.path)}">\n${body}\n</problems>`;
    }
  }
}

function withNewline(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`;
}

/**
 * The user message's content: the user's words, then each attachment in a fixed form. Called once
 * when the message is sent; the result is stored as is and never re-rendered, so forks that replay
 * the history send exactly these bytes.
 */
export function composeUserMessage(text: string, attachments: readonly Attachment[]): string {
  if (attachments.length === 0) return text;
  return `${text}${CONTEXT_OPENING}${attachments.map(block).join('\n')}\n${CONTEXT_CLOSING}`;
}

/** The user's own words of a composed message (what the transcript shows and Edit puts back). */
export function userTextOf(content: string): string {
  const at = content.indexOf(CONTEXT_OPENING);
  return at < 0 ? content : content.slice(0, at);
}

/** The attached part of a composed message ('' without attachments), kept when the words are edited. */
export function attachedContextOf(content: string): string {
  const at = content.indexOf(CONTEXT_OPENING);
  return at < 0 ? '' : content.slice(at);
}

/** New words, the same attachments: what Edit & resend sends. */
export function replaceUserText(content: string, text: string): string {
  return `${text}${attachedContextOf(content)}`;
}

export type AttachmentResult = { ok: true; attachment: Attachment } | { ok: false; reason: string };

/**
 * A workspace file as an attachment, read through the workspace's file system (so a path that
 * leaves the workspace, a symlink out of it, a folder or a binary file is refused with a reason).
 */
export async function readFileAttachment(fs: WorkspaceFs, requested: string): Promise<AttachmentResult> {
  let path: string;
  try {
    path = await fs.resolve(requested);
  } catch (error) {
    if (error instanceof PathOutsideWorkspaceError) return { ok: false, reason: `${requested} is outside the workspace, so it cannot be attached.` };
    throw error;
  }
  const info = await fs.stat(path);
  if (!info) return { ok: false, reason: `${requested} does not exist (any more).` };
  if (info.type !== 'file') return { ok: false, reason: `${path} is a folder; attach the files in it instead.` };
  if (info.size > ATTACHMENT_MAX_READ_BYTES) return { ok: false, reason: `${path} is too large to attach (${Math.round(info.size / 1024 / 1024)} MB); attach a selection of it instead.` };
  const data = await fs.readFile(path);
  if (data.includes(0)) return { ok: false, reason: `${path} is a binary file, so it cannot be attached as text.` };
  const text = Buffer.from(data.subarray(0, ATTACHMENT_MAX_BYTES)).toString('utf8');
  const all = Buffer.from(data).toString('utf8').split('\n');
  if (all[all.length - 1] === '') all.pop();
  let kept = text.split('\n');
  if (data.length > ATTACHMENT_MAX_BYTES) kept.pop(); // a line cut in the middle is left out whole
  else if (kept[kept.length - 1] === '') kept.pop();
  kept = kept.slice(0, ATTACHMENT_MAX_LINES);
  return { ok: true, attachment: { kind: 'file', path, text: kept.length > 0 ? `${kept.join('\n')}\n` : '', cutLines: all.length - kept.length } };
}

/** The chip's words for an attachment, e.g. "greet.ts:3-5". */
export function attachmentLabel(attachment: Attachment): string {
  const name = attachment.path.split('/').pop() || attachment.path;
  switch (attachment.kind) {
    case 'file':
      return name;
    case 'selection':
      return attachment.startLine === attachment.endLine ? `${name}:${attachment.startLine}` : `${name}:${attachment.startLine}-${attachment.endLine}`;
    case 'problems':
      return `problems in ${name} (${attachment.problems.length})`;
  }
}
