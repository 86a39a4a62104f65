// Two accepts of the same file at the same moment: exactly one applies, the other reports a
// conflict, and nothing is lost — two sessions in one process, two processes (two VS Code windows),
// and a live edit racing an accept. Each runs ≥ 100 rounds and counts lost updates (must be 0).
import * as assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdir, mkdtemp, readFile, realpath, rm, unlink, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { OverlayFs } from '../../../src/core/followup/overlayFs';
import { NodeWorkspaceFs } from '../../../src/core/fs/nodeWorkspaceFs';
import { FileWorkspaceLock } from '../../../src/core/fs/workspaceLock';
import { editTool } from '../../../src/core/tools/edit';
import type { RaceSetup } from './acceptRaceChild';

const ROUNDS = 120;

interface Tally {
  rounds: number;
  conflicts: number;
  lost: number;
}

/** Judges one round: exactly one side applied, the other saw a conflict, and the file holds the winner's text. */
function judge(tally: Tally, outcomes: { applied: boolean; content: string }[], final: string | undefined, round: number): void {
  tally.rounds++;
  const winners = outcomes.filter((o) => o.applied);
  tally.conflicts += outcomes.length - winners.length;
  if (winners.length !== 1 || final !== winners[0].content) tally.lost++;
  assert.equal(winners.length, 1, `round ${round}: exactly one accept applies (${winners.length} did)`);
  assert.equal(final, winners[0].content, `round ${round}: the file holds the winner's version`);
}

const readOrUndefined = (file: string) => readFile(file, 'utf8').catch(() => undefined);

