// Commit ahead through the headless CLI (HEADLESS-CLI.md): `speculate --accept` on a suggestion to
// commit — the commit is made in the sandbox, the real .git stays as it was until the accept, the
// accept applies it with the file, `undo` of its checkpoint moves the branch back; the user
// committing first is an accept error that changes nothing; a rigged repository stays a boundary.
import * as assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointStore } from '../../../src/core/checkpoints';
import { ScriptedServer } from '../../fixtures/scriptedServer';
import { runCli } from '../cli/cliKit';
import { git, treeDigest, overlaySandboxAvailable } from './gitKit';

interface SpeculateOutput {
  status: string;
  boundary: { detail: string } | null;
  toolCalls: { name: string; decision: string; executed: boolean }[];
  applied: { files: string[]; conflicts: string[] } | null;
  checkpoint: string | null;
  error: string | null;
}

describe('commit ahead through the CLI (real git)', function () {
  this.timeout(120_000);
  let scratch: string;
  let workspace: string;
  let model: ScriptedServer;
  let available = false;

  before(async () => {
    available = await overlaySandboxAvailable();
  });
  beforeEach(async function () {
    if (!available) this.skip();
    scratch = realpathSync(mkdtempSync(join(tmpdir(), 'cli-commit-ahead-')));
    workspace = join(scratch, 'ws');
    mkdirSync(workspace);
    mkdirSync(join(scratch, 'tmp'));
    git(workspace, 'init', '-q', '-b', 'main');
    git(workspace, 'config', 'user.name', 'Ada Tester');
    git(workspace, 'config', 'user.email', 'ada@example.com');
    writeFileSync(join(workspace, 'greet.js'), 'exports.greet = (n) => `Hello, ${n}!`;\n');
    git(workspace, 'add', '.');
    git(workspace, 'commit', '-q', '-m', 'first');
    model = new ScriptedServer();
    await model.start();
  });
  afterEach(async () => {
    await model?.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  const editAndCommit = () => [
    { toolCalls: [{ name: 'edit', arguments: { file_path: 'greet.js', old_string: 'Hello', new_string: 'Hi' } }] },
    { toolCalls: [{ name: 'run_shell_command', arguments: { command: "git add greet.js && git commit -q -m 'Greet with Hi'" } }] },
    { text: 'Committed.' },
  ];
  const speculate = (extra: string[] = [], env: Record<string, string> = {}) =>
    runCli(['speculate', '--workspace', workspace, '--base-url', model.baseUrl, '--model', 'm', '--suggestion', 'commit it', '--approval-mode', 'auto-edit', '--state-dir', join(scratch, 'state'), ...extra], { TMPDIR: join(scratch, 'tmp'), ...env });

  it('without --accept the commit runs ahead and the real .git does not change', async () => {
    const before = await treeDigest(join(workspace, '.git'));
    model.setScript(editAndCommit());
    const result = await speculate();
    assert.equal(result.code, 0, result.stderr);
    const out = JSON.parse(result.stdout) as SpeculateOutput;
    assert.equal(out.status, 'completed', JSON.stringify(out.boundary));
    assert.deepEqual(out.toolCalls.map((c) => [c.name, c.decision, c.executed]), [['edit', 'redirect', true], ['run_shell_command', 'sandbox', true]]);
    assert.equal(await treeDigest(join(workspace, '.git')), before);
    assert.equal(git(workspace, 'log', '-1', '--format=%s'), 'first');
  });

  it('--accept applies the commit with the file; undo of its checkpoint moves main back', async () => {
    const first = git(workspace, 'rev-parse', 'main');
    model.setScript(editAndCommit());
    const result = await speculate(['--accept']);
    assert.equal(result.code, 0, result.stderr);
    const out = JSON.parse(result.stdout) as SpeculateOutput;
    assert.equal(out.error, null);
    assert.deepEqual(out.applied?.files, ['greet.js']);
    assert.equal(git(workspace, 'log', '-1', '--format=%s%n%an <%ae>'), 'Greet with Hi\nAda Tester <ada@example.com>');
    assert.equal(git(workspace, 'rev-parse', 'main~1'), first);
    assert.equal(git(workspace, 'status', '--porcelain'), '');
    assert.match(git(workspace, 'show', 'HEAD:greet.js'), /Hi/);
    assert.ok(out.checkpoint);

    const undone = await runCli(['undo', '--workspace', workspace, '--checkpoint', out.checkpoint, '--state-dir', join(scratch, 'state')]);
    assert.equal(undone.code, 0, undone.stderr);
    const undo = JSON.parse(undone.stdout) as { restored: string[]; conflicts: string[]; error: string | null };
    assert.equal(undo.error, null);
    assert.deepEqual(undo.restored.sort(), ['.git/refs/heads/main', 'greet.js']);
    assert.equal(git(workspace, 'rev-parse', 'main'), first);
    assert.match(readFileSync(join(workspace, 'greet.js'), 'utf8'), /Hello/);
  });

  it('a commit alone is a checkpoint too: undo from it moves the branch back', async () => {
    writeFileSync(join(workspace, 'greet.js'), 'exports.greet = (n) => `Hey, ${n}!`;\n');
    const first = git(workspace, 'rev-parse', 'main');
    model.setScript([{ toolCalls: [{ name: 'run_shell_command', arguments: { command: "git commit -q -am 'Say hey'" } }] }, { text: 'Done.' }]);
    const out = JSON.parse((await speculate(['--accept'])).stdout) as SpeculateOutput;
    assert.equal(out.error, null);
    assert.deepEqual(out.applied?.files, []);
    assert.equal(git(workspace, 'log', '-1', '--format=%s'), 'Say hey');
    assert.ok(out.checkpoint, 'the ref move has a checkpoint');
    const undo = JSON.parse((await runCli(['undo', '--workspace', workspace, '--checkpoint', out.checkpoint, '--state-dir', join(scratch, 'state')])).stdout) as { restored: string[]; error: string | null };
    assert.deepEqual(undo, { restored: ['.git/refs/heads/main'], conflicts: [], error: null });
    assert.equal(git(workspace, 'rev-parse', 'main'), first);
    const again = JSON.parse((await runCli(['undo', '--workspace', workspace, '--checkpoint', out.checkpoint, '--state-dir', join(scratch, 'state')])).stdout) as { error: string | null };
    assert.match(again.error ?? '', /already undone/);
    // The chat shows Redo for it now, and redo moves the branch forward again.
    const store = await CheckpointStore.open({ stateDir: join(scratch, 'state'), workspaceRoot: workspace });
    const record = await store.read(out.checkpoint);
    assert.ok(record.ok && record.record.state === 'undone');
    const redone = await store.redo(out.checkpoint);
    assert.ok(redone.ok);
    assert.equal(git(workspace, 'log', '-1', '--format=%s'), 'Say hey');
    const after = await store.read(out.checkpoint);
    assert.ok(after.ok && after.record.state === 'applied');
  });

  it('a rigged repository (objects borrowed from outside) stays a boundary', async () => {
    const elsewhere = join(scratch, 'elsewhere');
    mkdirSync(elsewhere);
    git(elsewhere, 'init', '-q');
    writeFileSync(join(workspace, '.git', 'objects', 'info', 'alternates'), `${join(elsewhere, '.git', 'objects')}\n`);
    const before = await treeDigest(join(workspace, '.git'));
    model.setScript(editAndCommit());
    const out = JSON.parse((await speculate(['--accept'])).stdout) as SpeculateOutput;
    assert.equal(out.status, 'boundary');
    assert.match(out.boundary?.detail ?? '', /borrows objects from elsewhere/);
    assert.equal(await treeDigest(join(workspace, '.git')), before);
  });

  it('a symlinked .git stays a boundary', async () => {
    const real = join(scratch, 'real-git');
    rmSync(join(workspace, '.git'), { recursive: true, force: true });
    mkdirSync(real);
    git(real, 'init', '-q');
    symlinkSync(join(real, '.git'), join(workspace, '.git'));
    model.setScript(editAndCommit());
    const out = JSON.parse((await speculate()).stdout) as SpeculateOutput;
    assert.equal(out.status, 'boundary');
    assert.match(out.boundary?.detail ?? '', /not a folder/);
  });
});
