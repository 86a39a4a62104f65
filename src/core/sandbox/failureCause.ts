// Whether a failed command failed because of the sandbox (no network, nothing writable outside the
// workspace, an empty home folder, files it cannot see) rather than on its own: such a run is not a
// result, and the engine stops there so the command runs for real after the user takes over.
import type { SandboxBlock } from './shellSandbox';

export interface FailureCauseInput {
  exitCode: number | null;
  timedOut: boolean;
  output: string;
  /** The real home folder's path (hidden inside), or undefined when there is none worth naming. */
  hostHome: string | undefined;
  /** Whether the workspace itself was writable (read-only runs fail on any write). */
  workspaceWritable: boolean;
  /** True when an absolute path the output names exists on the machine but the sandbox hides it. */
  hiddenPath: (absolute: string) => boolean;
  /**
   * The Landlock backend: a refusal (EACCES, "Permission denied", EPERM) is the sandbox's — it
   * refuses every write outside its scratch folder and every socket — not the command's own failure.
   */
  deniedIsSandbox?: boolean;
}

const NETWORK = [
  /\bENETUNREACH\b/, /network is unreachable/i, /\bEAI_AGAIN\b/, /\bENOTFOUND\b/, /could not resolve host/i,
  /temporary failure in name resolution/i, /name or service not known/i, /\bECONNREFUSED\b/, /connection refused/i,
  /no address associated with hostname/i, /getaddrinfo/i, /unable to access 'https?:/i, /failed to connect to/i,
];
const READ_ONLY = [/\bEROFS\b/, /read-only file system/i];
const DENIED = [/\bEACCES\b/, /permission denied/i, /\bEPERM\b/, /operation not permitted/i];
const DENIED_NETWORK = /socket|connect|\/dev\/(tcp|udp)\/|https?:|\bEAI_|\bnet(work)?\b/i;
const OWNERSHIP = [/\bEOVERFLOW\b/, /value too large for defined data type/i];
const MISSING = /(ENOENT|no such file or directory|not found|does not exist|cannot find|can't open|could not open|permission denied|EACCES)/i;
const ABSOLUTE_PATH = /(?:^|[\s'"`(=:])(\/[^\s'"`),:;]+)/g;

function firstLine(output: string, pattern: RegExp): string | undefined {
  return output.split('\n').find((line) => pattern.test(line))?.trim().slice(0, 200);
}

export function sandboxFailureCause(input: FailureCauseInput): SandboxBlock | null {
  const { output } = input;
  // A file of another user that overlayfs could not copy up fails only inside the sandbox, and a
  // command that carried on regardless (`… || true`, `cmd; echo`) would report success without the
  // change it made live: whatever the exit code, such a run is not a result.
  const notCopiedUp = OWNERSHIP.map((pattern) => firstLine(output, pattern)).find(Boolean);
  if (notCopiedUp) return { kind: 'ownership', detail: `it changes a workspace file that belongs to another user ("${notCopiedUp}")` };
  if (input.exitCode === 0 && !input.timedOut) return null;
  for (const pattern of NETWORK) {
    const line = firstLine(output, pattern);
    if (line) return { kind: 'network', detail: `it needs the network or a service outside the sandbox ("${line}")` };
  }
  for (const pattern of READ_ONLY) {
    const line = firstLine(output, pattern);
    if (line) {
      return {
        kind: 'read-only',
        detail: input.workspaceWritable ? `it writes outside the workspace ("${line}")` : `it writes files, which commands run without approval may not ("${line}")`,
      };
    }
  }
  if (input.deniedIsSandbox) {
    const denied = output.split('\n').filter((line) => DENIED.some((pattern) => pattern.test(line)));
    const network = denied.find((line) => DENIED_NETWORK.test(line));
    if (network) return { kind: 'network', detail: `it needs the network or a service outside the sandbox ("${network.trim().slice(0, 200)}")` };
    const hidden = denied.flatMap((line) => [...line.matchAll(ABSOLUTE_PATH)].map((match) => match[1])).find((named) => input.hiddenPath(named));
    if (hidden && input.hostHome && (hidden === input.hostHome || hidden.startsWith(`${input.hostHome}/`))) {
      return { kind: 'home', detail: `it needs ${hidden} from your home folder, which the sandbox does not show` };
    }
    if (denied[0]) return { kind: 'read-only', detail: `it writes files or reaches outside the workspace, which the Landlock sandbox refuses to commands run without approval ("${denied[0].trim().slice(0, 200)}")` };
  }
  for (const line of output.split('\n')) {
    if (!MISSING.test(line)) continue;
    for (const match of line.matchAll(ABSOLUTE_PATH)) {
      const named = match[1];
      if (!input.hiddenPath(named)) continue;
      if (input.hostHome && (named === input.hostHome || named.startsWith(`${input.hostHome}/`))) {
        return { kind: 'home', detail: `it needs ${named} from your home folder, which the sandbox does not show` };
      }
      return { kind: 'outside', detail: `it needs ${named}, which is outside the workspace` };
    }
  }
  return null;
}
