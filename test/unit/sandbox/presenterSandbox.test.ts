// The presenter carries what a sandboxed command did onto its tool card: from an accepted run's
// records, and from the progress of a run in the foreground.
import * as assert from 'node:assert/strict';
import type { ToolCallRecord } from '../../../src/core/followup/speculation';
import { itemsFromMessages } from '../../../src/vscode/chat/transcriptItems';

describe('presenter: sandboxed tool cards', () => {
  it('an accepted run\'s sandboxed call shows that it ran ahead and what it changed', () => {
    const record: ToolCallRecord = {
      index: 0, id: 'c1', name: 'run_shell_command', args: { command: 'npm run format' }, rawArgs: '{}', summary: 'npm run format',
      decision: 'sandbox', executed: true, ok: true, result: 'Exit code: 0', sandboxed: { writable: true, changed: ['src/a.ts'] },
    };
    let n = 0;
    const items = itemsFromMessages(
      [
        { role: 'user', content: 'format it' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'run_shell_command', arguments: '{"command":"npm run format"}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'Exit code: 0' },
      ],
      [record],
      () => `i${n++}`,
      true,
    );
    const group = items.find((item) => item.kind === 'toolGroup');
    assert.ok(group && group.kind === 'toolGroup');
    assert.deepEqual(group.calls[0].sandbox, { writable: true, changed: ['src/a.ts'] });
  });
});
