// todo_write: replaces the session's todo list (kept in context.todos) with a checked list of items.
import { defineTool, success, ToolArgumentError } from './toolSupport';

export const TODO_STATUSES = ['pending', 'in_progress', 'completed'] as const;
export type TodoStatus = (typeof TODO_STATUSES)[number];

export interface TodoItem {
  content: string;
  status: TodoStatus;
  id?: string;
}

const MARKS: Record<TodoStatus, string> = { pending: '[ ]', in_progress: '[~]', completed: '[x]' };

/** Checks the todos argument item by item, naming the first bad one. */
export function parseTodos(value: unknown): TodoItem[] {
  if (!Array.isArray(value)) throw new ToolArgumentError('todo_write: argument "todos" must be an array of {content, status} items.');
  return value.map((item: unknown, index): TodoItem => {
    const where = `todo_write: todos[${index}]`;
    if (item === null || typeof item !== 'object' || Array.isArray(item)) throw new ToolArgumentError(`${where} must be an object {content, status}.`);
    const record = item as Record<string, unknown>;
    if (typeof record.content !== 'string' || record.content.trim() === '') throw new ToolArgumentError(`${where}.content must be a non-empty string.`);
    if (typeof record.status !== 'string' || !(TODO_STATUSES as readonly string[]).includes(record.status)) {
      throw new ToolArgumentError(`${where}.status must be one of ${TODO_STATUSES.join(', ')} (got ${JSON.stringify(record.status)}).`);
    }
    const todo: TodoItem = { content: record.content.trim(), status: record.status as TodoStatus };
    if (typeof record.id === 'string' || typeof record.id === 'number') todo.id = String(record.id);
    return todo;
  });
}

export const todoWriteTool = defineTool({
  name: 'todo_write',
  kind: 'interaction',
  description:
    'Replaces the task list for this conversation. Send the whole list each time; each item is {content, status} with ' +
    'status pending, in_progress or completed. Keep at most one item in_progress.',
  properties: {
    todos: {
      type: 'array',
      description: 'The complete todo list.',
      items: {
        type: 'object',
        properties: {
          content: { type: 'string', description: 'What to do.' },
          status: { type: 'string', enum: [...TODO_STATUSES] },
          id: { type: 'string', description: 'Optional stable id.' },
        },
        required: ['content', 'status'],
      },
    },
  },
  required: ['todos'],
  summarize(args) {
    if (!Array.isArray(args.todos)) return 'todos';
    const done = args.todos.filter((item) => (item as { status?: unknown } | null)?.status === 'completed').length;
    return `${args.todos.length} items · ${done} done`;
  },
  async run(args, context) {
    const todos = parseTodos(args.raw('todos'));
    if (todos.length === 0) {
      if (context.todos) context.todos.items = [];
      return success('Todo list cleared.');
    }
    if (context.todos) context.todos.items = todos;
    const inProgress = todos.filter((todo) => todo.status === 'in_progress').length;
    const completed = todos.filter((todo) => todo.status === 'completed').length;
    const list = todos.map((todo) => `${MARKS[todo.status]} ${todo.content}`).join('\n');
    const warning = inProgress > 1 ? '\n[More than one item is in progress; finish one before starting the next.]' : '';
    const result = `Todo list updated (${todos.length} items: ${completed} completed, ${inProgress} in progress):\n${list}${warning}`;
    return success(result);
  },
});
