// The words between the engine and the native keeper of a speculation's sandbox (native/sandbox-keeper.c):
// requests as NUL-terminated fields on its stdin, and its messages on stdout — text lines, and output frames.

/** One mount as the keeper takes it: fstab words, paths as the command sees them (or, before the pivot, in the skeleton). */
export interface KeeperMount {
  source: string;
  target: string;
  type: string;
  options: string;
}

export interface KeeperSetup {
  skeleton: string;
  session: string;
  /** Where the session folder is bound inside the new root (each command detaches it before it runs). */
  sessionInside: string;
  /** cgroup.procs of the session's pids cgroup (root's process limit), or undefined. */
  cgroupProcs: string | undefined;
  mounts: KeeperMount[];
  bash: string;
}

export interface KeeperRun {
  id: string;
  cwd: string;
  fileKb: number;
  memoryKb: number;
  cpuSeconds: number;
  processes: number;
  env: Record<string, string>;
  mounts: KeeperMount[];
  command: string;
}

function fields(values: readonly (string | number)[]): Buffer {
  const text = values.map(String);
  if (text.some((value) => value.includes('\0'))) throw new Error('A sandbox request cannot carry a NUL character.');
  return Buffer.from(text.map((value) => `${value}\0`).join(''), 'utf8');
}

const mountFields = (mounts: readonly KeeperMount[]) => mounts.flatMap((mount) => [mount.source, mount.target, mount.type, mount.options]);

export function encodeSetup(setup: KeeperSetup): Buffer {
  return fields([setup.skeleton, setup.session, setup.sessionInside, setup.cgroupProcs ?? '', setup.mounts.length, ...mountFields(setup.mounts), setup.bash]);
}

export function encodeRun(run: KeeperRun): Buffer {
  const env = Object.entries(run.env).map(([name, value]) => `${name}=${value}`);
  const whole = (value: number) => String(Math.max(1, Math.ceil(value)));
  return fields(['run', run.id, run.cwd, whole(run.fileKb), whole(run.memoryKb), whole(run.cpuSeconds), whole(run.processes), env.length, ...env, run.mounts.length, ...mountFields(run.mounts), run.command]);
}

export function encodeKill(id: string): Buffer {
  return fields(['kill', id]);
}

export function encodeRelease(id: string): Buffer {
  return fields(['release', id]);
}

export type KeeperMessage =
  | { type: 'ready'; pid: number }
  | { type: 'fail'; step: string; detail: string }
  | { type: 'started'; id: string; pid: number }
  | { type: 'out'; id: string; data: Buffer }
  | { type: 'exit'; id: string; status: number }
  | { type: 'gone'; id: string }
  | { type: 'cfail'; id: string; step: string; errno: number };

/** Splits the keeper's stdout into messages; a partial line or frame waits for the rest. */
export class KeeperStream {
  private pending: Buffer = Buffer.alloc(0);

  feed(chunk: Buffer): KeeperMessage[] {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const messages: KeeperMessage[] = [];
    for (;;) {
      const newline = this.pending.indexOf(0x0a);
      if (newline < 0) break;
      const words = this.pending.subarray(0, newline).toString('utf8').split(' ');
      if (words[0] === 'out') {
        const length = Number(words[2]);
        if (this.pending.length < newline + 1 + length) break;
        messages.push({ type: 'out', id: words[1], data: Buffer.from(this.pending.subarray(newline + 1, newline + 1 + length)) });
        this.pending = this.pending.subarray(newline + 1 + length);
        continue;
      }
      this.pending = this.pending.subarray(newline + 1);
      const message = parseLine(words);
      if (message) messages.push(message);
    }
    return messages;
  }
}

function parseLine(words: string[]): KeeperMessage | undefined {
  const [word, first = '', second = '', ...rest] = words;
  if (word === 'ready' && /^\d+$/.test(first)) return { type: 'ready', pid: Number(first) };
  if (word === 'fail') return { type: 'fail', step: first, detail: [second, ...rest].join(' ') };
  if (word === 'started' && /^\d+$/.test(second)) return { type: 'started', id: first, pid: Number(second) };
  if (word === 'exit' && /^-?\d+$/.test(second)) return { type: 'exit', id: first, status: Number(second) };
  if (word === 'gone') return { type: 'gone', id: first };
  if (word === 'cfail') return { type: 'cfail', id: first, step: second, errno: Number(rest[0] ?? 0) };
  return undefined;
}
