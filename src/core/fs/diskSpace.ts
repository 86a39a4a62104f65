// Saying a full disk in words: which disk (the mount point holding the path), how much a write
// needed and how much is free, so "ENOSPC" becomes something a user can act on.
import { stat, statfs } from 'node:fs/promises';
import * as path from 'node:path';

/** Error codes that mean "no room": a full disk or a used-up quota. */
export function isNoSpace(code: string | undefined): boolean {
  return code === 'ENOSPC' || code === 'EDQUOT';
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MB`;
  return `${(bytes / 1024 ** 3).toFixed(1)} GB`;
}

/** The mount point holding `target`: its highest ancestor on the same device. */
export async function mountPointOf(target: string): Promise<string> {
  let current = path.resolve(target);
  let info = await stat(current).catch(() => undefined);
  while (!info) {
    const parent = path.dirname(current);
    if (parent === current) return current;
    current = parent;
    info = await stat(current).catch(() => undefined);
  }
  const device = info.dev;
  for (;;) {
    const parent = path.dirname(current);
    if (parent === current) return current;
    const up = await stat(parent).catch(() => undefined);
    if (!up || up.dev !== device) return current;
    current = parent;
  }
}

/** Free bytes for an unprivileged writer on the disk holding `target`; undefined when unknown. */
export async function freeBytes(target: string): Promise<number | undefined> {
  try {
    const info = await statfs(target);
    return Number(info.bavail) * Number(info.bsize);
  } catch {
    return undefined;
  }
}

/**
 * "the disk holding /home (mounted at /home) is full: 12.0 KB were needed, 3.5 KB are free" —
 * for a write below `folder` that needed `neededBytes`.
 */
export async function describeNoSpace(folder: string, neededBytes: number): Promise<string> {
  const mount = await mountPointOf(folder).catch(() => folder);
  const free = await freeBytes(folder);
  const room = free === undefined ? '' : `, ${formatBytes(free)} free`;
  return `the disk holding ${folder} (mounted at ${mount}) is full: ${formatBytes(neededBytes)} needed${room}`;
}
