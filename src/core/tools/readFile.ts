// read_file: the text of one workspace file, paged by lines. Output is the file's text as is (no
// line-number prefixes), so the model can copy it into edit's old_string unchanged.
import { defineTool, displayPath, failure, isValidUtf8, oneLine, specialFileRefusal, success } from './toolSupport';

/** Without an explicit limit, at most this many lines are returned… */
export const READ_DEFAULT_LINES = 2000;
/** …and at most this many bytes of text. */
export const READ_MAX_BYTES = 256 * 1024;
/** A single line longer than this is cut (minified files). */
export const READ_MAX_LINE_CHARS = 2000;
/** Files larger than this are not read at all; grep_search can still find text in them. */
export const READ_MAX_FILE_BYTES = 20 * 1024 * 1024;

function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

export const readFileTool = defineTool({
  name: 'read_file',
  kind: 'read',
  description:
    'Reads a text file from the workspace and returns its content exactly as stored (no line numbers). ' +
    `Long files are returned in pages: by default at most ${READ_DEFAULT_LINES} lines / ${READ_MAX_BYTES / 1024} KB; ` +
    'use offset (0-based line to start at) and limit (number of lines) to read further.',
  properties: {
    file_path: { type: 'string', description: 'Path of the file, relative to the workspace root or absolute inside it.' },
    offset: { type: 'number', description: '0-based line number to start reading at (optional).' },
    limit: { type: 'number', description: 'Maximum number of lines to read (optional).' },
  },
  required: ['file_path'],
  pathArgs: ['file_path'],
  summarize(args) {
    const file = oneLine(args.file_path);
    const offset = typeof args.offset === 'number' ? args.offset : undefined;
    const limit = typeof args.limit === 'number' ? args.limit : undefined;
    if (offset === undefined && limit === undefined) return file;
    const first = (offset ?? 0) + 1;
    return limit === undefined ? `${file} · from line ${first}` : `${file} · lines ${first}–${first + limit - 1}`;
  },
  async run(args, { fs }) {
    const requested = args.string('file_path');
    const offset = args.optionalInteger('offset', 0);
    const limit = args.optionalInteger('limit', 1);
    const file = await fs.resolve(requested);
    const info = await fs.stat(file);
    if (!info) return failure(`File not found: ${displayPath(file)}. Check the path (glob or list_directory can find it).`);
    if (info.type === 'directory') return failure(`${displayPath(file)} is a directory; use list_directory to see what it contains.`);
    if (info.type === 'special') return specialFileRefusal(file, 'read_file');
    if (info.size > READ_MAX_FILE_BYTES) {
      return failure(`${file} is too large to read (${formatSize(info.size)}); use grep_search to find the lines you need.`);
    }
    const data = await fs.readFile(file);
    // The same rule as grep_search and edit: a NUL byte anywhere makes a file binary.
    if (data.includes(0)) {
      return failure(`Cannot show ${file}: binary file, ${data.length} bytes.`);
    }
    if (data.length === 0) return success(`(${file} is empty)`);

    const text = Buffer.from(data).toString('utf8');
    const lines = text.split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    const total = lines.length;
    const start = offset ?? 0;
    if (start >= total) return failure(`offset ${start} is past the end of ${file}, which has ${total} lines (offsets are 0-based).`);

    const wanted = Math.min(total, start + (limit ?? READ_DEFAULT_LINES));
    const shown: string[] = [];
    let bytes = 0;
    let cutLines = 0;
    for (let index = start; index < wanted; index++) {
      let line = lines[index];
      if (line.length > READ_MAX_LINE_CHARS) {
        line = `${line.slice(0, READ_MAX_LINE_CHARS)}… [line cut: ${line.length} characters]`;
        cutLines++;
      }
      const size = Buffer.byteLength(line, 'utf8') + 1;
      if (shown.length > 0 && bytes + size > READ_MAX_BYTES) break;
      shown.push(line);
      bytes += size;
    }
    const end = start + shown.length;
    let output = shown.join('\n');
    const notes: string[] = [];
    if (start > 0 || end < total) {
      notes.push(`Showing lines ${start + 1}–${end} of ${total} in ${file}.` + (end < total ? ` To read more, call read_file with offset=${end}.` : ''));
    }
    if (cutLines > 0) notes.push(`${cutLines} very long line(s) were cut at ${READ_MAX_LINE_CHARS} characters.`);
    if (!isValidUtf8(data)) notes.push(`${file} is not valid UTF-8: bytes in another encoding are shown as \uFFFD; edit keeps them as they are but cannot match text containing \uFFFD.`);
    if (notes.length > 0) output += `\n\n[${notes.join(' ')}]`;
    return success(output);
  },
});
