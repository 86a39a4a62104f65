// edit: replaces an exact piece of text in a workspace file (or creates a file when old_string is
// empty). When the text is not found or not unique, the error tells the model what to do instead.
import { defineTool, expectationOf, failure, isValidUtf8, oneLine, specialFileRefusal, success, type ArgReader } from './toolSupport';
import type { ToolContext } from './types';

function bigrams(text: string): Map<string, number> {
  const grams = new Map<string, number>();
  const flat = text.replace(/\s+/g, ' ').trim();
  for (let i = 0; i < flat.length - 1; i++) {
    const gram = flat.slice(i, i + 2);
    grams.set(gram, (grams.get(gram) ?? 0) + 1);
  }
  return grams;
}

/** Dice coefficient over character bigrams: 1 = same text, 0 = nothing in common. */
function similarity(a: string, b: string): number {
  const left = bigrams(a);
  const right = bigrams(b);
  let total = 0;
  let shared = 0;
  for (const count of left.values()) total += count;
  for (const count of right.values()) total += count;
  for (const [gram, count] of left) shared += Math.min(count, right.get(gram) ?? 0);
  return total === 0 ? 0 : (2 * shared) / total;
}

function numbered(lines: string[], from: number, to: number): string {
  const out: string[] = [];
  for (let i = Math.max(0, from); i <= Math.min(lines.length - 1, to); i++) out.push(`${i + 1}: ${lines[i]}`);
  return out.join('\n');
}

/** Explains a failed match: whitespace-only differences first, else the most similar line. */
function explainMissing(file: string, content: string, oldString: string): string {
  const head = `old_string was not found in ${file}.`;
  const fileLines = content.split('\n').map((line) => line.replace(/\r$/, ''));
  const wantedLines = oldString.replace(/\r/g, '').split('\n');
  while (wantedLines.length > 1 && wantedLines[wantedLines.length - 1].trim() === '') wantedLines.pop();
  while (wantedLines.length > 1 && wantedLines[0].trim() === '') wantedLines.shift();
  const trimmedWanted = wantedLines.map((line) => line.trim());
  for (let start = 0; start + trimmedWanted.length <= fileLines.length; start++) {
    if (trimmedWanted.every((line, offset) => fileLines[start + offset].trim() === line)) {
      const end = start + trimmedWanted.length - 1;
      return `${head} Lines ${start + 1}–${end + 1} match it except for indentation or spacing; copy the exact text (from read_file) into old_string:\n${numbered(fileLines, start, end)}`;
    }
  }
  const probe = wantedLines.find((line) => line.trim() !== '') ?? '';
  let best = -1;
  let bestScore = 0;
  fileLines.forEach((line, index) => {
    const score = similarity(probe, line);
    if (score > bestScore) {
      bestScore = score;
      best = index;
    }
  });
  if (best >= 0 && bestScore >= 0.5) {
    return `${head} The closest text is around line ${best + 1}:\n${numbered(fileLines, best - 2, best + 2)}\nRead the file again and copy old_string exactly, including whitespace.`;
  }
  return `${head} Read the file again (read_file) and copy old_string exactly, including whitespace.`;
}

/** What an edit call would do: the bytes before and after, or why it cannot run. Writes nothing. */
export type EditPlan = { kind: 'refuse'; output: string } | { kind: 'write'; path: string; before: Uint8Array | undefined; after: Uint8Array; output: string };

/** Byte offsets of every non-overlapping occurrence of `needle`. */
function occurrences(haystack: Buffer, needle: Buffer): number[] {
  const positions: number[] = [];
  for (let at = haystack.indexOf(needle); at >= 0; at = haystack.indexOf(needle, at + needle.length)) positions.push(at);
  return positions;
}

/** 1-based line of a byte offset. */
function lineAtByte(data: Buffer, offset: number): number {
  let line = 1;
  for (let i = data.indexOf(0x0a); i >= 0 && i < offset; i = data.indexOf(0x0a, i + 1)) line++;
  return line;
}

/**
 * Plans the edit on the file's bytes, not on decoded text: every byte outside the replaced range
 * stays exactly as it was, so a Latin-1 or otherwise non-UTF-8 file keeps its other bytes.
 */
