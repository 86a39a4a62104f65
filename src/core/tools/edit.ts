// edit: replaces an exact piece of text in a workspace file (or creates a file when old_string is
// empty). When the text is not found or not unique, the error tells the model what to do instead.
import { defineTool, failure, oneLine, specialFileRefusal, success } from './toolSupport';

function countOccurrences(text: string, needle: string): number[] {
  const positions: number[] = [];
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length)) positions.push(at);
  return positions;
}

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < index; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

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
  async run(args, { fs, signal }) {
    const requested = args.string('file_path');
    let oldString = args.string('old_string', { allowEmpty: true });
    let newString = args.string('new_string', { allowEmpty: true });
    const replaceAll = args.optionalBoolean('replace_all') ?? false;
    const file = await fs.resolve(requested);
    if (file === '') return failure('edit needs a file path, not the workspace folder.');
    const info = await fs.stat(file);

    if (!info) {
      if (oldString !== '') return failure(`File not found: ${file}. To create it, call edit with an empty old_string (or use write_file).`);
      await fs.writeFile(file, newString, { signal });
      return success(`Created ${file}.`, [file]);
    }
    if (info.type === 'directory') return failure(`${file} is a directory; give the path of a file.`);
    if (info.type === 'special') return specialFileRefusal(file, 'edit');
    const data = await fs.readFile(file);
    if (data.includes(0)) return failure(`Cannot edit ${file}: binary file, ${data.length} bytes.`);
    const content = Buffer.from(data).toString('utf8');

    if (oldString === '') {
      if (content !== '') return failure(`${file} already exists and is not empty; give the text to replace in old_string, or use write_file to replace the whole file.`);
      await fs.writeFile(file, newString, { signal });
      return success(`Wrote ${file}.`, [file]);
    }
    if (oldString === newString) return failure('old_string and new_string are the same; nothing would change.');

    // Models write "\n"; keep a CRLF file CRLF rather than failing or mixing line endings.
    if (content.includes('\r\n') && !oldString.includes('\r')) {
      oldString = oldString.replace(/\n/g, '\r\n');
      newString = newString.replace(/\r?\n/g, '\r\n');
    }

    const positions = countOccurrences(content, oldString);
    if (positions.length === 0) return failure(explainMissing(file, content, oldString));
    if (positions.length > 1 && !replaceAll) {
      const lines = positions.slice(0, 10).map((position) => lineOf(content, position));
      return failure(
        `old_string occurs ${positions.length} times in ${file} (lines ${lines.join(', ')}${positions.length > 10 ? ', …' : ''}). ` +
          'Include more surrounding lines to make it unique, or set replace_all to true to replace every occurrence.',
      );
    }
    const updated = replaceAll ? content.split(oldString).join(newString) : content.slice(0, positions[0]) + newString + content.slice(positions[0] + oldString.length);
    await fs.writeFile(file, updated, { signal });
    const firstLine = lineOf(content, positions[0]);
    const what = positions.length === 1 ? `1 occurrence (line ${firstLine})` : `${positions.length} occurrences (first at line ${firstLine})`;
    return success(`Edited ${file}: replaced ${what}.`, [file]);
  },
});
