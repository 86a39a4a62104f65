// One `git update-ref --stdin` transaction driven step by step: after `prepare` git holds the lock
// of every ref it will change and has checked each old value (its compare-and-swap); the caller
// then checks what else must hold (HEAD) before `commit`, or `abort`s and nothing changes.
import { spawn } from 'node:child_process';
import { hardenedGitEnv } from './gitCommand';

export interface RefUpdate {
  name: string;
  /** null: the ref must not exist (it is created). */
  old: string | null;
  /** null: the ref is deleted. */
  new: string | null;
}

export type TransactionOutcome = { ok: true } | { ok: false; why: string };

/**
 * Runs the transaction; `beforeCommit` runs while git holds the refs' locks and decides: a reason
 * aborts (nothing changed), undefined commits.
 */
export function runRefTransaction(gitDir: string, updates: readonly RefUpdate[], message: string, zero: string, beforeCommit: () => Promise<string | undefined>): Promise<TransactionOutcome> {
  return new Promise((resolve) => {
    const child = spawn('git', ['update-ref', '-m', message, '--stdin'], { cwd: '/', env: hardenedGitEnv({ gitDir }), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let phase: 'preparing' | 'deciding' | 'committing' | 'aborting' = 'preparing';
    let abortedWhy: string | undefined;
    child.stdin.on('error', () => undefined);
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      if (phase === 'preparing' && /^prepare: ok$/m.test(stdout)) {
        phase = 'deciding';
        beforeCommit().then(
          (why) => {
            abortedWhy = why;
            phase = why === undefined ? 'committing' : 'aborting';
            child.stdin.end(why === undefined ? 'commit\n' : 'abort\n');
          },
          (error: unknown) => {
            abortedWhy = error instanceof Error ? error.message : String(error);
            phase = 'aborting';
            child.stdin.end('abort\n');
          },
        );
      }
    });
    child.on('error', (error) => resolve({ ok: false, why: error.message }));
    child.on('close', (code) => {
      if (abortedWhy !== undefined) return resolve({ ok: false, why: abortedWhy });
      if (code === 0 && phase === 'committing' && /^commit: ok$/m.test(stdout)) return resolve({ ok: true });
      resolve({ ok: false, why: stderr.trim().split('\n')[0] || `update-ref ended (exit ${code}) before committing` });
    });
    const lines = ['start'];
    for (const update of updates) {
      if (update.new === null) lines.push(`delete ${update.name} ${update.old ?? zero}`);
      else lines.push(`update ${update.name} ${update.new} ${update.old ?? zero}`);
    }
    lines.push('prepare', '');
    child.stdin.write(lines.join('\n'));
  });
}
