// A second process for the workspace-lock tests: takes the lock `rounds` times and, holding it,
// does a read-sleep-write increment of a counter file, so any overlap with another holder loses a count.
import { readFile, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { FileWorkspaceLock } from '../../../src/core/fs/workspaceLock';

export async function incrementUnderLock(options: { stateDir: string; root: string; rounds: number }): Promise<void> {
  const lock = await FileWorkspaceLock.open({ stateDir: options.stateDir, root: options.root });
  const counter = path.join(options.root, 'counter.txt');
  for (let i = 0; i < options.rounds; i++) {
    await lock.hold(async () => {
      const value = Number(await readFile(counter, 'utf8'));
      await new Promise((resolve) => setImmediate(resolve));
      await writeFile(counter, String(value + 1));
    });
  }
}

if (require.main === module) {
  incrementUnderLock(JSON.parse(process.argv[2]) as { stateDir: string; root: string; rounds: number }).then(
    () => process.stdout.write('done'),
    (error: unknown) => {
      process.stderr.write(String((error as Error)?.stack ?? error));
      process.exitCode = 1;
    },
  );
}
