// The namespace scenarios: real runs of the Linux sandbox, written as plain functions so that the
// same list runs in the test process and again, bundled, in a child process as an unprivileged user.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import * as net from 'node:net';
import * as path from 'node:path';
import { KEPT_SCENARIOS } from './keptScenarios';
import { ENV_SECRET, HOME_SECRET, OUTSIDE_SECRET, processesWith, SandboxKit, sleep, sorted } from './sandboxKit';

export type Scenario = (kit: SandboxKit) => Promise<void>;

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', '-c', 'init.defaultBranch=main', ...args], { cwd, encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent', GIT_CONFIG_NOSYSTEM: '1' } });
}

export const SCENARIOS: Record<string, Scenario> = {
  async 'runs the command in the workspace and returns its exit code and combined output'(kit) {
    const result = await kit.runOnce('pwd; echo to-stderr >&2; exit 3');
    assert.equal(result.exitCode, 3);
    assert.equal(result.timedOut, false);
    assert.equal(result.output, `${kit.workspace}\nto-stderr\n`);
    assert.deepEqual(result.changes, []);
    assert.equal(result.blockedBy, null);
  },

  async "shows the speculation's earlier writes and deletions at the workspace's own path"(kit) {
    await kit.write('src/app.sh', 'echo real\n', 0o644);
    await kit.write('b.txt', 'real b\n');
    await kit.write('gone/old.txt', 'old\n');
    await kit.write('gone/deep/older.txt', 'older\n');
    const layer = {
      files: [
        { path: 'src/app.sh', contentPath: await kit.blob('echo speculated\n', 0o755), mode: 0o755 },
        { path: 'gone/keep.txt', contentPath: await kit.blob('kept\n'), mode: 0o644 },
        { path: 'fresh/new.txt', contentPath: await kit.blob('new\n'), mode: 0o600 },
      ],
      deletedFiles: ['b.txt'],
      deletedDirs: ['gone', 'gone/deep'],
    };
    const result = await kit.runOnce('./src/app.sh; test ! -e b.txt && echo no-b; ls -A gone; cat fresh/new.txt; stat -c %a fresh/new.txt', { layer });
    assert.equal(result.output, 'speculated\nno-b\nkeep.txt\nnew\n600\n');
    assert.equal(result.exitCode, 0);
    // The layer is read, never written: the real files are as they were.
    assert.equal(await kit.read('b.txt'), 'real b\n');
    assert.equal(await kit.read('src/app.sh'), 'echo real\n');
  },

  async 'reads back writes, creations, deletions, renames, new folders, the executable bit and replaced folders'(kit) {
    await kit.write('a.txt', 'a\n');
    await kit.write('b.txt', 'b\n');
    await kit.write('c.txt', 'c\n');
    await kit.write('run.sh', 'echo run\n');
    await kit.write('old/one.txt', '1\n');
    await kit.write('old/two.txt', '2\n');
    await kit.write('gonedir/x/y.txt', 'y\n');
    await kit.write('kept/stays.txt', 'stays\n');
    const command = [
      'echo changed > a.txt',
      'echo new > new.txt',
      'rm b.txt',
      'mv c.txt moved.txt',
      'mkdir -p d/e && echo f > d/e/f.txt',
      'chmod +x run.sh',
      'rm -rf old && mkdir old && echo n > old/n.txt',
      'rm -rf gonedir',
      'echo added > kept/added.txt',
    ].join(' && ');
    const result = await kit.run(command);
    try {
      assert.equal(result.exitCode, 0, result.output);
      assert.deepEqual(result.problems, []);
      assert.deepEqual(sorted(result.changes), [
        'delete directory gonedir',
        'delete directory gonedir/x',
        'delete file b.txt',
        'delete file c.txt',
        'delete file gonedir/x/y.txt',
        'delete file old/one.txt',
        'delete file old/two.txt',
        'write a.txt 644',
        'write d/e/f.txt 644',
        'write kept/added.txt 644',
        'write moved.txt 644',
        'write new.txt 644',
        'write old/n.txt 644',
        'write run.sh 755',
      ]);
      const moved = result.changes.find((change) => change.kind === 'write' && change.path === 'moved.txt');
      assert.ok(moved?.kind === 'write');
      assert.equal(await readFile(moved.contentPath, 'utf8'), 'c\n');
      // Deletions come first, so a consumer can apply the list in order.
      const firstWrite = result.changes.findIndex((change) => change.kind === 'write');
      assert.ok(result.changes.slice(firstWrite).every((change) => change.kind === 'write'));
      // Nothing reached the real workspace.
      assert.equal(await kit.read('a.txt'), 'a\n');
      assert.ok(existsSync(path.join(kit.workspace, 'old/one.txt')));
      assert.ok(!existsSync(path.join(kit.workspace, 'new.txt')));
    } finally {
      await result.dispose();
    }
    await kit.assertNothingLeft();
  },

  async 'a file replaced by a folder and a folder replaced by a file read back as both steps'(kit) {
    await kit.write('thing', 'was a file\n');
    await kit.write('place/inner.txt', 'inner\n');
    const result = await kit.run('rm thing && mkdir thing && echo in > thing/x.txt && rm -rf place && echo now-a-file > place');
    try {
      assert.deepEqual(sorted(result.changes), ['delete directory place', 'delete file place/inner.txt', 'delete file thing', 'write place 644', 'write thing/x.txt 644']);
    } finally {
      await result.dispose();
    }
  },

  async 'a copy-up without a change and a pure git index refresh are not changes'(kit) {
    await kit.write('a.txt', 'same\n');
    git(kit.workspace, 'init', '-q');
    git(kit.workspace, 'add', 'a.txt');
    git(kit.workspace, 'commit', '-q', '-m', 'init');
    const result = await kit.runOnce('touch a.txt && chmod 644 a.txt && printf "same\\n" > a.txt && git update-index --refresh');
    assert.equal(result.exitCode, 0, result.output);
    assert.deepEqual(result.changes, []);
    assert.deepEqual(result.problems, []);
  },

  async 'a change to the git repository is a problem, not a change'(kit) {
    await kit.write('a.txt', 'a\n');
    git(kit.workspace, 'init', '-q');
    git(kit.workspace, 'add', 'a.txt');
    git(kit.workspace, 'commit', '-q', '-m', 'init');
    const result = await kit.runOnce('echo b > b.txt && git add b.txt');
    assert.equal(result.exitCode, 0, result.output);
    assert.deepEqual(result.problems.map((problem) => problem.kind), ['git']);
    assert.match(result.problems[0].detail, /changed the git repository/);
    assert.deepEqual(result.changes, [], 'the run is not taken at all');
  },

  async 'a created symlink is a problem, whether it points outside the workspace or inside'(kit) {
    await kit.write('target.txt', 't\n');
    const outside = await kit.runOnce('ln -s /etc/passwd escape');
    assert.deepEqual(outside.problems.map((problem) => [problem.kind, problem.path]), [['symlink', 'escape']]);
    assert.match(outside.problems[0].detail, /pointing outside the workspace/);
    const inside = await kit.runOnce('ln -s target.txt alias');
    assert.deepEqual(inside.problems.map((problem) => problem.kind), ['symlink']);
    assert.match(inside.problems[0].detail, /cannot carry over/);
  },

  async 'hostile writes next to the workspace, into HOME, TMPDIR, /tmp, /etc and through a symlink change nothing outside'(kit) {
    await kit.link('out-link', kit.outside);
    const parent = path.dirname(kit.workspace);
    const command = [
      `echo x > ${parent}/next-to-workspace.txt`,
      'echo x > ../next-to-workspace-2.txt',
      'echo x > "$HOME/in-home.txt"',
      `echo x > ${kit.home}/in-real-home.txt`,
      'echo x > "$TMPDIR/in-tmpdir.txt"',
      'echo x > /tmp/in-tmp.txt',
      'echo x > /etc/in-etc.txt',
      'echo x > out-link/through-link.txt',
      'echo pwned > out-link/secret.txt',
      'true',
    ].join('; ');
    const result = await kit.runOnce(`${command} 2>/dev/null; exit 0`);
    assert.equal(result.exitCode, 0);
    for (const file of ['next-to-workspace.txt', 'next-to-workspace-2.txt']) assert.ok(!existsSync(path.join(parent, file)), file);
    assert.ok(!existsSync(path.join(kit.home, 'in-home.txt')));
    assert.ok(!existsSync(path.join(kit.home, 'in-real-home.txt')));
    assert.ok(!existsSync('/tmp/in-tmp.txt'));
    assert.ok(!existsSync('/etc/in-etc.txt'));
    assert.ok(!existsSync(path.join(kit.outside, 'through-link.txt')));
    assert.equal(readFileSync(path.join(kit.outside, 'secret.txt'), 'utf8'), OUTSIDE_SECRET);
    assert.deepEqual(result.changes, [], 'nothing written outside comes back as a change either');
  },

  async 'hostile reads through symlinks, .., HOME and the environment see no outside byte'(kit) {
    await kit.link('file-link', path.join(kit.outside, 'secret.txt'));
    await kit.link('dir-link', kit.outside);
    const command = [
      'cat file-link',
      'cat dir-link/secret.txt',
      'cat ../outside/secret.txt',
      `cat ${kit.outside}/secret.txt`,
      'cat "$HOME/secret.txt"',
      `cat ${kit.home}/secret.txt`,
      'grep -r secret / --include=secret.txt -s -l 2>/dev/null | head -5',
      'env',
      'cat /proc/1/environ | tr "\\0" "\\n"',
      'ls -A "$HOME" "$TMPDIR"',
    ].join('; ');
    const result = await kit.runOnce(command);
    for (const secret of [OUTSIDE_SECRET, HOME_SECRET, ENV_SECRET]) assert.ok(!result.output.includes(secret), `${secret} leaked:\n${result.output}`);
    assert.doesNotMatch(result.output, /OPENAI_API_KEY|GITHUB_TOKEN/);
    assert.match(result.output, /^HOME=/m);
    assert.match(result.output, /^TMPDIR=\/tmp$/m);
    assert.match(result.output, /^CI=true$/m);
  },

  async 'the environment is clean: only the variables the sandbox sets'(kit) {
    const result = await kit.runOnce('env -0 | tr "\\0" "\\n" | cut -d= -f1 | sort');
    const names = result.output.trim().split('\n').filter((name) => !['PWD', 'SHLVL', '_', 'OLDPWD'].includes(name));
    const allowed = ['CI', 'GIT_OPTIONAL_LOCKS', 'HOME', 'LANG', 'LOGNAME', 'NO_COLOR', 'PATH', 'SHELL', 'TERM', 'TMPDIR', 'USER'];
    assert.deepEqual(names.filter((name) => !allowed.includes(name)), []);
    for (const required of ['CI', 'HOME', 'PATH', 'TERM', 'TMPDIR']) assert.ok(names.includes(required), required);
  },

  async 'no network: a listener on 127.0.0.1 outside the sandbox is not reached'(kit) {
    let connections = 0;
    const server = net.createServer((socket) => {
      connections++;
      socket.end('hello from outside\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const result = await kit.runOnce(`exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3`);
      assert.notEqual(result.exitCode, 0);
      assert.doesNotMatch(result.output, /hello from outside/);
      assert.equal(connections, 0);
      assert.equal(result.blockedBy?.kind, 'network', result.output);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  },

  async 'a forked daemon that sleeps past the time limit is stopped with everything it started, and writes nothing after'(kit) {
    const marker = `speculate-daemon-${process.pid}-${Date.now()}`;
    const command = `(exec -a ${marker} sleep 60) & setsid bash -c 'exec -a ${marker} sleep 60' & (sleep 0.2; echo late > late.txt; exec -a ${marker} sleep 60) & exec -a ${marker} sleep 60`;
    const started = Date.now();
    const result = await kit.runOnce(command, { limits: { timeoutMs: 700 } });
    assert.equal(result.timedOut, true);
    assert.equal(result.exitCode, null);
    assert.ok(Date.now() - started < 10_000);
    assert.deepEqual(result.changes, [], 'a stopped command brings back nothing');
    assert.deepEqual(processesWith(marker), [], 'every process of the command is gone');
    await sleep(300);
    assert.deepEqual(processesWith(marker), []);
    assert.ok(!existsSync(path.join(kit.workspace, 'late.txt')));
  },

  async 'a daemon left running by a finished command is stopped before its changes are read'(kit) {
    const marker = `speculate-left-${process.pid}-${Date.now()}`;
    // The late write comes well after the command ends, so even a slow keeper has stopped it first.
    const result = await kit.runOnce(`(sleep 3; echo late > late.txt) & (exec -a ${marker} sleep 60) & echo done > done.txt`);
    assert.equal(result.exitCode, 0);
    assert.deepEqual(sorted(result.changes), ['write done.txt 644']);
    assert.deepEqual(processesWith(marker), []);
    await sleep(3200);
    assert.ok(!existsSync(path.join(kit.workspace, 'late.txt')));
  },

  async 'an abort stops the command and everything it started, and leaves nothing behind'(kit) {
    const marker = `speculate-abort-${process.pid}-${Date.now()}`;
    const controller = new AbortController();
    // Abort once the command demonstrably runs (its processes show in /proc).
    const watch = setInterval(() => {
      if (processesWith(marker).length >= 2) controller.abort();
    }, 20);
    const outcome = await kit.outcome(`(exec -a ${marker} sleep 60) & setsid bash -c 'exec -a ${marker} sleep 60' & echo x > x.txt; exec -a ${marker} sleep 60`, { signal: controller.signal });
    clearInterval(watch);
    assert.deepEqual(outcome, { ok: false, reason: 'stopped', aborted: true });
    assert.deepEqual(processesWith(marker), []);
    await kit.assertNothingLeft();
  },

  async 'an abort at any moment of the start (preparing, spawning, before the keeper said its pid) still ends the run'(kit) {
    // A missed abort would let the command run to its end (a few seconds) and come back as a result.
    for (const afterTicks of [0, 1, 2, 3, 5, 8, 12, 20, 40, 80]) {
      const marker = `speculate-early-abort-${process.pid}-${Date.now()}-${afterTicks}`;
      const controller = new AbortController();
      const pending = kit.outcome(`echo x > x.txt; exec -a ${marker} sleep 4`, { signal: controller.signal });
      for (let tick = 0; tick < afterTicks; tick++) await new Promise((resolve) => setImmediate(resolve));
      controller.abort();
      const outcome = await pending;
      assert.equal(outcome.ok, false, `aborted after ${afterTicks} ticks, the run still came back as a result`);
      assert.equal(outcome.ok === false && outcome.aborted, true);
      assert.deepEqual(processesWith(marker), [], `aborted after ${afterTicks} ticks`);
      await kit.assertNothingLeft();
    }
  },

  async 'writing more than the size limit is a problem and brings nothing back'(kit) {
    const limits = { maxWriteBytes: 256 * 1024 };
    const many = await kit.runOnce('for i in 1 2 3; do head -c 100000 /dev/zero > part$i.bin; done', { limits });
    assert.deepEqual(many.problems.map((problem) => problem.kind), ['too-large']);
    assert.deepEqual(many.changes, []);
    const one = await kit.runOnce('head -c 1000000 /dev/zero > big.bin', { limits });
    assert.notEqual(one.exitCode, 0, 'one file past the limit is stopped while it is written');
    assert.deepEqual(one.problems.map((problem) => problem.kind), ['too-large']);
    assert.deepEqual(one.changes, []);
  },

  async 'a read-only workspace refuses writes, and the run says the sandbox blocked them'(kit) {
    await kit.write('a.txt', 'a\n');
    const result = await kit.runOnce('cat a.txt && echo changed > a.txt', { writable: false });
    assert.notEqual(result.exitCode, 0);
    assert.match(result.output, /^a\n/);
    assert.equal(result.blockedBy?.kind, 'read-only');
    assert.equal(await kit.read('a.txt'), 'a\n');
  },

  async "a read-only run over a layer sees the speculation's edits and still writes nothing"(kit) {
    await kit.write('a.txt', 'a\n');
    const layer = { files: [{ path: 'a.txt', contentPath: await kit.blob('speculated\n'), mode: 0o644 }], deletedFiles: [], deletedDirs: [] };
    const result = await kit.runOnce('cat a.txt; echo x > b.txt', { writable: false, layer });
    assert.match(result.output, /^speculated\n/);
    assert.equal(result.blockedBy?.kind, 'read-only');
    assert.ok(!existsSync(path.join(kit.workspace, 'b.txt')));
  },

  async 'a command that needs the home folder is blocked by the sandbox, not failed'(kit) {
    const result = await kit.runOnce(`cat ${kit.home}/secret.txt`);
    assert.notEqual(result.exitCode, 0);
    assert.equal(result.blockedBy?.kind, 'home');
    assert.ok(!result.output.includes(HOME_SECRET));
  },

  async 'node runs inside, and a test that reads the edited source passes only with the edit'(kit) {
    await kit.write('package.json', '{ "name": "t", "private": true, "scripts": { "test": "node --test" } }\n');
    await kit.write('src/greet.js', 'exports.greet = (n) => `Hello, ${n}!`;\n');
    await kit.write('test/greet.test.js', "const { test } = require('node:test'); const assert = require('node:assert');\nconst { farewell } = require('../src/greet.js');\ntest('farewell', () => assert.equal(farewell('A'), 'Goodbye, A!'));\n");
    const without = await kit.runOnce('node --test');
    assert.notEqual(without.exitCode, 0);
    const layer = { files: [{ path: 'src/greet.js', contentPath: await kit.blob('exports.greet = (n) => `Hello, ${n}!`;\nexports.farewell = (n) => `Goodbye, ${n}!`;\n'), mode: 0o644 }], deletedFiles: [], deletedDirs: [] };
    const withEdit = await kit.runOnce('node --test', { layer });
    assert.equal(withEdit.exitCode, 0, withEdit.output);
    assert.match(withEdit.output, /pass 1/);
  },

  async 'a workspace file that cannot be read back as ours is still read: a mode-000 file the command made'(kit) {
    const result = await kit.run('echo hidden > locked.txt && chmod 000 locked.txt');
    try {
      assert.deepEqual(sorted(result.changes), ['write locked.txt 0']);
      const change = result.changes[0];
      assert.ok(change.kind === 'write');
      assert.equal(await readFile(change.contentPath, 'utf8'), 'hidden\n');
    } finally {
      await result.dispose();
    }
    await kit.assertNothingLeft();
  },

  // One sandbox per speculation (keptScenarios.ts).
  ...KEPT_SCENARIOS,
};

/** Runs scenarios by name in this process; returns the failures (name and message). */
export async function runScenarios(names: readonly string[]): Promise<{ name: string; error: string }[]> {
  const failures: { name: string; error: string }[] = [];
  for (const name of names) {
    const kit = await SandboxKit.create();
    try {
      await SCENARIOS[name](kit);
    } catch (error) {
      failures.push({ name, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    } finally {
      await kit.cleanup();
    }
  }
  return failures;
}

/**
 * Entry point of the bundled child: scenario names as arguments, failures as JSON on stdout.
 * `--hold` runs a command named $SPECULATE_HOLD_MARKER that never ends (the parent kills this
 * process); the marker comes by environment so that this process's own command line lacks it.
 */
export async function scenarioMain(argv: readonly string[]): Promise<void> {
  if (argv[0] === '--hold') {
    const kit = await SandboxKit.create();
    await kit.outcome(`exec -a ${process.env.SPECULATE_HOLD_MARKER} sleep 600`);
    return;
  }
  const names = argv.length > 0 ? argv : Object.keys(SCENARIOS);
  const failures = await runScenarios(names);
  process.stdout.write(`${JSON.stringify({ uid: process.getuid?.(), ran: names.length, failures })}\n`);
}
