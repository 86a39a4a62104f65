// Speculations that run shell commands in the real sandbox, against the scripted server through the
// engine: tests that pass only with the speculated edit, changes that accept applies exactly, hostile
// commands that change and leak nothing, no network, stopped daemons, and the not-available path.
import * as assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chmod, chown, lstat } from 'node:fs/promises';
import * as net from 'node:net';
import * as path from 'node:path';
import { LinuxSandbox, UnavailableSandbox, type ShellSandbox } from '../../../src/core/sandbox';
import type { SpeculationSnapshot } from '../../../src/core/followup/speculation';
import { makeWorld, listBelow, treeSnapshot, OUTSIDE_SECRET, type EngineWorld } from '../engine/engineKit';
import { fixtureSettled, keeperProcesses, processesWith, sleep } from './sandboxKit';
import { assertForkBombCapped } from './landlockScenarios';

const GREET = 'exports.greet = (n) => `Hello, ${n}!`;\n';
const GREET_WITH_FAREWELL = 'exports.greet = (n) => `Hello, ${n}!`;\n\nexports.farewell = (n) => `Goodbye, ${n}!`;\n';
const TEST_FILE = "const { test } = require('node:test');\nconst assert = require('node:assert');\nconst { farewell } = require('../src/greet.js');\ntest('farewell', () => assert.equal(farewell('Ada'), 'Goodbye, Ada!'));\n";

function toolResults(final: SpeculationSnapshot): string[] {
  return final.messages.filter((m) => m.role === 'tool').map((m) => String(m.content));
}

