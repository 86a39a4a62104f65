// What the CLI tests share: running the built `dist/cli.js` as a child, and a byte-for-byte tree of
// a folder (types, modes, content hashes) to prove a command changed nothing, or exactly what it should.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

export const repo = resolve(__dirname, '../../../..');
export const cli = join(repo, 'dist/cli.js');

export function runCli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [cli, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

/** Every entry below `root`: type, mode and content hash, for a byte-for-byte comparison. */
export function tree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name);
      const info = lstatSync(full);
      const key = relative(root, full);
      if (info.isDirectory()) {
        out[key] = `dir ${(info.mode & 0o7777).toString(8)}`;
        visit(full);
      } else out[key] = `file ${(info.mode & 0o7777).toString(8)} ${createHash('sha256').update(readFileSync(full)).digest('hex')}`;
    }
  };
  visit(root);
  return out;
}
