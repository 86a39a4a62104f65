// A process limit for root's namespace runs: RLIMIT_NPROC never binds uid 0 of the host (the kernel
// exempts it), so where a pids cgroup of ours is writable (cgroup v2 with the pids controller
// delegated, or the v1 pids hierarchy) each run gets a child cgroup with pids.max, joined by the
// launcher before it starts the namespaces. Elsewhere there is none, and the probe says so.
import { mkdirSync, readFileSync, rmdirSync, writeFileSync, accessSync, constants } from 'node:fs';
import * as path from 'node:path';

const CGROUP_ROOT = '/sys/fs/cgroup';

/** The folder of our own pids cgroup that we may create children in, or undefined. */
export function writablePidsCgroup(procSelfCgroup = '/proc/self/cgroup', root = CGROUP_ROOT): string | undefined {
  let lines: string[];
  try {
    lines = readFileSync(procSelfCgroup, 'utf8').split('\n');
  } catch {
    return undefined;
  }
  const candidates: string[] = [];
  for (const line of lines) {
    const [, controllers, where] = line.split(':');
    if (where === undefined) continue;
    if (controllers.split(',').includes('pids')) candidates.push(path.join(root, 'pids', where));
    // cgroup v2: our cgroup's children get pids only when it delegates the controller to them.
    if (controllers === '') {
      const dir = path.join(root, where);
      try {
        if (readFileSync(path.join(dir, 'cgroup.subtree_control'), 'utf8').split(/\s+/).includes('pids')) candidates.push(dir);
      } catch {
        // Not a v2 mount here, or not ours.
      }
    }
  }
  return candidates.find((dir) => {
    try {
      accessSync(dir, constants.W_OK);
      return true;
    } catch {
      return false;
    }
  });
}

export interface RunCgroup {
  /** The file a process writes "0" to, to join. */
  procs: string;
  remove(): void;
}

let runs = 0;

/** A child cgroup for one run with pids.max = limit; undefined when it cannot be made. */
export function runCgroup(parent: string, limit: number): RunCgroup | undefined {
  const dir = path.join(parent, `speculate-${process.pid}-${++runs}`);
  try {
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'pids.max'), String(limit));
  } catch {
    try {
      rmdirSync(dir);
    } catch {
      // Never made.
    }
    return undefined;
  }
  return {
    procs: path.join(dir, 'cgroup.procs'),
    remove: () => {
      try {
        rmdirSync(dir);
      } catch {
        // A process is still leaving; the kernel frees it once empty, and a later run's dead-run sweep is not needed.
      }
    },
  };
}
