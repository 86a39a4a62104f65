// One "window" of the two-process accept race: per round it speculates on a file (reads it, writes
// its own version into an overlay), says ready, and on "go" accepts, reporting what it applied.
// Lines in on stdin, JSON lines out on stdout.
import { createInterface } from 'node:readline';
import { OverlayFs } from '../../../src/core/followup/overlayFs';
import { NodeWorkspaceFs } from '../../../src/core/fs/nodeWorkspaceFs';
import { FileWorkspaceLock, type WorkspaceLock } from '../../../src/core/fs/workspaceLock';

export interface RaceSetup {
  ws: string;
  tmp: string;
  stateDir: string;
  /** Off only to show what the race does without the lock (never in the tests). */
  noLock?: boolean;
}

/** One round: the content this side wants in `file`; `create` when the file does not exist yet. */
export interface RaceRound {
  round: number;
  file: string;
  content: string;
}

export async function raceSide(setup: RaceSetup, lines: AsyncIterable<string>, say: (value: unknown) => void): Promise<void> {
  // Taken before anything is awaited: readline only buffers lines for an iterator that exists.
  const input = lines[Symbol.asyncIterator]();
  const lock: WorkspaceLock = setup.noLock ? { hold: (work) => work() } : await FileWorkspaceLock.open({ stateDir: setup.stateDir, root: setup.ws });
  const base = await NodeWorkspaceFs.open(setup.ws, { ripgrepPath: null, lock });
  let overlay: OverlayFs | undefined;
  for (let next = await input.next(); !next.done; next = await input.next()) {
    const line = next.value;
    const message = JSON.parse(line) as { prepare?: RaceRound; go?: number; quit?: true };
    if (message.quit) break;
    if (message.prepare) {
      overlay = await OverlayFs.create({ base, tmpRoot: setup.tmp, fallbackTmpRoots: [], lock });
      // Look first, as a speculation does: the file's content, or that it is not there.
      await overlay.stat(message.prepare.file);
      await overlay.writeFile(message.prepare.file, message.prepare.content);
      say({ ready: message.prepare.round });
    } else if (message.go !== undefined && overlay) {
      const result = await overlay.applyToReal();
      say({ round: message.go, applied: result.applied, conflicts: result.conflicts.map((c) => c.reason) });
      await overlay.cleanup();
      overlay = undefined;
    }
  }
}

if (require.main === module) {
  const setup = JSON.parse(process.argv[2]) as RaceSetup;
  raceSide(setup, createInterface({ input: process.stdin }), (value) => process.stdout.write(`${JSON.stringify(value)}\n`)).then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(String((error as Error)?.stack ?? error));
      process.exit(1);
    },
  );
}
