// Where the sandbox's native helpers (native/*.c, compiled by the build into dist/native/: the
// Landlock launcher, the namespace sandbox's keeper) lie next to the running bundle, and which Landlock
// ABI the kernel offers. Found only next to our own code, never on PATH or in the workspace, which could plant one.
import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import * as path from 'node:path';

export const HELPER_NAME = 'landlock-exec';
/** The kept namespace sandbox's keeper (native/sandbox-keeper.c). */
export const KEEPER_HELPER_NAME = 'sandbox-keeper';

/** dist/native/ beside the bundle (extension.js, cli.js); from the test and bench transpilations (out/…) the repository's dist/native/. */
export function helperCandidates(from: string = __dirname, name = HELPER_NAME): string[] {
  const found = [path.join(from, 'native', name)];
  let dir = from;
  for (let up = 0; up < 5; up++) {
    dir = path.dirname(dir);
    found.push(path.join(dir, 'dist', 'native', name));
  }
  return found;
}

export async function findHelper(candidates: readonly string[] = helperCandidates()): Promise<string | undefined> {
  for (const candidate of candidates) {
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}


/** The kernel's Landlock ABI (0: none, or switched off at boot), as the helper reports it. */
export function landlockAbi(helper: string): Promise<number> {
  return new Promise((resolve) => {
    execFile(helper, ['--probe'], { timeout: 10_000 }, (_error, stdout) => {
      const match = /^landlock-abi (\d+)/m.exec(String(stdout));
      resolve(match ? Number(match[1]) : 0);
    });
  });
}
