// The status line's sentence for each kind of stop: the step in the user's terms (the command, the
// file, the URL), why it needs them, and what Tab does now; never a tool name or a classifier reason.
import * as assert from 'node:assert/strict';
import type { ToolCallRecord } from '../../../src/core/followup/speculation';
import type { Boundary } from '../../../src/core/followup/speculationToolGate';
import { boundarySentence, spokenSentence } from '../../../src/vscode/speculation/boundaryWords';

function call(name: string, args: Record<string, unknown>): ToolCallRecord {
  return { index: 0, id: 'c', name, args, rawArgs: JSON.stringify(args), summary: '', decision: 'boundary', executed: false, ok: null, result: null };
}

const cases: { what: string; boundary: Boundary; record?: ToolCallRecord; done?: number; says: string }[] = [
  {
    what: 'a command that may write',
    boundary: { type: 'shell', tool: 'run_shell_command', detail: '`npm install` may change files (command: npm installs packages from the registry)' },
    record: call('run_shell_command', { command: 'npm install' }),
    says: 'Stopped before `npm install`: it may change files. Tab runs it with your approval.',
  },
  {
    what: 'a command after edits made ahead',
    boundary: { type: 'shell', tool: 'run_shell_command', detail: '`npm test` would not see the speculated edits' },
    record: call('run_shell_command', { command: 'npm test' }),
    done: 2,
    says: 'Stopped before `npm test`: it would not see the edits made ahead. Tab applies the 2 finished steps, then runs it with your approval.',
  },
  {
    what: 'an edit in default mode',
    boundary: { type: 'edit', tool: 'edit', detail: 'edits need your approval in default mode' },
    record: call('edit', { file_path: 'src/greet.ts', old_string: 'a', new_string: 'b' }),
    done: 1,
    says: 'Stopped before editing `src/greet.ts`: edits ask first in default mode. Tab applies the 1 finished step, then asks you for it.',
  },
  {
    what: 'a new file in default mode',
    boundary: { type: 'edit', tool: 'write_file', detail: 'edits need your approval in default mode' },
    record: call('write_file', { file_path: 'test/greet.test.mjs', content: 'x' }),
    says: 'Stopped before writing `test/greet.test.mjs`: edits ask first in default mode. Tab asks you for it.',
  },
  {
    what: 'a path outside the folder',
    boundary: { type: 'path', tool: 'read_file', detail: 'Path "../x" resolves outside the workspace' },
    record: call('read_file', { file_path: '../x' }),
    says: 'Stopped before `../x`: it is outside this folder. Tab continues live.',
  },
  {
    what: 'the network',
    boundary: { type: 'denied_tool', tool: 'web_fetch', detail: 'web_fetch reaches the network, which needs your consent' },
    record: call('web_fetch', { url: 'https://example.org/' }),
    says: 'Stopped before fetching `https://example.org/`: the network needs your consent. Tab asks you for it.',
  },
  {
    what: 'a question for the user',
    boundary: { type: 'denied_tool', tool: 'ask_user_question', detail: 'ask_user_question needs you: it asks you a question' },
    says: 'Stopped where the next step needs you (it asks you a question). Tab continues live.',
  },
  {
    what: 'the turn limit',
    boundary: { type: 'limit', tool: '', detail: 'stopped after 20 model turns' },
    done: 5,
    says: 'Stopped after 20 model turns. Tab applies the 5 finished steps, then continues live.',
  },
];

describe('boundary sentences', () => {
  for (const c of cases) {
    it(c.what, () => assert.equal(boundarySentence(c.boundary, c.record, c.done ?? 0), c.says));
  }

  it('a long or odd command is cut and cannot break out of its code span', () => {
    const command = `echo \`date\` && ${'x'.repeat(100)}`;
    const said = boundarySentence({ type: 'shell', tool: 'run_shell_command', detail: 'may change files' }, call('run_shell_command', { command }), 0);
    assert.equal(said.split('`').length, 3, 'exactly one code span');
    assert.match(said, /…`: it may change files\./);
  });

  it('is spoken without code marks', () => {
    assert.equal(spokenSentence('Stopped before `npm test`: it may change files.'), 'Stopped before npm test: it may change files.');
  });
});
