// Drop before Tab, through the ChatSession: one of two changes of a speculated file is dropped, Tab
// writes only the other, the turns the model sees next say which change was left out, and the
// overlay's stale-read and conflict rules still hold for the rewritten file.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { StaleHunkError } from '../../../src/core/checkpoints/hunks';
import { droppedHunksNote, HunkDropRecord } from '../../../src/core/followup/hunkDrops';
import type { ToolMessage } from '../../../src/core/messages';
import { exists } from './overlayKit';
import { accepted, GREET, makeSession, runEnd, warmUpAndShow, type SessionWorld } from '../engine/sessionKit';

const SUGGESTION = 'fix the typo and add farewell';
const FIXED = GREET.replace('Helo', 'Hello');
const BOTH = FIXED + 'export const farewell = (name: string) => `Bye, ${name}`;\n';
const TURNS = {
  [SUGGESTION]: [
    {
      toolCalls: [
        { name: 'write_file', arguments: { file_path: 'src/greet.ts', content: BOTH } },
        { name: 'write_file', arguments: { file_path: 'NOTES.md', content: 'notes\n' } },
      ],
    },
    { text: 'Fixed the typo and added farewell.' },
  ],
};

describe('followup: dropping hunks before Tab', function () {
  this.timeout(20_000);
  let s: SessionWorld | undefined;
  afterEach(async () => {
    if (!s) return;
    await s.session.dispose();
    await s.world.dispose();
    s = undefined;
  });

  async function finishedRun(): Promise<{ current: SessionWorld; runId: string }> {
    const current = await makeSession(TURNS, { 'show me src/greet.ts': SUGGESTION }, { checkpoints: true });
    s = current;
    await warmUpAndShow(current, SUGGESTION);
    assert.equal((await runEnd(current, SUGGESTION)).status, 'completed');
    return { current, runId: current.session.currentSpeculation!.id };
  }

  it('drops one of two changes: Tab writes only the other, and the chat and the model are told', async () => {
    const { current, runId } = await finishedRun();
    const hunks = await current.session.speculationHunks(runId, 'src/greet.ts');
    assert.equal(hunks.length, 2);
    const farewell = hunks.find((h) => h.newLines.some((line) => line.includes('farewell')))!;
    const dropped = await current.session.dropSpeculationHunk(runId, 'src/greet.ts', farewell.id);
    assert.deepEqual(dropped, { path: 'src/greet.ts', total: 2, dropped: ['line 4 (+1)'] });
    assert.equal(await current.world.read('src/greet.ts'), GREET, 'nothing reaches the workspace before Tab');
    const left = await current.session.speculationHunks(runId, 'src/greet.ts');
    assert.deepEqual(left.map((h) => h.id), hunks.filter((h) => h !== farewell).map((h) => h.id), 'the kept change keeps its id');

    await current.session.acceptSuggestion('tab');
    assert.equal(await current.world.read('src/greet.ts'), FIXED, 'only the typo fix is written');
    assert.equal(await current.world.read('NOTES.md'), 'notes\n');
    const [event] = accepted(current);
    assert.deepEqual(event.droppedHunks, [{ path: 'src/greet.ts', total: 2, dropped: ['line 4 (+1)'] }]);
    const results = current.session.messages.filter((m): m is ToolMessage => m.role === 'tool').map((m) => m.content);
    const noted = results.filter((r) => r.includes('the user dropped 1 of 2 changes to src/greet.ts before accepting — line 4 (+1) was not applied'));
    assert.equal(noted.length, 1, results.join('\n'));
    assert.ok(!results.some((r) => /dropped .* NOTES\.md/.test(r)));
    // The checkpoint undoes what was written, the dropped change was never there.
    assert.ok((await current.session.undoCheckpoint(event.checkpoint!.id)).ok);
    assert.equal(await current.world.read('src/greet.ts'), GREET);
  });

  it('a file changed in the workspace after the drop is still a conflict on Tab, never overwritten', async () => {
    const { current, runId } = await finishedRun();
    const [first] = await current.session.speculationHunks(runId, 'src/greet.ts');
    await current.session.dropSpeculationHunk(runId, 'src/greet.ts', first.id);
    await current.world.write('src/greet.ts', 'mine\n');
    await current.session.acceptSuggestion('tab');
    const conflicts = current.events.find((e) => e.type === 'conflicts');
    assert.ok(conflicts && conflicts.type === 'conflicts');
    assert.deepEqual(conflicts.conflicts.map((c) => c.path), ['src/greet.ts']);
    assert.equal(await current.world.read('src/greet.ts'), 'mine\n');
  });

  it('refuses a stale hunk, a created file and a gone run with clear errors, writing nothing', async () => {
    const { current, runId } = await finishedRun();
    const [first] = await current.session.speculationHunks(runId, 'src/greet.ts');
    await current.session.dropSpeculationHunk(runId, 'src/greet.ts', first.id);
    await assert.rejects(current.session.dropSpeculationHunk(runId, 'src/greet.ts', first.id), StaleHunkError);
    await assert.rejects(current.session.dropSpeculationHunk(runId, 'NOTES.md', 'x'), /NOTES\.md was created by the speculation as a whole.*leave the whole file out/);
    await assert.rejects(current.session.dropSpeculationHunk('spec-gone', 'src/greet.ts', first.id), /speculation is gone/);
    assert.equal((await current.session.speculationHunks(runId, 'src/greet.ts')).length, 1);
    assert.equal(await exists(path.join(current.world.root, 'NOTES.md')), false);
  });

  it('dropping every change of a file leaves the file out whole', async () => {
    const { current, runId } = await finishedRun();
    for (const hunk of await current.session.speculationHunks(runId, 'src/greet.ts')) await current.session.dropSpeculationHunk(runId, 'src/greet.ts', hunk.id);
    assert.deepEqual(current.session.excludedFiles(runId), ['src/greet.ts']);
    await current.session.acceptSuggestion('tab');
    const [event] = accepted(current);
    assert.deepEqual(event.excluded, ['src/greet.ts']);
    assert.equal(event.droppedHunks, undefined, 'a file left out says so, not its drops');
    assert.equal(await current.world.read('src/greet.ts'), GREET);
  });

  it('words the note for several drops of one file', () => {
    const record = new HunkDropRecord();
    record.add('a.ts', { id: 'x', oldStart: 1, oldLines: ['a\n'], newStart: 1, newLines: ['b\n', 'c\n'] }, 3);
    record.add('a.ts', { id: 'y', oldStart: 9, oldLines: ['z\n'], newStart: 9, newLines: [] }, 3);
    const [entry] = record.list();
    assert.equal(droppedHunksNote(entry), '(Note: the user dropped 2 of 3 changes to a.ts before accepting — lines 2–3 (+2 −1), line 10 (−1) were not applied; the file has the other changes.)');
  });
});
