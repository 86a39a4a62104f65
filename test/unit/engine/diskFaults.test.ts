// Storage faults end to end on a small tmpfs: a full temp folder fails the speculation quietly (no
// tool result about it for the model) and Tab still runs the request live; a full workspace disk
// refuses the accept, and the live re-run waits for the user's "Run it live" instead of starting.
import * as assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import * as path from 'node:path';
import type { ToolMessage } from '../../../src/core/messages';
import type { SessionEvent } from '../../../src/core/session';
import { mountSmallDisk, type SmallDisk } from '../fs/smallDisk';
import { fileEntry, isFork, treeSnapshot, waitUntil } from './engineKit';
import { GREET, makeSession, runEnd, warmUpAndShow, type SessionWorld } from './sessionKit';

const SUGGESTION = 'write the generated table';
const BIG = 'row\n'.repeat(100 * 1024);
const TURNS = { [SUGGESTION]: [{ toolCalls: [{ name: 'write_file', arguments: { file_path: 'src/table.txt', content: BIG } }] }, { text: 'Wrote src/table.txt.' }] };
const SUGGESTIONS = { 'show me src/greet.ts': SUGGESTION };

type Notice = Extract<SessionEvent, { type: 'notice' }>;

describe('Engine end-to-end: storage faults', function () {
  this.timeout(30_000);
  let disk: SmallDisk;
  let s: SessionWorld | undefined;

  before(async () => {
    disk = await mountSmallDisk(256);
  });
  after(async () => {
    await disk.unmount();
  });
  afterEach(async () => {
    await s?.session.dispose();
    await s?.world.dispose();
    s = undefined;
    for (const name of await readdir(disk.dir)) await rm(path.join(disk.dir, name), { recursive: true, force: true });
  });

  it('a full temp folder fails the speculation with a quiet "Couldn\'t run ahead" and nothing for the model; Tab runs it live', async () => {
    s = await makeSession(TURNS, SUGGESTIONS, { layout: { tmpRoot: path.join(disk.dir, 'tmp') } });
    await warmUpAndShow(s, SUGGESTION);
    const final = await runEnd(s, SUGGESTION);
    assert.equal(final.status, 'failed');
    assert.match(final.error ?? '', /^Couldn't run ahead: the temp folder is full\./);
    assert.deepEqual(final.messages.filter((m): m is ToolMessage => m.role === 'tool'), [], 'the storage error never became a tool result');
    assert.deepEqual(final.toolCalls.map((c) => [c.name, c.executed]), [['write_file', false]]);
    assert.equal(s.events.some((e) => e.type === 'notice'), false, 'quiet: shown where running ahead is shown, not as a chat notice');

    await s.session.acceptSuggestion('tab');
    await waitUntil(() => !s!.session.busy && existsSync(path.join(s!.world.root, 'src/table.txt')), 'the live run to write the file');
    assert.equal(await s.world.read('src/table.txt'), BIG, 'the workspace disk had room: the live run did the work');
  });

  it('a full workspace disk refuses the accept; nothing runs live until the user says so, and then the model hears why', async () => {
    s = await makeSession(TURNS, SUGGESTIONS, { layout: { workspaceIn: disk.dir } });
    await warmUpAndShow(s, SUGGESTION);
    assert.equal((await runEnd(s, SUGGESTION)).status, 'completed');
    const before = await treeSnapshot(s.world.root);
    const requestsBefore = s.world.server.chatRequests.length;

    await s.session.acceptSuggestion('tab');
    const notices = s.events.filter((e): e is Notice => e.type === 'notice');
    assert.equal(notices.length, 1);
    assert.equal(notices[0].offer, 'run_live');
    assert.match(notices[0].text, /Could not apply the speculated changes\. Accepting the speculation failed while preparing "src\/table\.txt": the disk holding .* is full: 400\.0 KB needed, [\d.]+ KB free; no file in the workspace was changed\. Free some space, then accept again\. The request was not run live either: it would meet the same problem\./);
    assert.equal(s.session.busy, false);
    assert.equal(s.world.server.chatRequests.length, requestsBefore, 'no live request was sent behind the user’s back');
    assert.deepEqual(await treeSnapshot(s.world.root), before);
    assert.equal(s.session.currentSpeculation, null, 'the refused run is gone');

    const outcome = await s.session.runRefusedLive();
    assert.equal(outcome?.status, 'done');
    const live = s.world.server.chatRequests.slice(requestsBefore).filter((r) => !isFork(r));
    assert.ok(live.length >= 2, 'the request ran live once asked');
    const toolResults = s.session.messages.filter((m): m is ToolMessage => m.role === 'tool').map((m) => m.content);
    assert.match(toolResults.at(-1) ?? '', /Could not write src\/table\.txt: the disk holding .* is full/);
    assert.deepEqual(await treeSnapshot(s.world.root), { ...before }, 'and the live write, refused too, changed nothing');
    assert.equal((await treeSnapshot(s.world.root))['src/greet.ts'], fileEntry(GREET));
    assert.equal(await s.session.runRefusedLive(), undefined, 'the offer is used once');
  });
});
