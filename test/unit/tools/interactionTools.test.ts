// web_search, todo_write, ask_user_question, and the four interaction tools without their ports.
import * as assert from 'node:assert/strict';
import type { WorkspaceFs } from '../../../src/core/fs/workspaceFs';
import { agentTool, ALL_TOOLS, askUserQuestionTool, todoWriteTool, webSearchTool } from '../../../src/core/tools/index';
import type { ToolContext } from '../../../src/core/tools/types';

const context = (extra: Partial<ToolContext> = {}): ToolContext => ({ fs: {} as WorkspaceFs, ...extra });

describe('interaction and web_search tools', () => {
  it('web_search says how to configure it when no backend is set, and uses one when it is', async () => {
    const missing = await webSearchTool.execute({ query: 'vitest config' }, context());
    assert.equal(missing.ok, false);
    assert.match(missing.output, /^Web search is not configured: set "speculate\.webSearchUrl"/);
    const queries: string[] = [];
    const result = await webSearchTool.execute({ query: 'vitest config' }, context({ webSearch: { search: async (q) => (queries.push(q), '1. Vitest — https://vitest.dev') } }));
    assert.deepEqual(result, { ok: true, output: '1. Vitest — https://vitest.dev' });
    assert.deepEqual(queries, ['vitest config']);
  });

  it('todo_write validates every item and keeps the list in context.todos', async () => {
    const todos = { items: [] as unknown[] };
    const result = await todoWriteTool.execute(
      { todos: [{ content: 'Write tests', status: 'completed' }, { content: 'Fix bug', status: 'in_progress' }, { content: 'Ship', status: 'pending', id: 3 }] },
      context({ todos }),
    );
    assert.deepEqual(result, { ok: true, output: 'Todo list updated (3 items: 1 completed, 1 in progress):\n[x] Write tests\n[~] Fix bug\n[ ] Ship' });
    assert.deepEqual(todos.items, [
      { content: 'Write tests', status: 'completed' },
      { content: 'Fix bug', status: 'in_progress' },
      { content: 'Ship', status: 'pending', id: '3' },
    ]);
    const bad: [unknown, RegExp][] = [
      ['a list', /"todos" must be an array/],
      [[{ content: 'x', status: 'done' }], /todos\[0\]\.status must be one of pending, in_progress, completed \(got "done"\)/],
      [[{ content: 'ok', status: 'pending' }, { status: 'pending' }], /todos\[1\]\.content must be a non-empty string/],
      [[null], /todos\[0\] must be an object/],
    ];
    for (const [value, message] of bad) {
      const failed = await todoWriteTool.execute({ todos: value }, context({ todos }));
      assert.equal(failed.ok, false);
      assert.match(failed.output, message);
    }
    assert.equal(todos.items.length, 3, 'a rejected call leaves the list alone');
    assert.equal(todoWriteTool.summarize({ todos: [{ status: 'completed' }, { status: 'pending' }] }), '2 items · 1 done');
  });

  it('ask_user_question goes through the prompter, or says it cannot ask here', async () => {
    const asked: unknown[] = [];
    const prompter = { ask: async (question: string, options: string[] | undefined) => (asked.push([question, options]), 'Use pnpm') };
    const result = await askUserQuestionTool.execute({ question: 'Which package manager?', options: ['npm', 'pnpm'] }, context({ prompter }));
    assert.deepEqual(result, { ok: true, output: 'The user answered: Use pnpm' });
    assert.deepEqual(asked, [['Which package manager?', ['npm', 'pnpm']]]);
    assert.match((await askUserQuestionTool.execute({ question: 'Which?' }, context())).output, /Cannot ask the user here/);
    assert.match((await askUserQuestionTool.execute({ question: 'Which?', options: [1] }, context({ prompter }))).output, /"options" must be an array of strings/);
  });

  it('no tool of the registry answers "not supported", even without its ports', async () => {
    const minimal: Record<string, Record<string, unknown>> = {
      save_memory: { fact: 'uses pnpm' },
      agent: { description: 'find callers', prompt: 'List the callers of greet.' },
      skill: { name: 'pdf' },
      exit_plan_mode: { plan: '1. x' },
    };
    for (const tool of ALL_TOOLS.filter((t) => t.name in minimal)) {
      const result = await tool.execute(minimal[tool.name], context());
      assert.doesNotMatch(result.output, /not supported/i, tool.name);
      // Without the port each says what to do instead.
      assert.match(result.output, /tell the user|yourself|carry on|present the plan/i, tool.name);
    }
    assert.match((await agentTool.execute({ description: 'x' }, context())).output, /argument "prompt" is required/);
  });
});
