// glob: workspace files whose path matches a glob pattern, honouring .gitignore.
import { defineTool, displayPath, failure, oneLine, specialFileRefusal, success } from './toolSupport';

export const GLOB_MAX_RESULTS = 1000;

export const globTool = defineTool({
  name: 'glob',
  kind: 'read',
  description:
    'Finds files by path pattern, e.g. "src/**/*.ts" or "*.{json,md}". Patterns are relative to path (default: the ' +
    'workspace root); "*" stays within one folder, "**" spans folders. Files ignored by .gitignore, .git and ' +
    'node_modules are left out. Returns workspace-relative paths, sorted.',
  properties: {
    pattern: { type: 'string', description: 'Glob pattern, e.g. "**/*.test.ts".' },
    path: { type: 'string', description: 'Directory to search below (optional, default the workspace root).' },
  },
  required: ['pattern'],
  pathArgs: ['path'],
  summarize(args) {
    const where = typeof args.path === 'string' && args.path.trim() !== '' ? ` in ${oneLine(args.path, 40)}` : '';
    return `${oneLine(args.pattern)}${where}`;
  },
  async run(args, { fs }) {
    const pattern = args.string('pattern');
    const requested = args.optionalString('path');
    const cwd = await fs.resolve(requested ?? '');
    const info = await fs.stat(cwd);
    if (!info) return failure(`Directory not found: ${displayPath(cwd)}. Check the path.`);
    if (info.type === 'special') return specialFileRefusal(cwd, 'glob');
    if (info.type !== 'directory') return failure(`${cwd} is a file, not a directory to search in.`);
    const found = await fs.glob(pattern, { cwd, limit: GLOB_MAX_RESULTS + 1 });
    const where = cwd === '' ? '' : ` in ${cwd}`;
    if (found.length === 0) return success(`No files match "${pattern}"${where}.`);
    const shown = found.slice(0, GLOB_MAX_RESULTS);
    let output = `${shown.length === 1 ? '1 file matches' : `${shown.length} files match`} "${pattern}"${where}:\n${shown.join('\n')}`;
    if (found.length > shown.length) output += `\n[More than ${GLOB_MAX_RESULTS} files match; use a narrower pattern or path.]`;
    return success(output);
  },
});
