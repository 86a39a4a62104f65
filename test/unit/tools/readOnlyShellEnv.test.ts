// The environment of a command run on a read-only verdict alone: no PATH entry in the workspace or
// relative to it, no start-up file or exported function, git's filter drivers named and switched
// off, and no run at all when they cannot be listed.
import * as assert from 'node:assert/strict';
import { chmod, mkdir, readFile, realpath, symlink, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { NodeProcessRunner } from '../../../src/core/process/nodeProcessRunner';
import { readOnlyShellEnv, sanitisedPath } from '../../../src/core/process/readOnlyShellEnv';
import { runShellCommandTool } from '../../../src/core/tools/runShellCommand';
import type { ProcessRunner } from '../../../src/core/process/processRunner';
import { makeWorkspace, type TempWorkspace } from './workspaceFixture';

type RunCall = { command: string; options: Parameters<ProcessRunner['run']>[1] };

/** Answers the filter query with `reply` and records every run. */
function scriptedRunner(reply: Partial<Awaited<ReturnType<ProcessRunner['run']>>> | Error): ProcessRunner & { calls: RunCall[] } {
  const calls: RunCall[] = [];
  return {
    calls,
    async run(command, options) {
      calls.push({ command, options });
      if (reply instanceof Error) throw reply;
      return { exitCode: 0, signal: null, output: '', truncated: false, timedOut: false, ...reply };
    },
  };
}

describe('read-only shell environment', () => {
  let ws: TempWorkspace;
  const runner = new NodeProcessRunner({ killGraceMs: 200 });

  beforeEach(async () => {
    ws = await makeWorkspace({ 'a.txt': 'alpha\n' });
  });

  afterEach(() => ws.cleanup());

  /** Puts an executable `name` in `dir` that prints "planted <name>" instead of doing its job. */
  async function plant(dir: string, name: string): Promise<void> {
    await mkdir(dir, { recursive: true });
    const file = path.join(dir, name);
    await writeFile(file, `#!/bin/sh\necho planted ${name}\n`);
    await chmod(file, 0o755);
  }

  describe('sanitisedPath', () => {
    it('keeps absolute entries outside the workspace and drops the ones a workspace can supply', async () => {
      await mkdir(path.join(ws.root, 'bin'));
      await mkdir(path.join(ws.outside, 'tools'));
      await symlink(path.join(ws.root, 'bin'), path.join(ws.outside, 'into-ws'));
      const value = [
        '/usr/bin',
        '',
        '.',
        'bin',
        './node_modules/.bin',
        '~/bin',
        path.join(ws.root, 'bin'),
        `${ws.root}/sub/../bin`,
        path.join(ws.outside, 'into-ws'),
        path.join(ws.outside, 'does-not-exist'),
        path.join(ws.outside, 'tools'),
        '/bin',
        '/usr/bin',
      ].join(':');
      const kept = (await sanitisedPath(value, ws.root)).split(':');
      // Resolved and de-duplicated: where /bin is a link to /usr/bin, it appears once.
      const expected = [await realpath('/usr/bin'), path.join(ws.outside, 'tools'), await realpath('/bin')];
      assert.deepEqual(kept, expected.filter((dir, i) => expected.indexOf(dir) === i));
    });

    it('falls back to the system folders instead of an empty PATH (which means the working directory)', async () => {
      const fallback = await sanitisedPath(`.:${ws.root}`, ws.root);
      assert.notEqual(fallback, '');
      assert.ok(fallback.split(':').every((dir) => path.isAbsolute(dir) && !dir.startsWith(ws.root)), fallback);
      assert.notEqual(await sanitisedPath(undefined, ws.root), '');
    });
  });

  describe('readOnlyShellEnv', () => {
    it('puts the safe git wrapper first on a PATH with no workspace entries, and overrides git\'s single program settings', async () => {
      const result = await readOnlyShellEnv({ env: { PATH: `.:${ws.root}/bin:${process.env.PATH ?? ''}`, HOME: '/home/x' }, workspaceRoot: ws.root });
      assert.ok(result.ok);
      const env = result.env;
      const entries = env.PATH.split(':');
      assert.ok(!entries.some((entry) => !path.isAbsolute(entry) || entry.startsWith(ws.root)), env.PATH);
      const wrapper = await readFile(path.join(entries[0], 'git'), 'utf8');
      assert.match(wrapper, /^#!\/.*bash\n# Written by Speculate/);
      assert.ok(wrapper.includes(`root='${ws.root}'`), 'the wrapper knows its workspace');
      const overrides = Array.from({ length: Number(env.GIT_CONFIG_COUNT) }, (_, i) => `${env[`GIT_CONFIG_KEY_${i}`]}=${env[`GIT_CONFIG_VALUE_${i}`]}`);
      for (const expected of ['core.fsmonitor=false', 'core.hooksPath=/dev/null', 'diff.autoRefreshIndex=false', 'diff.submodule=short']) {
        assert.ok(overrides.includes(expected), `${expected} in ${overrides.join(' ')}`);
      }
      assert.equal(env.HOME, '/home/x');
      assert.equal(env.GIT_PAGER, 'cat');
      assert.equal(env.GIT_CONFIG_GLOBAL, '/dev/null');
      assert.equal(env.GIT_CEILING_DIRECTORIES, path.dirname(ws.root));
    });

    it('refuses when the wrapper would sit inside the workspace (TMPDIR in the workspace)', async () => {
      const saved = process.env.TMPDIR;
      process.env.TMPDIR = path.join(ws.root, 'tmp');
      await mkdir(process.env.TMPDIR);
      try {
        const result = await readOnlyShellEnv({ env: { PATH: process.env.PATH ?? '/usr/bin' }, workspaceRoot: ws.root });
        assert.ok(!result.ok);
        assert.match(result.reason, /temporary folder .* is inside the workspace/);
      } finally {
        if (saved === undefined) delete process.env.TMPDIR;
        else process.env.TMPDIR = saved;
      }
    });

    it('leaves out variables that make bash run a file or a function before the command', async () => {
      const result = await readOnlyShellEnv({
        env: { PATH: '/usr/bin:/bin', BASH_ENV: 'setup.sh', ENV: '.envrc', 'BASH_FUNC_ls%%': '() { echo hijacked; }', LANG: 'C' },
        workspaceRoot: ws.root,
      });
      assert.ok(result.ok);
      assert.deepEqual(Object.keys(result.env).filter((key) => /^(BASH_ENV|ENV|BASH_FUNC_)/.test(key)), []);
      assert.equal(result.env.LANG, 'C');
    });

    it('keeps only an allowlist of the session\'s variables: no tokens, keys, agent sockets or loader settings', async () => {
      const session = {
        PATH: '/usr/bin:/bin',
        HOME: '/home/x',
        USER: 'x',
        LANG: 'en_US.UTF-8',
        LC_ALL: '../../evil/locale',
        TZ: 'Europe/Paris',
        TMPDIR: path.join(ws.root, 'tmp'),
        OPENAI_API_KEY: 'sk-secret',
        GITHUB_TOKEN: 'ghp_secret',
        AWS_SECRET_ACCESS_KEY: 'aws-secret',
        SPECULATE_API_KEY: 'key',
        SSH_AUTH_SOCK: '/tmp/agent.sock',
        LD_PRELOAD: './evil.so',
        NODE_OPTIONS: '--require ./evil.js',
        GIT_DIR: '/elsewhere/.git',
        GIT_EXTERNAL_DIFF: './evil.sh',
        RUSTUP_TOOLCHAIN: './toolchain',
        GOFLAGS: '-toolexec=./evil',
        PYTHONSTARTUP: './evil.py',
        http_proxy: 'http://proxy.invalid',
      };
      const result = await readOnlyShellEnv({ env: session, workspaceRoot: ws.root });
      assert.ok(result.ok);
      const own = Object.keys(result.env).filter((key) => !key.startsWith('GIT_') && key !== 'PAGER');
      assert.deepEqual(own.sort(), ['HOME', 'LANG', 'PATH', 'TERM', 'TZ', 'USER']);
      assert.equal(result.env.TERM, 'dumb');
      assert.equal(result.env.LANG, 'en_US.UTF-8');
      assert.ok(!Object.values(result.env).some((value) => /secret|evil|agent\.sock|proxy\.invalid/.test(value)), JSON.stringify(result.env));
    });

  });

  describe('run_shell_command on a read-only verdict', () => {
    it('never runs a program the workspace planted on the PATH; without the verdict the PATH is as given', async () => {
      await plant(path.join(ws.root, 'bin'), 'ls');
      await plant(ws.root, 'cat');
      const shellEnv = { PATH: `${path.join(ws.root, 'bin')}:.:${process.env.PATH ?? '/usr/bin:/bin'}` };
      // The trap is real: as the user's own PATH has it, `ls` is the workspace's.
      const trapped = await runShellCommandTool.execute({ command: 'ls a.txt; cat a.txt' }, ws.context({ processRunner: runner, shellEnv }));
      assert.match(trapped.output, /planted ls/);
      assert.match(trapped.output, /planted cat/);

      const safe = await runShellCommandTool.execute({ command: 'ls a.txt; cat a.txt' }, ws.context({ processRunner: runner, shellEnv, approvedAsReadOnly: true }));
      assert.deepEqual(safe, { ok: true, output: 'Exit code: 0\nOutput:\na.txt\nalpha' });
    });

    it('printenv shows none of the session\'s secrets', async () => {
      const shellEnv = { OPENAI_API_KEY: 'sk-live-secret', ANTHROPIC_API_KEY: 'secret-2', SSH_AUTH_SOCK: '/tmp/agent' };
      const trapped = await runShellCommandTool.execute({ command: 'printenv; env; export -p' }, ws.context({ processRunner: runner, shellEnv }));
      assert.match(trapped.output, /sk-live-secret/, 'the trap is real: an approved command sees the session');
      const safe = await runShellCommandTool.execute({ command: 'printenv; env; export -p; set; declare -p' }, ws.context({ processRunner: runner, shellEnv, approvedAsReadOnly: true }));
      assert.equal(safe.ok, true);
      assert.doesNotMatch(safe.output, /sk-live-secret|secret-2|agent/);
      assert.match(safe.output, /^PATH=/m);
    });

    it('does not source a BASH_ENV file from the workspace', async () => {
      await ws.write('setup.sh', 'echo sourced\n');
      const shellEnv = { BASH_ENV: 'setup.sh' };
      assert.match((await runShellCommandTool.execute({ command: 'true' }, ws.context({ processRunner: runner, shellEnv }))).output, /sourced/);
      const safe = await runShellCommandTool.execute({ command: 'true' }, ws.context({ processRunner: runner, shellEnv, approvedAsReadOnly: true }));
      assert.equal(safe.output, 'Exit code: 0\n(no output)');
    });

    it('tells the model it did not run the command when the environment cannot be made safe', async () => {
      const fake = scriptedRunner({ exitCode: 0 });
      const saved = process.env.TMPDIR;
      process.env.TMPDIR = path.join(ws.root, 'tmp');
      await mkdir(process.env.TMPDIR);
      try {
        const result = await runShellCommandTool.execute({ command: 'git status' }, ws.context({ processRunner: fake, approvedAsReadOnly: true }));
        assert.equal(result.ok, false);
        assert.match(result.output, /^The command was not run: .*inside the workspace.*\. Ask the user to run it\.$/);
        assert.equal(fake.calls.length, 0);
      } finally {
        if (saved === undefined) delete process.env.TMPDIR;
        else process.env.TMPDIR = saved;
      }
    });

    it('runs a command the user approved in the environment it was given', async () => {
      const fake = scriptedRunner({ exitCode: 0, output: 'ok' });
      await runShellCommandTool.execute({ command: 'git commit -m x' }, ws.context({ processRunner: fake, shellEnv: { PATH: '.:/usr/bin' } }));
      assert.equal(fake.calls.length, 1);
      assert.equal(fake.calls[0].command, 'git commit -m x');
      assert.equal(fake.calls[0].options.env?.PATH, '.:/usr/bin');
      assert.equal(fake.calls[0].options.env?.GIT_CONFIG_COUNT, process.env.GIT_CONFIG_COUNT);
    });
  });
});
