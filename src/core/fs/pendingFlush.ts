// The flushes still running after a change the user already sees (an accept or undo committed by
// its redo log): the next change of the same workspace waits for them, and a process about to exit too.

const pending = new Map<string, Promise<void>>();

/** Adds `flush` to what `root` waits for; never rejects (a failed flush leaves its log for recovery). */
export function trackFlush(root: string, flush: Promise<void>): void {
  const before = pending.get(root) ?? Promise.resolve();
  const settled = Promise.all([before, flush.catch(() => undefined)]).then(() => undefined);
  pending.set(root, settled);
  void settled.then(() => {
    if (pending.get(root) === settled) pending.delete(root);
  });
}

/**
 * Runs a change's flush from the next turn of the event loop, after the change has returned to
 * its caller: even the flush's first calls (opening the files to fsync, handing the fsyncs to the
 * thread pool, which then take the 2 cores' time) stay off the wait. Register it with trackFlush
 * at once all the same, so a later change waits for it.
 */
export function offTheWait(flush: () => Promise<void>): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve)).then(flush);
}

/** Resolves once every flush of `root` started so far has finished. */
export function flushed(root: string): Promise<void> {
  return pending.get(root) ?? Promise.resolve();
}

/** Resolves once every flush of every workspace started so far has finished (before exit). */
export async function allFlushed(): Promise<void> {
  while (pending.size > 0) await Promise.all([...pending.values()]);
}