describe('speculation with the sandbox (real namespaces)', function () {
  this.timeout(60_000);
  let world: EngineWorld;

  afterEach(async () => {
    await world?.dispose();
  });

  async function setUp(files: Record<string, string>, sandbox?: ShellSandbox, limits?: { timeoutMs: number; maxWriteBytes: number }): Promise<void> {
    world = await makeWorld(files);
    const shellSandbox = sandbox ?? new LinuxSandbox({ tmpRoot: world.tmpRoot, hostEnv: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: path.join(world.parent, 'home') } });
    world.services.toolContext.shellSandbox = shellSandbox;
    if (limits) world.services.toolContext.sandboxLimits = limits;
    await fixtureSettled();
  }

  const sandboxLeftovers = async () => (await listBelow(world.tmpRoot)).filter((entry) => entry.startsWith('speculate-sandbox-') && entry.includes('/'));

  it('a fork bomb and a memory hog in a speculation end as boundaries naming the limit, within the time limit, leaving no process', async () => {
    await setUp({ 'a.txt': 'a\n' });
    const limited = new LinuxSandbox({ tmpRoot: world.tmpRoot, hostEnv: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: path.join(world.parent, 'home') }, limits: { maxProcesses: 32, maxMemoryBytes: 1024 * 1024 * 1024 } });
    world.services.toolContext.shellSandbox = limited;
    world.services.toolContext.sandboxLimits = { timeoutMs: 30_000, maxWriteBytes: 64 * 1024 * 1024 };
    assertForkBombCapped(limited);
    const marker = `speculate-spec-forkbomb-${process.pid}`;
    const cases = [
      { command: `bomb() { bomb | bomb & }; bomb; sleep 25 # ${marker}`, limit: /the process limit, 32/ },
      { command: `node -e 'const kept = []; for (;;) kept.push(Buffer.alloc(64 * 1024 * 1024, 1))'`, limit: /the memory limit, 1024 MB/ },
    ];
    for (const { command, limit } of cases) {
      world.server.setScript([{ toolCalls: [{ name: 'run_shell_command', arguments: { command } }] }, { text: 'never' }]);
      const started = Date.now();
      const final = await world.speculate('run it').done;
      assert.ok(Date.now() - started < 30_000, 'it ended before the time limit');
      assert.equal(final.status, 'boundary', final.error ?? '');
      assert.equal(final.boundary?.type, 'shell');
      assert.match(final.boundary?.detail ?? '', limit);
      for (let i = 0; i < 100 && processesWith(marker).length > 0; i++) await sleep(50);
      assert.deepEqual(processesWith(marker), [], 'no process is left');
    }
    assert.equal(await world.read('a.txt'), 'a\n');
  });

  it('edits a file, then runs the tests, which pass only because they see the edit; accept applies the edit', async () => {
    await setUp({ 'package.json': '{ "name": "demo", "private": true, "scripts": { "test": "node --test" } }\n', 'src/greet.js': GREET, 'test/greet.test.js': TEST_FILE });
    world.server.setScript([
      { text: 'Adding farewell.', toolCalls: [{ name: 'edit', arguments: { file_path: 'src/greet.js', old_string: GREET, new_string: GREET_WITH_FAREWELL } }] },
      { text: 'Running the tests.', toolCalls: [{ name: 'run_shell_command', arguments: { command: 'npm test', description: 'Run the tests' } }] },
      { text: 'The tests pass.' },
    ]);
    const speculation = world.speculate('add farewell and run the tests');
    const final = await speculation.done;
    assert.equal(final.status, 'completed', final.boundary?.detail ?? final.error ?? '');
    assert.deepEqual(final.toolCalls.map((c) => [c.name, c.decision, c.executed, c.ok]), [['edit', 'redirect', true, true], ['run_shell_command', 'sandbox', true, true]]);
    assert.match(toolResults(final)[1], /Exit code: 0/);
    assert.match(toolResults(final)[1], /pass 1/);
    assert.deepEqual(final.toolCalls[1].sandboxed, { writable: true, changed: [] });
    assert.equal(await world.read('src/greet.js'), GREET, 'nothing real changed before accept');
    const applied = await speculation.apply();
    assert.deepEqual(applied, { applied: ['src/greet.js'], conflicts: [] });
    assert.equal(await world.read('src/greet.js'), GREET_WITH_FAREWELL);
    await speculation.disposeOverlay();
    assert.deepEqual(await sandboxLeftovers(), []);
  });

  it("a speculation's commands share one sandbox: a later one sees what the earlier one wrote and deleted and the edit made between them; accept applies all; the sandbox ends with the run", async () => {
    await setUp({ 'package.json': '{ "name": "demo", "private": true, "scripts": { "test": "node --test" } }\n', 'src/greet.js': GREET, 'test/greet.test.js': TEST_FILE, 'old.txt': 'old\n' });
    world.server.setScript([
      { toolCalls: [{ name: 'run_shell_command', arguments: { command: 'readlink /proc/self/ns/user; mkdir -p build && echo built > build/out.txt && rm old.txt' } }] },
      { toolCalls: [{ name: 'edit', arguments: { file_path: 'src/greet.js', old_string: GREET, new_string: GREET_WITH_FAREWELL } }] },
      { toolCalls: [{ name: 'run_shell_command', arguments: { command: 'readlink /proc/self/ns/user; cat build/out.txt && test ! -e old.txt && npm test && echo again >> build/out.txt' } }] },
      { text: 'Built and tested.' },
    ]);
    const speculation = world.speculate('build and test');
    const running = (async () => {
      // While the run goes on, its kept sandbox is there (its processes name the sandbox's temp folder).
      for (let i = 0; i < 400 && keeperProcesses(world.tmpRoot).length === 0 && speculation.snapshot().status === 'running'; i++) await sleep(25);
      return keeperProcesses(world.tmpRoot).length > 0;
    })();
    const final = await speculation.done;
    assert.equal(final.status, 'completed', final.boundary?.detail ?? final.error ?? '');
    assert.ok(await running, 'the kept sandbox ran');
    const [first, , second] = toolResults(final);
    const namespace = /Output:\n(user:\[\d+\])/.exec(first)?.[1];
    assert.ok(namespace, first);
    assert.match(second, new RegExp(`Output:\\n${namespace.replace(/[[\]]/g, '\\$&')}\\nbuilt\\n`), 'the same sandbox, and the first command\'s file');
    assert.match(second, /pass 1/, 'the tests see the edit made between the commands');
    assert.deepEqual(final.toolCalls[2].sandboxed, { writable: true, changed: ['build/out.txt'] });
    for (let i = 0; i < 200 && processesWith(world.tmpRoot).length > 0; i++) await sleep(25);
    assert.deepEqual(processesWith(world.tmpRoot), [], 'nothing of the sandbox outlives the run');
    const applied = await speculation.apply();
    assert.deepEqual(applied.conflicts, []);
    assert.equal(await world.read('build/out.txt'), 'built\nagain\n');
    assert.equal(await world.read('src/greet.js'), GREET_WITH_FAREWELL);
    assert.ok(!existsSync(path.join(world.root, 'old.txt')));
    await speculation.disposeOverlay();
    for (let i = 0; i < 200 && (await sandboxLeftovers()).length > 0; i++) await sleep(25);
    assert.deepEqual(await sandboxLeftovers(), []);
  });

  it('a command that deletes, renames, creates folders and sets the executable bit: accept applies exactly that', async () => {
    await setUp({ 'old.txt': 'old\n', 'a.txt': 'a\n', 'run.sh': 'echo run\n', 'keep.txt': 'keep\n' });
    world.server.setScript([
      { toolCalls: [{ name: 'run_shell_command', arguments: { command: 'rm old.txt && mkdir -p lib/util && mv a.txt lib/util/a.txt && chmod +x run.sh && echo made > lib/made.txt' } }] },
      { text: 'Reorganised.' },
    ]);
    const speculation = world.speculate('reorganise');
    const final = await speculation.done;
    assert.equal(final.status, 'completed', final.boundary?.detail ?? '');
    assert.deepEqual(final.toolCalls[0].sandboxed, { writable: true, changed: ['a.txt', 'old.txt', 'lib/made.txt', 'lib/util/a.txt', 'run.sh'] });
    assert.deepEqual(final.filesWritten, [
      { path: 'a.txt', kind: 'deleted' },
      { path: 'lib/made.txt', kind: 'created' },
      { path: 'lib/util/a.txt', kind: 'created' },
      { path: 'old.txt', kind: 'deleted' },
      { path: 'run.sh', kind: 'modified' },
    ]);
    const applied = await speculation.apply();
    assert.deepEqual(applied.conflicts, []);
    const tree = await treeSnapshot(world.root);
    assert.deepEqual(Object.keys(tree).sort(), ['keep.txt', 'lib', 'lib/made.txt', 'lib/util', 'lib/util/a.txt', 'run.sh']);
    assert.equal(await world.read('lib/util/a.txt'), 'a\n');
    assert.equal((await lstat(path.join(world.root, 'run.sh'))).mode & 0o777, 0o755);
    await speculation.disposeOverlay();
  });

  it('a hostile command changes nothing outside and sends no outside byte to the model', async () => {
    await setUp({ 'a.txt': 'a\n' });
    await world.link('out', world.outside);
    await world.link('secret-link', path.join(world.outside, 'secret.txt'));
    const outsideBefore = await treeSnapshot(world.outside);
    const hostile = [
      'echo x > ../next-to-workspace.txt', 'echo x > "$HOME/h.txt"', 'echo x > "$TMPDIR/t.txt"', 'echo x > /tmp/speculate-hostile.txt',
      'echo pwned > out/secret.txt', 'echo x > out/new.txt', 'cat secret-link', 'cat out/secret.txt', 'cat ../outside/secret.txt', `cat ${world.outside}/secret.txt`, 'env', 'true',
    ].map((step) => `${step} 2>&1`).join('; ');
    world.server.setScript([{ toolCalls: [{ name: 'run_shell_command', arguments: { command: hostile } }] }, { text: 'Done.' }]);
    const speculation = world.speculate('poke around');
    const final = await speculation.done;
    const everything = JSON.stringify(final) + JSON.stringify(speculation.messagesForInjection());
    assert.ok(!everything.includes(OUTSIDE_SECRET.trim()), 'no outside byte reaches the model');
    assert.doesNotMatch(everything, /test-key/);
    assert.deepEqual(await treeSnapshot(world.outside), outsideBefore);
    assert.ok(!existsSync(path.join(path.dirname(world.root), 'next-to-workspace.txt')));
    assert.ok(!existsSync('/tmp/speculate-hostile.txt'));
    if (final.status === 'completed') {
      await speculation.apply();
      assert.deepEqual(await treeSnapshot(world.outside), outsideBefore);
    }
    await speculation.disposeOverlay();
  });

  it('a workspace file of another user (which overlayfs cannot copy up) stops the run there, even when the command carried on', async function () {
    // Only root can give a file to another user; CI runs as root, so this always runs there.
    if (process.getuid?.() !== 0) this.skip();
    await setUp({ 'shared.txt': 'shared\n', 'a.txt': 'a\n' });
    const shared = path.join(world.root, 'shared.txt');
    await chown(shared, 4242, 4242);
    await chmod(shared, 0o666);
    world.server.setScript([{ toolCalls: [{ name: 'run_shell_command', arguments: { command: 'echo more >> shared.txt; echo carried on; echo b > a.txt' } }] }, { text: 'never' }]);
    const final = await world.speculate('append to the shared file').done;
    assert.equal(final.status, 'boundary');
    assert.equal(final.boundary?.type, 'shell');
    assert.match(final.boundary?.detail ?? '', /belongs to another user/);
    assert.deepEqual(final.toolCalls.map((c) => [c.decision, c.executed]), [['boundary', false]]);
    assert.deepEqual(final.filesWritten, [], 'the whole run is left out, a.txt too');
    assert.equal(await world.read('shared.txt'), 'shared\n');
  });

  it('no network: a listener on 127.0.0.1 outside is not reached, and the run stops there', async () => {
    await setUp({ 'a.txt': 'a\n' });
    let connections = 0;
    const server = net.createServer((socket) => {
      connections++;
      socket.end('outside service\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    try {
      world.server.setScript([{ toolCalls: [{ name: 'run_shell_command', arguments: { command: `exec 3<>/dev/tcp/127.0.0.1/${port}; cat <&3` } }] }, { text: 'never' }]);
      const final = await world.speculate('talk to the service').done;
      assert.equal(final.status, 'boundary');
      assert.equal(final.boundary?.type, 'shell');
      assert.match(final.boundary?.detail ?? '', /needs the network/);
      assert.equal(connections, 0);
      assert.deepEqual(final.toolCalls.map((c) => [c.decision, c.executed]), [['boundary', false]]);
      assert.ok(!JSON.stringify(final.messages).includes('outside service'));
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('a command that forks a daemon and sleeps past the limit is stopped, every process gone, nothing written after', async () => {
    await setUp({ 'a.txt': 'a\n' }, undefined, { timeoutMs: 800, maxWriteBytes: 16 * 1024 * 1024 });
    const marker = `speculate-engine-daemon-${process.pid}-${Date.now()}`;
    world.server.setScript([
      { toolCalls: [{ name: 'run_shell_command', arguments: { command: `(sleep 0.3; echo late > late.txt; exec -a ${marker} sleep 60) & setsid bash -c 'exec -a ${marker} sleep 60' & exec -a ${marker} sleep 60` } }] },
      { text: 'It timed out.' },
    ]);
    const speculation = world.speculate('start the server');
    const final = await speculation.done;
    assert.equal(final.status, 'completed');
    assert.match(toolResults(final)[0], /timed out after 1 s/);
    assert.match(toolResults(final)[0], /dropped/);
    assert.deepEqual(processesWith(marker), []);
    await sleep(500);
    assert.deepEqual(processesWith(marker), []);
    assert.deepEqual(final.filesWritten, []);
    assert.ok(!existsSync(path.join(world.root, 'late.txt')));
    await speculation.disposeOverlay();
    assert.deepEqual(await sandboxLeftovers(), []);
  });

  it('aborting a speculation mid-command stops every process and leaves nothing in the temp folder', async () => {
    await setUp({ 'a.txt': 'a\n' });
    const marker = `speculate-engine-abort-${process.pid}-${Date.now()}`;
    world.server.setScript([{ toolCalls: [{ name: 'run_shell_command', arguments: { command: `echo x > x.txt; exec -a ${marker} sleep 60` } }] }]);
    const speculation = world.speculate('wait for it');
    for (let i = 0; i < 1500 && processesWith(marker).length === 0; i++) await sleep(10);
    assert.ok(processesWith(marker).length > 0, 'the command runs');
    await speculation.abort();
    assert.equal(speculation.snapshot().status, 'aborted');
    assert.deepEqual(processesWith(marker), []);
    assert.deepEqual(await world.overlayLeftovers(), []);
    assert.deepEqual(await sandboxLeftovers(), []);
  });

  it('a command that writes a protected file (.vscode/tasks.json, .env) stops the run there, and nothing of it is kept', async () => {
    await setUp({ 'a.txt': 'a\n' });
    world.server.setScript([{ toolCalls: [{ name: 'run_shell_command', arguments: { command: 'echo ok > b.txt && mkdir -p .vscode && echo "{}" > .vscode/tasks.json' } }] }, { text: 'never' }]);
    const final = await world.speculate('set up tasks').done;
    assert.equal(final.status, 'boundary');
    assert.match(final.boundary?.detail ?? '', /\.vscode\/tasks\.json is a protected file/);
    assert.deepEqual(final.filesWritten, [], 'the whole run is left out, b.txt too');
    assert.deepEqual(final.toolCalls.map((c) => [c.decision, c.executed]), [['boundary', false]]);
  });

  it('without a sandbox (a failing probe) the run stops as before, and says why and what to do', async () => {
    await setUp({ 'a.txt': 'a\n' }, new UnavailableSandbox("Ubuntu's AppArmor policy forbids unprivileged user namespaces", 'Allow them with `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`.'));
    world.server.setScript([{ toolCalls: [{ name: 'run_shell_command', arguments: { command: 'npm test' } }] }, { text: 'never' }]);
    const final = await world.speculate('run the tests').done;
    assert.equal(final.status, 'boundary');
    assert.deepEqual(final.toolCalls.map((c) => [c.decision, c.executed]), [['boundary', false]]);
    assert.match(final.boundary?.detail ?? '', /^`npm test` may change files/);
    assert.match(final.boundary?.detail ?? '', /Commands that change files stop speculation here: Ubuntu's AppArmor policy forbids unprivileged user namespaces\. Allow them with/);
  });
});
