// Undo one change of a turn alone, through the ChatSession: the other change stays, the undo is a
// checkpoint of its own (undone in turn), and a change the user edited since is asked about, never
// overwritten unless they say so.
import * as assert from 'node:assert/strict';
import type { SessionEvent } from '../../../src/core/session';
import { GREET, makeSession, type SessionWorld } from '../engine/sessionKit';

const FIXED = GREET.replace('Helo', 'Hello');
const BOTH = FIXED + 'export const farewell = (name: string) => `Bye, ${name}`;\n';
const TURNS = {
  'fix the typo and add farewell': [
    { toolCalls: [{ name: 'write_file', arguments: { file_path: 'src/greet.ts', content: BOTH } }, { name: 'write_file', arguments: { file_path: 'NEW.md', content: 'new\n' } }] },
    { text: 'Done.' },
  ],
};

type Recorded = Extract<SessionEvent, { type: 'turn_recorded' }>;
const recorded = (s: SessionWorld) => s.events.filter((e): e is Recorded => e.type === 'turn_recorded');

describe('checkpoints: undoing one hunk of a turn', function () {
  this.timeout(20_000);
  let s: SessionWorld | undefined;
  afterEach(async () => {
    if (!s) return;
    await s.session.dispose();
    await s.world.dispose();
    s = undefined;
  });

  async function liveTurn(): Promise<{ current: SessionWorld; id: string }> {
    const current = await makeSession(TURNS, {}, { checkpoints: true, config: { suggestionsEnabled: false } });
    s = current;
    await current.session.submit('fix the typo and add farewell');
    const id = recorded(current)[0].checkpoint!.id;
    // What the Changes review does when it opens: keep a copy of what the turn wrote.
    await current.session.rememberCheckpointAfter(id);
    return { current, id };
  }

  it('undoes one of two changes alone; the undo is its own checkpoint, and undoing that brings it back', async () => {
    const { current, id } = await liveTurn();
    const hunks = await current.session.checkpointHunks(id, 'src/greet.ts');
    assert.equal(hunks.length, 2);
    const farewell = hunks.find((h) => h.newLines.some((l) => l.includes('farewell')))!;
    const outcome = await current.session.undoCheckpointHunk(id, 'src/greet.ts', farewell.id);
    assert.ok(outcome.ok, JSON.stringify(outcome));
    assert.equal(await current.world.read('src/greet.ts'), FIXED, 'the typo fix stays, farewell is gone');
    assert.equal(await current.world.read('NEW.md'), 'new\n', 'the turn\'s other file is untouched');
    const own = recorded(current)[1];
    assert.ok(own.checkpoint && outcome.checkpoint && own.checkpoint.id === outcome.checkpoint.id);
    assert.deepEqual(own.checkpoint.origin, { kind: 'turn', prompt: 'Undo line 4 of src/greet.ts' });
    assert.ok((await current.session.undoCheckpoint(own.checkpoint.id)).ok);
    assert.equal(await current.world.read('src/greet.ts'), BOTH);
  });

  it('a change the user edited since is refused with a question, and replaced only on "undo anyway"', async () => {
    const { current, id } = await liveTurn();
    const [typo] = await current.session.checkpointHunks(id, 'src/greet.ts');
    const mine = BOTH.replace('Hello', 'Hello there');
    await current.world.write('src/greet.ts', mine);
    const refused = await current.session.undoCheckpointHunk(id, 'src/greet.ts', typo.id);
    assert.deepEqual(refused.ok === false && refused.reason, 'changed');
    assert.match(refused.ok === false ? refused.message : '', /You changed line 2 of src\/greet\.ts .* since/);
    assert.equal(await current.world.read('src/greet.ts'), mine, 'never overwritten without asking');
    const forced = await current.session.undoCheckpointHunk(id, 'src/greet.ts', typo.id, { overwrite: true });
    assert.ok(forced.ok);
    assert.equal(await current.world.read('src/greet.ts'), GREET + 'export const farewell = (name: string) => `Bye, ${name}`;\n');
  });

  it('an edit elsewhere in the file is kept while the hunk is undone', async () => {
    const { current, id } = await liveTurn();
    const [typo] = await current.session.checkpointHunks(id, 'src/greet.ts');
    await current.world.write('src/greet.ts', BOTH + '\n// my note\n');
    assert.ok((await current.session.undoCheckpointHunk(id, 'src/greet.ts', typo.id)).ok);
    assert.equal(await current.world.read('src/greet.ts'), GREET + 'export const farewell = (name: string) => `Bye, ${name}`;\n\n// my note\n');
  });

  it('without a copy of what the change wrote, every change of an edited file is asked about', async () => {
    const current = await makeSession(TURNS, {}, { checkpoints: true, config: { suggestionsEnabled: false } });
    s = current;
    await current.session.submit('fix the typo and add farewell');
    const id = recorded(current)[0].checkpoint!.id;
    await current.world.write('src/greet.ts', BOTH + '\n// my note\n');
    const [typo] = await current.session.checkpointHunks(id, 'src/greet.ts');
    const refused = await current.session.undoCheckpointHunk(id, 'src/greet.ts', typo.id);
    assert.deepEqual(refused.ok === false && refused.reason, 'changed');
    assert.equal(await current.world.read('src/greet.ts'), BOTH + '\n// my note\n');
  });

  it('refuses a created file, an undone change and an unknown hunk with words that say what to do', async () => {
    const { current, id } = await liveTurn();
    await assert.rejects(current.session.checkpointHunks(id, 'NEW.md'), /NEW\.md was created by this change as a whole.*undo the whole change/);
    const stale = await current.session.undoCheckpointHunk(id, 'src/greet.ts', 'nope');
    assert.deepEqual(stale.ok === false && stale.reason, 'stale');
    assert.ok((await current.session.undoCheckpoint(id)).ok);
    await assert.rejects(current.session.checkpointHunks(id, 'src/greet.ts'), /undone already/);
    assert.equal(await current.world.read('src/greet.ts'), GREET);
  });
});
