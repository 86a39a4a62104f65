// The real process runner: output, exit codes, timeouts and aborts that stop a whole process group.
import * as assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { NodeProcessRunner, OutputCap } from '../../../src/core/process/nodeProcessRunner';

/** True while the process runs; a killed process that is only waiting to be reaped (a zombie) counts as gone. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    // No /proc entry (or no /proc at all): fall through to a signal-0 probe.
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits (bounded) until a process is gone; killed processes disappear asynchronously. */
async function gone(pid: number, attempts = 100): Promise<boolean> {
  for (let i = 0; i < attempts; i++) {
    if (!alive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return !alive(pid);
}

describe('NodeProcessRunner', () => {
  let dir: string;
  const runner = new NodeProcessRunner({ killGraceMs: 200 });

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'speculate-proc-')));
  });

  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('runs bash in the given directory and returns combined output and the exit code', async () => {
    const result = await runner.run('pwd; echo to-stderr >&2; [[ 1 == 1 ]] && exit 3', { cwd: dir, timeoutMs: 10_000, maxOutputBytes: 10_000 });
    assert.equal(result.exitCode, 3);
    assert.equal(result.timedOut, false);
    assert.equal(result.truncated, false);
    assert.match(result.output, new RegExp(`^${dir}\n`));
    assert.match(result.output, /to-stderr/);
  });

  it('passes the given environment and closes stdin', async () => {
    const result = await runner.run('echo "$SPEC_TEST_VAR"; cat; echo done', { cwd: dir, timeoutMs: 10_000, maxOutputBytes: 10_000, env: { PATH: process.env.PATH ?? '', SPEC_TEST_VAR: 'from-env' } });
    assert.equal(result.output, 'from-env\ndone\n');
    assert.equal(result.exitCode, 0);
  });

  it('stops a command at its timeout, with everything it started', async () => {
    const result = await runner.run('sleep 30 & echo $!; wait', { cwd: dir, timeoutMs: 1500, maxOutputBytes: 10_000 });
    assert.equal(result.timedOut, true);
    assert.notEqual(result.exitCode, 0);
    const grandchild = Number(result.output.trim());
    assert.ok(grandchild > 0, `background pid printed: ${result.output}`);
    assert.ok(await gone(grandchild), 'the background sleep was killed too');
  });

  it('abort kills the shell and a grandchild it started in the background', async () => {
    const controller = new AbortController();
    const pidFile = path.join(dir, 'pid');
    const running = runner.run(`sleep 30 & echo $! > ${pidFile}; echo started; wait`, { cwd: dir, timeoutMs: 60_000, maxOutputBytes: 10_000, signal: controller.signal });
    let pid = 0;
    for (let i = 0; i < 250 && pid === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      pid = Number(readFileSync(pidFile, { flag: 'a+' }).toString().trim()) || 0;
    }
    assert.ok(pid > 0 && alive(pid), 'the grandchild is running before the abort');
    controller.abort();
    const result = await running;
    assert.equal(result.timedOut, false);
    assert.equal(result.exitCode, null);
    assert.ok(await gone(pid), 'the grandchild is gone after the abort');
  });

  it('returns at once, running nothing, when already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const marker = path.join(dir, 'ran');
    const result = await runner.run(`touch ${marker}`, { cwd: dir, timeoutMs: 10_000, maxOutputBytes: 100, signal: controller.signal });
    assert.equal(result.exitCode, null);
    assert.equal(existsSync(marker), false);
  });

  it('caps the output, keeping its beginning and end, and says it was cut', async () => {
    const result = await runner.run('echo FIRST; seq 1 20000; echo LAST', { cwd: dir, timeoutMs: 10_000, maxOutputBytes: 1000 });
    assert.equal(result.truncated, true);
    assert.ok(result.output.startsWith('FIRST\n'));
    assert.ok(result.output.trimEnd().endsWith('LAST'));
    assert.match(result.output, /bytes of output omitted/);
    assert.ok(Buffer.byteLength(result.output) < 1200);
  });

  it('returns when the shell exits even if a background job keeps its output open', async () => {
    const result = await runner.run('sleep 30 & echo $!', { cwd: dir, timeoutMs: 60_000, maxOutputBytes: 1000 });
    const background = Number(result.output.trim());
    assert.equal(result.exitCode, 0);
    assert.ok(background > 0 && alive(background), 'the background job is left running, detached');
    process.kill(background, 'SIGKILL');
  });

  it('runs bash -c, not the login shell named by $SHELL, and sources no start-up file', async () => {
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', SHELL: '/bin/sh', HOME: dir };
    await writeFile(path.join(dir, '.bashrc'), 'echo rc-ran\n');
    await writeFile(path.join(dir, '.bash_profile'), 'echo profile-ran\n');
    const result = await runner.run('echo "bash=${BASH_VERSION:+yes}"; shopt -q login_shell && echo login; [[ $- == *i* ]] && echo interactive; true', { cwd: dir, timeoutMs: 10_000, maxOutputBytes: 1000, env });
    assert.equal(result.output, 'bash=yes\n');
  });

  it('takes a shell only by absolute path, so no PATH lookup can pick a workspace file', () => {
    assert.throws(() => new NodeProcessRunner({ shell: 'bash' }), /absolute path/);
    assert.doesNotThrow(() => new NodeProcessRunner({ shell: '/bin/bash' }));
  });

  it('rejects with a clear message when the directory does not exist', async () => {
    await assert.rejects(runner.run('true', { cwd: path.join(dir, 'missing'), timeoutMs: 1000, maxOutputBytes: 100 }), /Could not start/);
  });
});

describe('OutputCap', () => {
  it('keeps everything under the budget and head and tail over it', () => {
    const small = new OutputCap(100);
    small.add(Buffer.from('abc'));
    small.add(Buffer.from('def'));
    assert.equal(small.text(), 'abcdef');
    assert.equal(small.truncated, false);
    const big = new OutputCap(10);
    for (const chunk of ['0123', '4567', '89ab', 'cdef']) big.add(Buffer.from(chunk));
    assert.equal(big.truncated, true);
    assert.equal(big.text(), '012345\n… [6 bytes of output omitted] …\ncdef');
  });
});
