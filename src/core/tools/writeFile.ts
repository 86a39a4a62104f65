// write_file: creates or replaces a whole workspace file (parent folders are created).
import type { WriteExpectation } from '../fs/workspaceFs';
import { defineTool, failure, oneLine, specialFileRefusal, success } from './toolSupport';

function countLines(text: string): number {
  if (text === '') return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

export const writeFileTool = defineTool({
  name: 'write_file',
  kind: 'write',
  description:
    'Writes content to a file in the workspace, replacing it if it exists and creating it (and its folders) if not. ' +
    'Prefer edit for changing part of an existing file.',
  properties: {
    file_path: { type: 'string', description: 'Path of the file, relative to the workspace root or absolute inside it.' },
    content: { type: 'string', description: 'The complete new content of the file.' },
  },
  required: ['file_path', 'content'],
  pathArgs: ['file_path'],
  summarize(args) {
    const lines = typeof args.content === 'string' ? ` · ${countLines(args.content)} lines` : '';
    return `${oneLine(args.file_path)}${lines}`;
  },
  async preview(args, { fs }) {
    const content = args.string('content', { allowEmpty: true });
    const file = await fs.resolve(args.string('file_path'));
    const existing = file === '' ? undefined : await fs.stat(file);
    if (file === '' || (existing && existing.type !== 'file')) return undefined;
    return { path: file, before: existing ? await fs.readFile(file) : undefined, after: Buffer.from(content, 'utf8') };
  },
  async run(args, { fs, signal }) {
    const requested = args.string('file_path');
    const content = args.string('content', { allowEmpty: true });
    const file = await fs.resolve(requested);
    if (file === '') return failure('write_file needs a file path, not the workspace folder.');
    const existing = await fs.stat(file);
    if (existing?.type === 'directory') return failure(`${file} is a directory; give the path of a file.`);
    if (existing?.type === 'special') return specialFileRefusal(file, 'write_file');
    // Replaces the file only as it was when looked at: a change that lands meanwhile is reported, not
    // lost. Its size and mtime, not its bytes: reading them would count as the model having seen them.
    const expect: WriteExpectation = existing ? { exists: true, size: existing.size, mtimeMs: existing.mtimeMs } : { exists: false };
    await fs.writeFile(file, content, { signal, expect });
    const size = `${countLines(content)} lines, ${Buffer.byteLength(content, 'utf8')} bytes`;
    return success(`${existing ? 'Overwrote' : 'Created'} ${file} (${size}).`, [file]);
  },
});
