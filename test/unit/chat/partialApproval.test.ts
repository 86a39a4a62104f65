// An edit allowed in part (default mode, some hunks dropped in the approval diff): only the kept
// changes are written, the result tells the model which parts were applied, the turn's checkpoint
// covers it, and a file changed under the question is not overwritten.
import * as assert from 'node:assert/strict';
import type { PartialApproval } from '../../../src/core/chat/approvals';
import { applyHunks, partialEditNote, splitHunks } from '../../../src/core/checkpoints/hunks';
import type { ToolMessage } from '../../../src/core/messages';
import type { SessionEvent } from '../../../src/core/session';
import { GREET, makeSession, type SessionWorld } from '../engine/sessionKit';

const BOTH = GREET.replace('Helo', 'Hello') + 'export const farewell = (name: string) => `Bye, ${name}`;\n';
const TURNS = {
  'fix the typo and add farewell': [{ toolCalls: [{ name: 'write_file', arguments: { file_path: 'src/greet.ts', content: BOTH } }] }, { text: 'Done.' }],
};

/** The answer the approval diff gives after the user dropped the farewell hunk. */
function keepTypoOnly(expected: string): PartialApproval {
  const hunks = splitHunks(GREET, BOTH);
  const [typo, farewell] = hunks;
  return {
    answer: 'allow',
    partial: { path: 'src/greet.ts', expected: Buffer.from(expected), content: Buffer.from(applyHunks(GREET, BOTH, new Set([typo.id]))), note: partialEditNote('src/greet.ts', [typo], [farewell]) },
  };
}

describe('chat: an edit allowed in part', function () {
  this.timeout(20_000);
  let s: SessionWorld | undefined;
  afterEach(async () => {
    if (!s) return;
    await s.session.dispose();
    await s.world.dispose();
    s = undefined;
  });

  it('writes only the kept changes and tells the model which parts were applied', async () => {
    const current = await makeSession(TURNS, {}, { checkpoints: true, answer: keepTypoOnly(GREET), config: { approvalMode: 'default', suggestionsEnabled: false } });
    s = current;
    await current.session.submit('fix the typo and add farewell');
    assert.equal(current.approvals.length, 1);
    assert.equal(await current.world.read('src/greet.ts'), GREET.replace('Helo', 'Hello'));
    const result = current.session.messages.find((m): m is ToolMessage => m.role === 'tool')!;
    assert.equal(result.content, 'Applied only part of this edit to src/greet.ts: the user kept 1 of 2 changes (line 2 (+1 −1)) and left out line 4 (+1). The file now holds only the kept changes; read it before editing it again.');
    const recorded = current.events.filter((e): e is Extract<SessionEvent, { type: 'turn_recorded' }> => e.type === 'turn_recorded');
    assert.deepEqual(recorded[0]?.checkpoint?.files.map((f) => f.path), ['src/greet.ts'], 'the partial write has its checkpoint like any edit');
    assert.ok((await current.session.undoCheckpoint(recorded[0].checkpoint!.id)).ok);
    assert.equal(await current.world.read('src/greet.ts'), GREET);
  });

  it('a file that changed under the question is not overwritten; the model is told nothing was written', async () => {
    const current = await makeSession(TURNS, {}, { answer: keepTypoOnly('something else\n'), config: { approvalMode: 'default', suggestionsEnabled: false } });
    s = current;
    await current.session.submit('fix the typo and add farewell');
    assert.equal(await current.world.read('src/greet.ts'), GREET);
    const result = current.session.messages.find((m): m is ToolMessage => m.role === 'tool')!;
    assert.match(result.content, /^The user allowed part of this edit, but src\/greet\.ts could not be written .*nothing was changed/);
  });
});
