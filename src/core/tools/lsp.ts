// lsp: language features (definition, references, hover, symbols) answered by the editor through
// context.lsp. Outside VS Code there is no language server, and the tool says so plainly.
import { defineTool, displayPath, failure, oneLine, success } from './toolSupport';

const OPERATIONS = ['definition', 'references', 'hover', 'symbols'] as const;
type Operation = (typeof OPERATIONS)[number];

export const lspTool = defineTool({
  name: 'lsp',
  kind: 'read',
  description:
    'Asks the editor\'s language server about code: "definition" or "references" of the symbol at line/character, ' +
    '"hover" (type and docs at a position), or "symbols" (symbols of the file, filtered by query). ' +
    'Lines and characters are 1-based.',
  properties: {
    operation: { type: 'string', enum: [...OPERATIONS], description: 'definition | references | hover | symbols' },
    file_path: { type: 'string', description: 'File to ask about, relative to the workspace root or absolute inside it.' },
    line: { type: 'number', description: '1-based line of the symbol (definition, references, hover).' },
    character: { type: 'number', description: '1-based column of the symbol (definition, references, hover).' },
    query: { type: 'string', description: 'Name filter for symbols (optional).' },
  },
  required: ['operation', 'file_path'],
  pathArgs: ['file_path'],
  summarize(args) {
    const at = typeof args.line === 'number' ? `:${args.line}${typeof args.character === 'number' ? `:${args.character}` : ''}` : '';
    return `${oneLine(args.operation, 20)} ${oneLine(args.file_path)}${at}`;
  },
  async run(args, { fs, lsp, signal }) {
    const operation = args.string('operation');
    if (!(OPERATIONS as readonly string[]).includes(operation)) {
      return failure(`lsp: argument "operation" must be one of ${OPERATIONS.join(', ')} (got "${operation}").`);
    }
    const requested = args.string('file_path');
    const line = args.optionalInteger('line', 1);
    const character = args.optionalInteger('character', 1);
    const query = args.optionalString('query');
    const file = await fs.resolve(requested);
    if (operation !== 'symbols' && line === undefined) {
      return failure(`lsp: "${operation}" needs "line" (and usually "character") of the symbol in ${displayPath(file)}.`);
    }
    if (!lsp) {
      return failure('Language features are not available here (lsp needs the VS Code editor). Use grep_search and read_file instead.');
    }
    if (!(await fs.stat(file))) return failure(`File not found: ${displayPath(file)}. Check the path.`);
    const answer = await lsp.query({ operation: operation as Operation, path: file, line, character, query }, signal);
    return success(answer.trim() === '' ? `No ${operation} results for ${displayPath(file)}.` : answer);
  },
});