describe('accept races on one file', function () {
  this.timeout(120_000);
  let parent: string;
  let setup: RaceSetup;

  beforeEach(async () => {
    parent = await realpath(await mkdtemp(path.join(os.tmpdir(), 'speculate-race-')));
    setup = { ws: path.join(parent, 'ws'), tmp: path.join(parent, 'tmp'), stateDir: path.join(parent, 'state') };
    await mkdir(setup.ws);
    await mkdir(setup.tmp);
  });

  afterEach(() => rm(parent, { recursive: true, force: true }));

  /** Even rounds edit an existing file, odd rounds create a new one (both sides create it). */
  async function resetFor(round: number): Promise<string> {
    const file = round % 2 === 0 ? 'shared.ts' : `created-${round}.ts`;
    if (round % 2 === 0) await writeFile(path.join(setup.ws, file), `base ${round}\n`);
    else await unlink(path.join(setup.ws, file)).catch(() => undefined);
    return file;
  }

  it(`two sessions in one process: ${ROUNDS} rounds, one winner each, 0 lost updates`, async () => {
    const base = await NodeWorkspaceFs.open(setup.ws, { ripgrepPath: null });
    const tally: Tally = { rounds: 0, conflicts: 0, lost: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      const file = await resetFor(round);
      const sides = await Promise.all(['A', 'B'].map(async (name) => {
        const overlay = await OverlayFs.create({ base, tmpRoot: setup.tmp, fallbackTmpRoots: [] });
        await overlay.stat(file);
        await overlay.writeFile(file, `${name} ${round}\n`);
        return { overlay, content: `${name} ${round}\n` };
      }));
      const results = await Promise.all(sides.map((side) => side.overlay.applyToReal()));
      judge(tally, results.map((r, i) => ({ applied: r.applied.includes(file), content: sides[i].content })), await readOrUndefined(path.join(setup.ws, file)), round);
      for (const [i, r] of results.entries()) if (!r.applied.includes(file)) assert.deepEqual(r.conflicts.map((c) => c.reason), [round % 2 === 0 ? 'modified' : 'created'], `round ${round} side ${i}`);
      for (const side of sides) await side.overlay.cleanup();
    }
    console.log(`      in-process race: ${tally.rounds} rounds, ${tally.conflicts} conflicts, ${tally.lost} lost updates`);
    assert.deepEqual(tally, { rounds: ROUNDS, conflicts: ROUNDS, lost: 0 });
  });

  it(`two processes (two windows) accepting within the same millisecond: ${ROUNDS} rounds, 0 lost updates`, async () => {
    const child = path.join(__dirname, 'acceptRaceChild.js');
    const sides: { process: ChildProcessWithoutNullStreams; lines: Interface; next(): Promise<Record<string, unknown>> }[] = [0, 1].map(() => {
      const proc = spawn(process.execPath, [child, JSON.stringify(setup)]);
      const lines = createInterface({ input: proc.stdout });
      const queue: Record<string, unknown>[] = [];
      const waiting: ((value: Record<string, unknown>) => void)[] = [];
      lines.on('line', (line) => {
        const value = JSON.parse(line) as Record<string, unknown>;
        const waiter = waiting.shift();
        if (waiter) waiter(value);
        else queue.push(value);
      });
      let stderr = '';
      proc.stderr.on('data', (chunk) => (stderr += String(chunk)));
      proc.on('exit', (code) => {
        if (code) for (const waiter of waiting.splice(0)) waiter({ error: stderr });
      });
      return { process: proc, lines, next: () => (queue.length > 0 ? Promise.resolve(queue.shift()!) : new Promise((resolve) => waiting.push(resolve))) };
    });
    const tally: Tally = { rounds: 0, conflicts: 0, lost: 0 };
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const file = await resetFor(round);
        const contents = ['A', 'B'].map((name) => `${name} ${round}\n`);
        sides.forEach((side, i) => side.process.stdin.write(`${JSON.stringify({ prepare: { round, file, content: contents[i] } })}\n`));
        for (const side of sides) assert.deepEqual(await side.next(), { ready: round });
        // Both "Tabs" leave in the same tick.
        for (const side of sides) side.process.stdin.write(`${JSON.stringify({ go: round })}\n`);
        const results = (await Promise.all(sides.map((side) => side.next()))) as { applied: string[]; conflicts: string[]; error?: string }[];
        for (const result of results) assert.equal(result.error, undefined, result.error);
        judge(tally, results.map((r, i) => ({ applied: r.applied.includes(file), content: contents[i] })), await readOrUndefined(path.join(setup.ws, file)), round);
      }
    } finally {
      for (const side of sides) side.process.stdin.end(`${JSON.stringify({ quit: true })}\n`);
    }
    console.log(`      two-process race: ${tally.rounds} rounds, ${tally.conflicts} conflicts, ${tally.lost} lost updates`);
    assert.deepEqual(tally, { rounds: ROUNDS, conflicts: ROUNDS, lost: 0 });
  });

  it(`a live edit racing an accept of the same file: ${ROUNDS} rounds, exactly one lands, 0 lost updates`, async () => {
    const lock = await FileWorkspaceLock.open({ stateDir: setup.stateDir, root: setup.ws });
    const base = await NodeWorkspaceFs.open(setup.ws, { ripgrepPath: null, lock });
    const tally: Tally = { rounds: 0, conflicts: 0, lost: 0 };
    const file = path.join(setup.ws, 'shared.ts');
    for (let round = 0; round < ROUNDS; round++) {
      await writeFile(file, `base ${round}\n`);
      const overlay = await OverlayFs.create({ base, tmpRoot: setup.tmp, fallbackTmpRoots: [], lock });
      await overlay.readFile('shared.ts');
      await overlay.writeFile('shared.ts', `speculated ${round}\n`);
      const [accepted, edited] = await Promise.all([
        overlay.applyToReal(),
        editTool.execute({ file_path: 'shared.ts', old_string: `base ${round}`, new_string: `live ${round}` }, { fs: base }),
      ]);
      const outcomes = [
        { applied: accepted.applied.includes('shared.ts'), content: `speculated ${round}\n` },
        { applied: edited.ok, content: `live ${round}\n` },
      ];
      if (!edited.ok) assert.match(edited.output, /changed on disk after it was read|old_string was not found/, edited.output);
      judge(tally, outcomes, await readOrUndefined(file), round);
      await overlay.cleanup();
    }
    console.log(`      live edit vs accept: ${tally.rounds} rounds, ${tally.conflicts} refused, ${tally.lost} lost updates`);
    assert.equal(tally.lost, 0);
  });
});
