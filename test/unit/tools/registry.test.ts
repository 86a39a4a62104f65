// The tool registry against the fixed contract of TOOLS.md, and the path check the speculation
// gate runs before a call.
import * as assert from 'node:assert/strict';
import { ALL_TOOLS, createToolRegistry, resolveToolPaths } from '../../../src/core/tools/index';
import { PathOutsideWorkspaceError } from '../../../src/core/fs/workspaceFs';
import { addEscapes, escapingPaths, makeWorkspace, type TempWorkspace } from './workspaceFixture';

/** TOOLS.md, as a table: name, arguments (? = optional), kind. */
const CONTRACT: [string, string[], string][] = [
  ['read_file', ['file_path', 'offset?', 'limit?'], 'read'],
  ['list_directory', ['path', 'ignore?'], 'read'],
  ['glob', ['pattern', 'path?'], 'read'],
  ['grep_search', ['pattern', 'path?', 'glob?'], 'read'],
  ['lsp', ['operation', 'file_path', 'line?', 'character?', 'query?'], 'read'],
  ['edit', ['file_path', 'old_string', 'new_string', 'replace_all?'], 'write'],
  ['write_file', ['file_path', 'content'], 'write'],
  ['run_shell_command', ['command', 'description?', 'directory?'], 'shell'],
  ['web_fetch', ['url', 'prompt?'], 'network'],
  ['web_search', ['query'], 'network'],
  ['todo_write', ['todos'], 'interaction'],
  ['ask_user_question', ['question', 'options?'], 'interaction'],
  ['save_memory', ['fact'], 'interaction'],
  ['agent', ['description', 'prompt'], 'interaction'],
  // Loading a skill reads files and changes nothing: a read tool (plan mode, speculation and sub-agents may use it).
  ['skill', ['name'], 'read'],
  ['exit_plan_mode', ['plan'], 'interaction'],
];

const PATH_ARGS: Record<string, string[]> = {
  read_file: ['file_path'],
  list_directory: ['path'],
  glob: ['path'],
  grep_search: ['path'],
  lsp: ['file_path'],
  edit: ['file_path'],
  write_file: ['file_path'],
  run_shell_command: ['directory'],
};

describe('tool registry', () => {
  it('offers exactly the 16 tools of TOOLS.md, in order, with their argument names and kinds', () => {
    const registry = createToolRegistry();
    assert.deepEqual(
      registry.tools.map((tool) => {
        const params = tool.definition.function.parameters;
        const required = new Set(params.required ?? []);
        const args = Object.keys(params.properties ?? {}).map((name) => (required.has(name) ? name : `${name}?`));
        return [tool.name, args, tool.kind];
      }),
      CONTRACT,
    );
    for (const tool of registry.tools) {
      assert.equal(tool.definition.type, 'function');
      assert.equal(tool.definition.function.name, tool.name);
      assert.ok(tool.definition.function.description.length > 20, tool.name);
      assert.deepEqual([...tool.pathArgs], PATH_ARGS[tool.name] ?? [], tool.name);
      assert.equal(registry.get(tool.name), tool);
    }
    assert.equal(registry.get('mcp__thing'), undefined);
    assert.equal(ALL_TOOLS.length, 16);
  });

  it('produces byte-identical definitions on every build, so prompt caches keep hitting', () => {
    assert.equal(JSON.stringify(createToolRegistry().definitions()), JSON.stringify(createToolRegistry().definitions()));
    const custom = createToolRegistry({ shell: { timeoutMs: 5000 } }).get('run_shell_command');
    assert.match(custom?.definition.function.description ?? '', /Stops after 5 s/);
  });

  it('never throws: any garbage arguments give a failed result', async () => {
    const garbage: unknown[] = [null, [], 'text', { file_path: {}, path: 1, pattern: [], command: null, url: {}, query: 5, todos: 'x', question: [], fact: 1, description: 2, prompt: 3, name: 4, plan: 5, operation: 6, content: 7, old_string: 8, new_string: 9 }];
    for (const tool of ALL_TOOLS) {
      for (const args of garbage) {
        const result = await tool.execute(args as Record<string, unknown>, { fs: { resolve: async () => '' } as never });
        assert.equal(result.ok, false, `${tool.name} ${JSON.stringify(args)}`);
        assert.ok(result.output.length > 0);
        assert.equal(typeof tool.summarize((args ?? {}) as Record<string, unknown>), 'string');
      }
    }
  });

  describe('resolveToolPaths', () => {
    let ws: TempWorkspace;

    beforeEach(async () => {
      ws = await makeWorkspace({ 'src/app.ts': '' });
      await addEscapes(ws);
    });

    afterEach(() => ws.cleanup());

    const tool = (name: string) => {
      const found = ALL_TOOLS.find((candidate) => candidate.name === name);
      assert.ok(found);
      return found;
    };

    it('places every path argument inside the workspace, including ones that do not exist yet', async () => {
      assert.deepEqual(await resolveToolPaths(tool('read_file'), { file_path: `${ws.root}/src/app.ts` }, ws.fs), { ok: true, paths: { file_path: 'src/app.ts' } });
      assert.deepEqual(await resolveToolPaths(tool('write_file'), { file_path: 'new/dir/x.ts', content: '' }, ws.fs), { ok: true, paths: { file_path: 'new/dir/x.ts' } });
      assert.deepEqual(await resolveToolPaths(tool('glob'), { pattern: '*' }, ws.fs), { ok: true, paths: {} });
      assert.deepEqual(await resolveToolPaths(tool('web_fetch'), { url: 'https://x.test' }, ws.fs), { ok: true, paths: {} });
    });

    it('fails with the PathOutsideWorkspaceError for any escaping path argument', async () => {
      for (const { path: requested, why } of escapingPaths(ws)) {
        for (const [name, arg] of [['edit', 'file_path'], ['run_shell_command', 'directory'], ['grep_search', 'path']]) {
          const check = await resolveToolPaths(tool(name), { [arg]: requested }, ws.fs);
          assert.equal(check.ok, false, `${name} ${requested}`);
          if (!check.ok) {
            assert.equal(check.arg, arg);
            assert.ok(check.error instanceof PathOutsideWorkspaceError);
            assert.match(check.error.message, why);
          }
        }
      }
    });

    it('fails for a path argument that is not a string', async () => {
      const check = await resolveToolPaths(tool('read_file'), { file_path: ['a'] }, ws.fs);
      assert.equal(check.ok, false);
      if (!check.ok) assert.match(check.error.message, /is not a path/);
    });
  });
});