export async function planEdit(args: ArgReader, { fs }: Pick<ToolContext, 'fs'>): Promise<EditPlan> {
  const refuse = (output: string): EditPlan => ({ kind: 'refuse', output });
  const requested = args.string('file_path');
  let oldString = args.string('old_string', { allowEmpty: true });
  let newString = args.string('new_string', { allowEmpty: true });
  const replaceAll = args.optionalBoolean('replace_all') ?? false;
  const file = await fs.resolve(requested);
  if (file === '') return refuse('edit needs a file path, not the workspace folder.');
  const info = await fs.stat(file);

  if (!info) {
    if (oldString !== '') return refuse(`File not found: ${file}. To create it, call edit with an empty old_string (or use write_file).`);
    return { kind: 'write', path: file, before: undefined, after: Buffer.from(newString, 'utf8'), output: `Created ${file}.` };
  }
  if (info.type === 'directory') return refuse(`${file} is a directory; give the path of a file.`);
  if (info.type === 'special') return refuse(specialFileRefusal(file, 'edit').output);
  const raw = await fs.readFile(file);
  const data = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  if (data.includes(0)) return refuse(`Cannot edit ${file}: binary file, ${data.length} bytes.`);

  if (oldString === '') {
    if (data.length !== 0) return refuse(`${file} already exists and is not empty; give the text to replace in old_string, or use write_file to replace the whole file.`);
    return { kind: 'write', path: file, before: data, after: Buffer.from(newString, 'utf8'), output: `Wrote ${file}.` };
  }
  if (oldString === newString) return refuse('old_string and new_string are the same; nothing would change.');
  if (!isValidUtf8(data) && (oldString.includes('\uFFFD') || newString.includes('\uFFFD'))) {
    return refuse(
      `${file} is not valid UTF-8 (another encoding such as Latin-1), so read_file shows some of its bytes as \uFFFD. ` +
        'Those bytes cannot be matched or written back as text: choose old_string and new_string without \uFFFD. Every byte outside old_string is kept exactly as it is.',
    );
  }

  // Models write "\n"; keep a CRLF file CRLF rather than failing or mixing line endings.
  if (data.includes('\r\n') && !oldString.includes('\r')) {
    oldString = oldString.replace(/\n/g, '\r\n');
    newString = newString.replace(/\r?\n/g, '\r\n');
  }

  const oldBytes = Buffer.from(oldString, 'utf8');
  const newBytes = Buffer.from(newString, 'utf8');
  const positions = occurrences(data, oldBytes);
  if (positions.length === 0) return refuse(explainMissing(file, data.toString('utf8'), oldString));
  if (positions.length > 1 && !replaceAll) {
    const lines = positions.slice(0, 10).map((position) => lineAtByte(data, position));
    return refuse(
      `old_string occurs ${positions.length} times in ${file} (lines ${lines.join(', ')}${positions.length > 10 ? ', …' : ''}). ` +
        'Include more surrounding lines to make it unique, or set replace_all to true to replace every occurrence.',
    );
  }
  const replaced = replaceAll ? positions : positions.slice(0, 1);
  const parts: Buffer[] = [];
  let from = 0;
  for (const at of replaced) {
    parts.push(data.subarray(from, at), newBytes);
    from = at + oldBytes.length;
  }
  parts.push(data.subarray(from));
  const firstLine = lineAtByte(data, positions[0]);
  const what = positions.length === 1 ? `1 occurrence (line ${firstLine})` : `${positions.length} occurrences (first at line ${firstLine})`;
  return { kind: 'write', path: file, before: data, after: Buffer.concat(parts), output: `Edited ${file}: replaced ${what}.` };
}

export const editTool = defineTool({
  name: 'edit',
  kind: 'write',
  description:
    'Replaces exact text in a file. old_string must match the file exactly (including whitespace and indentation) and ' +
    'be unique unless replace_all is true; include a few surrounding lines to make it unique. ' +
    'With an empty old_string and a file that does not exist yet, creates the file with new_string.',
  properties: {
    file_path: { type: 'string', description: 'Path of the file, relative to the workspace root or absolute inside it.' },
    old_string: { type: 'string', description: 'The exact text to replace (empty to create a new file).' },
    new_string: { type: 'string', description: 'The text to put in its place.' },
    replace_all: { type: 'boolean', description: 'Replace every occurrence instead of exactly one (optional, default false).' },
  },
  required: ['file_path', 'old_string', 'new_string'],
  pathArgs: ['file_path'],
  summarize(args) {
    const all = args.replace_all === true ? ' · all occurrences' : '';
    const create = args.old_string === '' ? ' · create' : '';
    return `${oneLine(args.file_path)}${create}${all}`;
  },
  async preview(args, context) {
    const plan = await planEdit(args, context);
    return plan.kind === 'write' ? { path: plan.path, before: plan.before, after: plan.after } : undefined;
  },
  async run(args, context) {
    const plan = await planEdit(args, context);
    if (plan.kind === 'refuse') return failure(plan.output);
    await context.fs.writeFile(plan.path, plan.after, { signal: context.signal, expect: expectationOf(plan.before) });
    return success(plan.output, [plan.path]);
  },
});
