// Child process of applyCrash.test.ts: commits ahead in the sandbox, prints the speculated value of
// each ref, then applies and kills itself with SIGKILL at the named step of the accept.
import * as path from 'node:path';
import { processLock } from '../../../src/core/fs/workspaceLock';
import { SpeculatedGit } from '../../../src/core/git/speculatedGit';
import { LinuxSandbox } from '../../../src/core/sandbox/linuxSandbox';

async function main(): Promise<void> {
  const [workspace, journalDir, killAt, command] = process.argv.slice(2);
  const tmp = path.join(path.dirname(workspace), 'sandbox-tmp');
  const sandbox = new LinuxSandbox({ tmpRoot: tmp, hostEnv: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmp, LANG: 'C.UTF-8' } });
  const speculated = await SpeculatedGit.open(workspace, tmp);
  if ('refused' in speculated) throw new Error(speculated.refused);
  const outcome = await sandbox.run({ command, cwd: workspace, workspace: { root: workspace, writable: true }, limits: { timeoutMs: 60_000, maxOutputBytes: 65_536, maxWriteBytes: 64 << 20 }, git: await speculated.access() });
  if (!outcome.ok || outcome.result.exitCode !== 0 || !outcome.result.gitUpper) throw new Error(outcome.ok ? outcome.result.output : outcome.reason);
  const absorbed = await speculated.absorb(outcome.result.gitUpper);
  if (!absorbed.ok) throw new Error(absorbed.detail);
  const effects = await speculated.layer.effects();
  process.stdout.write(`${JSON.stringify({ refs: effects.refs, head: effects.head })}\n`);
  await speculated.apply({
    lock: processLock(workspace),
    journalDir,
    step: (name) => {
      if (name === killAt) process.kill(process.pid, 'SIGKILL');
    },
  });
  process.stdout.write('finished\n');
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(3);
});
