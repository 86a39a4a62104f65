// grep_search: lines matching a regular expression across workspace files, grouped by file.
import { SearchPatternError } from '../fs/textSearch';
import { defineTool, displayPath, failure, oneLine, success } from './toolSupport';

export const GREP_MAX_MATCHES = 200;

export const grepSearchTool = defineTool({
  name: 'grep_search',
  kind: 'read',
  description:
    'Searches file contents for a regular expression (case-sensitive) and returns matching lines with their ' +
    'line numbers, grouped by file. path limits the search to a folder or one file; glob filters files ' +
    '(e.g. "*.ts" matches by file name, "src/**/*.ts" by path). Honours .gitignore; skips binary and very large files.',
  properties: {
    pattern: { type: 'string', description: 'Regular expression to search for, e.g. "function\\s+parse".' },
    path: { type: 'string', description: 'File or directory to search (optional, default the workspace root).' },
    glob: { type: 'string', description: 'Only search files matching this glob (optional).' },
  },
  required: ['pattern'],
  pathArgs: ['path'],
  summarize(args) {
    const parts = [`"${oneLine(args.pattern, 60)}"`];
    if (typeof args.path === 'string' && args.path.trim() !== '') parts.push(`in ${oneLine(args.path, 40)}`);
    if (typeof args.glob === 'string' && args.glob.trim() !== '') parts.push(`(${oneLine(args.glob, 30)})`);
    return parts.join(' ');
  },
  async run(args, { fs, signal }) {
    const pattern = args.string('pattern');
    const requested = args.optionalString('path');
    const glob = args.optionalString('glob');
    const target = await fs.resolve(requested ?? '');
    if (!(await fs.stat(target))) return failure(`Path not found: ${displayPath(target)}. Check the path.`);
    let matches;
    try {
      matches = await fs.search(pattern, { path: target, glob, limit: GREP_MAX_MATCHES + 1, signal });
    } catch (error) {
      if (error instanceof SearchPatternError) return failure(error.message);
      throw error;
    }
    const scope = `${target === '' ? '' : ` in ${target}`}${glob ? ` (files matching ${glob})` : ''}`;
    if (matches.length === 0) return success(`No matches for /${pattern}/${scope}.`);
    const shown = matches.slice(0, GREP_MAX_MATCHES);
    const lines: string[] = [];
    let currentFile: string | undefined;
    for (const match of shown) {
      if (match.path !== currentFile) {
        currentFile = match.path;
        lines.push(match.path);
      }
      lines.push(`  ${match.line}: ${match.text}`);
    }
    const files = new Set(shown.map((match) => match.path)).size;
    const count = shown.length === 1 ? '1 match' : `${shown.length} matches`;
    let output = `${count} in ${files === 1 ? '1 file' : `${files} files`} for /${pattern}/${scope}:\n${lines.join('\n')}`;
    if (matches.length > shown.length) output += `\n[Stopped after ${GREP_MAX_MATCHES} matches; narrow the pattern, path or glob to see the rest.]`;
    return success(output);
  },
});
