// list_directory: the entries of one workspace directory, directories first, with a `/` suffix.
import { globToRegExp } from '../fs/globMatch';
import { defineTool, displayPath, failure, oneLine, specialFileRefusal, success } from './toolSupport';

export const LIST_MAX_ENTRIES = 1000;

export const listDirectoryTool = defineTool({
  name: 'list_directory',
  kind: 'read',
  description:
    'Lists the files and subdirectories of a workspace directory (directories end with "/"). ' +
    'ignore takes glob patterns matched against entry names to leave out (e.g. ["*.log", "dist"]).',
  properties: {
    path: { type: 'string', description: 'Directory to list, relative to the workspace root ("." for the root) or absolute inside it.' },
    ignore: { type: 'array', items: { type: 'string' }, description: 'Glob patterns of entry names to leave out (optional).' },
  },
  required: ['path'],
  pathArgs: ['path'],
  summarize(args) {
    return oneLine(args.path) || '.';
  },
  async run(args, { fs }) {
    const requested = args.string('path', { allowEmpty: true });
    const ignore = (args.optionalStringArray('ignore') ?? []).map((pattern) => globToRegExp(pattern));
    const dir = await fs.resolve(requested);
    const info = await fs.stat(dir);
    if (!info) return failure(`Directory not found: ${displayPath(dir)}. Check the path (glob can find files by name).`);
    if (info.type === 'special') return specialFileRefusal(dir, 'list_directory');
    if (info.type !== 'directory') return failure(`${dir} is a file, not a directory; use read_file to read it.`);
    const entries = (await fs.list(dir)).filter((entry) => entry.name !== '.git' && !ignore.some((regex) => regex.test(entry.name)));
    if (entries.length === 0) return success(`Directory ${displayPath(dir)} is empty${ignore.length > 0 ? ' (after ignore patterns)' : ''}.`);
    const sorted = [
      ...entries.filter((entry) => entry.type === 'directory').map((entry) => `${entry.name}/`),
      ...entries.filter((entry) => entry.type === 'file').map((entry) => entry.name),
    ];
    const shown = sorted.slice(0, LIST_MAX_ENTRIES);
    let output = `Directory ${displayPath(dir)} (${entries.length} entries):\n${shown.join('\n')}`;
    if (sorted.length > shown.length) output += `\n[${sorted.length - shown.length} more entries not shown; use glob to narrow down.]`;
    return success(output);
  },
});
