// The keeper: the bash script that is PID 1 of the sandbox's namespaces. It mounts the plan, pivots
// into it, runs the command without capabilities, then kills whatever the command left running and
// holds the namespaces open until the engine has read the command's changes back.

/** Marks the keeper's lines on its control channel (fd 3). */
export const CONTROL_PREFIX = 'speculate-sandbox ';

/**
 * Positional arguments: mount umount pivot_root setpriv bash ip fstab skeleton cwd fsize-kb command
 * address-space-kb cpu-seconds processes (resourceLimits.ts; the process limit counts this namespace's
 * processes alone, except for the host's root, whom it never binds: a pids cgroup does that).
 * Control lines (fd 3): `pid <host pid>` first, then `started`, then `exit <status>`; `fail <step>`
 * when setup fails. Setup diagnostics go to stderr; the command's stdout and stderr share stdout.
 * Reading a line (or EOF) on stdin after `exit` lets it end, and with it every namespace. Fd 4 is a
 * pipe the engine never writes: it ends when the engine's process does, and a watcher then ends the
 * keeper (USR1, whenever it comes: before the command starts too) and kills the rest, so a timeout the
 * engine can no longer enforce never leaves a command running for ever.
 * The loopback device comes up in parallel with the mounts, off the start's critical path.
 *
 * Why a keeper and not the command as PID 1: the command's changes are read back while the mount
 * is still there (an opaque folder is only visible in the merged view), and nothing it started may
 * write anything after that, so the keeper kills the rest first (kill -1 as PID 1 reaches every
 * process of the namespace, nested ones included) and keeps its capabilities, which also keeps the
 * command (which has none) from tracing it.
 */
export const KEEPER_SCRIPT = `
say() { printf '${CONTROL_PREFIX}%s\\n' "$*" >&3; }
read -r hostpid _ < /proc/self/stat
say pid "$hostpid"
trap 'exit 99' USR1
( read -r _ <&4; kill -USR1 1; kill -KILL -1 2>/dev/null ) 3>&- &
if [ -n "$6" ]; then "$6" link set lo up 2>/dev/null 3>&- 4>&- & lo=$!; fi
"$1" -a -T "$7" || { say fail mount; exit 90; }
cd -- "$8" && "$3" . . && "$2" -l . && cd / || { say fail pivot; exit 91; }
cd -- "$9" || { say fail cwd; exit 92; }
ulimit -f "\${10}" -v "\${12}" -t "\${13}" -u "\${14}" || { say fail limits; exit 93; }
if [ -n "\${lo-}" ]; then wait "$lo"; fi
trap 'kill -KILL -1 2>/dev/null' TERM
"$4" --no-new-privs --inh-caps=-all --ambient-caps=-all --bounding-set=-all -- "$5" --norc --noprofile -c "\${11}" </dev/null 2>&1 3>&- 4>&- &
child=$!
say started
while :; do
  wait "$child"; status=$?
  kill -0 "$child" 2>/dev/null || break
done
while kill -KILL -1 2>/dev/null; do wait; done
say exit "$status"
read -r _
exit 0
`;

export interface KeeperArgs {
  mount: string;
  umount: string;
  pivotRoot: string;
  setpriv: string;
  bash: string;
  ip: string | undefined;
  fstab: string;
  skeleton: string;
  cwd: string;
  maxFileKb: number;
  command: string;
  maxMemoryKb: number;
  cpuSeconds: number;
  maxProcesses: number;
}

export function keeperArgv(args: KeeperArgs): string[] {
  return [
    '-c',
    KEEPER_SCRIPT,
    'speculate-sandbox-keeper',
    args.mount,
    args.umount,
    args.pivotRoot,
    args.setpriv,
    args.bash,
    args.ip ?? '',
    args.fstab,
    args.skeleton,
    args.cwd,
    String(Math.max(1, Math.ceil(args.maxFileKb))),
    args.command,
    String(Math.max(1, Math.ceil(args.maxMemoryKb))),
    String(Math.max(1, Math.ceil(args.cpuSeconds))),
    String(Math.max(1, Math.floor(args.maxProcesses))),
  ];
}

export type KeeperEvent = { type: 'pid'; pid: number } | { type: 'started' } | { type: 'exit'; status: number } | { type: 'fail'; step: string };

/** Splits the control channel into events; partial lines wait for the rest. */
export class KeeperChannel {
  private buffer = '';

  feed(chunk: string): KeeperEvent[] {
    this.buffer += chunk;
    const events: KeeperEvent[] = [];
    for (let newline = this.buffer.indexOf('\n'); newline >= 0; newline = this.buffer.indexOf('\n')) {
      const text = this.buffer.slice(0, newline);
      this.buffer = this.buffer.slice(newline + 1);
      if (!text.startsWith(CONTROL_PREFIX)) continue;
      const [word, value = ''] = text.slice(CONTROL_PREFIX.length).split(' ');
      if (word === 'pid' && /^\d+$/.test(value)) events.push({ type: 'pid', pid: Number(value) });
      else if (word === 'started') events.push({ type: 'started' });
      else if (word === 'exit' && /^\d+$/.test(value)) events.push({ type: 'exit', status: Number(value) });
      else if (word === 'fail') events.push({ type: 'fail', step: value });
    }
    return events;
  }
}
