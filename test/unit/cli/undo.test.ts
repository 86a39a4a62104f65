// `speculate --accept` names a checkpoint and `undo` takes the accept back, as HEADLESS-CLI.md says:
// byte for byte on a fresh workspace, conflicts kept unless --force, errors as values, bad ids exit 2.
import * as assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoReply } from '../../fixtures/scripted/demoScript';
import { ScriptedServer } from '../../fixtures/scriptedServer';
import { cli, repo, runCli as run, tree } from './cliKit';

describe('headless CLI: speculate --accept and undo', function () {
  this.timeout(30_000);
  let model: ScriptedServer;
  let scratch: string;
  let workspace: string;
  let tmp: string;
  let state: string;
  before(function () {
    if (!existsSync(cli)) throw new Error('dist/cli.js is missing: run `node esbuild.mjs` first');
  });
  beforeEach(async () => {
    model = new ScriptedServer({ script: (request) => demoReply(request.body ?? {}) });
    await model.start();
    scratch = mkdtempSync(join(tmpdir(), 'cli-undo-'));
    workspace = join(scratch, 'ws');
    tmp = join(scratch, 'tmp');
    state = join(scratch, 'state');
    cpSync(join(repo, 'test/fixtures/workspaces/demo'), workspace, { recursive: true });
    mkdirSync(tmp);
  });
  afterEach(async () => {
    await model.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  const speculate = (suggestion: string, extra: string[] = []) =>
    run(['speculate', '--workspace', workspace, '--base-url', model.baseUrl, '--model', 'demo', '--suggestion', suggestion, '--approval-mode', 'auto-edit', '--accept', ...extra], { TMPDIR: tmp });
  const undo = (id: string, extra: string[] = []) => run(['undo', '--workspace', workspace, '--checkpoint', id, '--state-dir', state, ...extra], { TMPDIR: tmp });

  async function accept(suggestion: string): Promise<string> {
    const result = await speculate(suggestion, ['--state-dir', state]);
    assert.equal(result.code, 0, result.stderr);
    const out = JSON.parse(result.stdout) as { checkpoint: string | null; applied: { files: string[] } };
    assert.ok(out.applied.files.length > 0);
    assert.ok(out.checkpoint, 'an accept that changed files names its checkpoint');
    return out.checkpoint;
  }

  it('undo restores a fresh workspace byte for byte: the edited file, and the created file with its folder', async () => {
    const before = tree(workspace);
    const edit = await accept('read src/greet.ts and add a farewell');
    const create = await accept('add a test for farewell');
    assert.ok(existsSync(join(workspace, 'test/greet.test.mjs')));

    const second = await undo(create);
    assert.equal(second.code, 0, second.stderr);
    assert.deepEqual(JSON.parse(second.stdout), { restored: ['test/greet.test.mjs'], conflicts: [], error: null });
    assert.equal(existsSync(join(workspace, 'test')), false, 'the folder the accept created is gone');
    const first = await undo(edit);
    assert.deepEqual(JSON.parse(first.stdout), { restored: ['src/greet.ts'], conflicts: [], error: null });
    assert.deepEqual(tree(workspace), before);
  });

  it('undo twice is an error (exit 0) and changes nothing', async () => {
    const id = await accept('read src/greet.ts and add a farewell');
    assert.equal((await undo(id)).code, 0);
    const after = tree(workspace);
    const again = await undo(id);
    assert.equal(again.code, 0);
    const out = JSON.parse(again.stdout) as { restored: string[]; conflicts: string[]; error: string };
    assert.deepEqual([out.restored, out.conflicts], [[], []]);
    assert.match(out.error, /already undone/);
    assert.deepEqual(tree(workspace), after);
  });

  it('a file changed since the accept is a conflict and kept; --force restores it', async () => {
    const original = readFileSync(join(workspace, 'src/greet.ts'), 'utf8');
    const id = await accept('read src/greet.ts and add a farewell');
    const mine = readFileSync(join(workspace, 'src/greet.ts'), 'utf8') + '// mine\n';
    writeFileSync(join(workspace, 'src/greet.ts'), mine);
    const kept = await undo(id);
    assert.deepEqual(JSON.parse(kept.stdout), { restored: [], conflicts: ['src/greet.ts'], error: null });
    assert.equal(readFileSync(join(workspace, 'src/greet.ts'), 'utf8'), mine);
    const forced = await undo(id, ['--force']);
    assert.deepEqual(JSON.parse(forced.stdout), { restored: ['src/greet.ts'], conflicts: [], error: null });
    assert.equal(readFileSync(join(workspace, 'src/greet.ts'), 'utf8'), original);
  });

  it('an unknown or malformed checkpoint is an error with exit 0; an id that is not a plain name is bad usage', async () => {
    const unknown = await undo('20990101-000000-deadbeef');
    assert.equal(unknown.code, 0);
    assert.match((JSON.parse(unknown.stdout) as { error: string }).error, /no checkpoint "20990101-000000-deadbeef"/);
    const id = await accept('read src/greet.ts and add a farewell');
    const recordsDir = join(state, 'checkpoints', readdirSync(join(state, 'checkpoints'))[0], 'records');
    writeFileSync(join(recordsDir, `${id}.json`), '{"version": 1}');
    const after = tree(workspace);
    const malformed = await undo(id);
    assert.equal(malformed.code, 0);
    assert.match((JSON.parse(malformed.stdout) as { error: string }).error, /cannot be read/);
    assert.deepEqual(tree(workspace), after);
    for (const bad of ['../escape', 'a/b', '.hidden', '']) {
      const usage = await undo(bad);
      assert.equal(usage.code, 2, `"${bad}" is bad usage`);
      assert.equal(usage.stdout, '');
      assert.equal(usage.stderr.trim().split('\n').length, 1);
    }
    const missing = await run(['undo', '--workspace', workspace]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--checkpoint is required/);
  });

  it('without --state-dir checkpoints live in $XDG_STATE_HOME/speculate', async () => {
    const xdg = join(scratch, 'xdg');
    const result = await run(['speculate', '--workspace', workspace, '--base-url', model.baseUrl, '--model', 'demo', '--suggestion', 'read src/greet.ts and add a farewell', '--approval-mode', 'auto-edit', '--accept'], { TMPDIR: tmp, XDG_STATE_HOME: xdg });
    const id = (JSON.parse(result.stdout) as { checkpoint: string }).checkpoint;
    assert.ok(existsSync(join(xdg, 'speculate', 'checkpoints')));
    const undone = await run(['undo', '--workspace', workspace, '--checkpoint', id], { TMPDIR: tmp, XDG_STATE_HOME: xdg });
    assert.deepEqual(JSON.parse(undone.stdout), { restored: ['src/greet.ts'], conflicts: [], error: null });
  });

  it('a state folder that cannot be used stops the accept (nothing written) and is an error for undo', async () => {
    const blocked = join(scratch, 'not-a-folder');
    writeFileSync(blocked, 'a file where the state folder should be');
    const before = tree(workspace);
    const result = await speculate('read src/greet.ts and add a farewell', ['--state-dir', blocked]);
    assert.equal(result.code, 0, result.stderr);
    const out = JSON.parse(result.stdout) as { applied: unknown; checkpoint: unknown; error: string };
    assert.deepEqual([out.applied, out.checkpoint], [null, null]);
    assert.match(out.error, /accept not done: checkpoints cannot be saved/);
    assert.deepEqual(tree(workspace), before);
    const undone = await run(['undo', '--workspace', workspace, '--checkpoint', '20990101-000000-deadbeef', '--state-dir', blocked]);
    assert.equal(undone.code, 0);
    assert.match((JSON.parse(undone.stdout) as { error: string }).error, /checkpoint folder .* cannot be used/);
  });
});
