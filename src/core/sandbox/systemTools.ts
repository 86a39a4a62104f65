// The machine's own programs the Linux sandbox is built from (util-linux, coreutils, bash), found
// at fixed system paths so that neither PATH nor the workspace can supply one of them.
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import * as path from 'node:path';

const SYSTEM_DIRS = ['/usr/bin', '/bin', '/usr/sbin', '/sbin'];

export interface SystemTools {
  unshare: string;
  mount: string;
  umount: string;
  pivotRoot: string;
  setpriv: string;
  mknod: string;
  bash: string;
  /** iproute2, to switch on the loopback device inside; without it the command has no 127.0.0.1 either. */
  ip: string | undefined;
}

/** Which package brings each required program, for the reason shown when one is missing. */
const REQUIRED: Record<Exclude<keyof SystemTools, 'ip'>, { name: string; from: string }> = {
  unshare: { name: 'unshare', from: 'util-linux' },
  mount: { name: 'mount', from: 'util-linux (mount)' },
  umount: { name: 'umount', from: 'util-linux (mount)' },
  pivotRoot: { name: 'pivot_root', from: 'util-linux' },
  setpriv: { name: 'setpriv', from: 'util-linux (setpriv)' },
  mknod: { name: 'mknod', from: 'coreutils' },
  bash: { name: 'bash', from: 'bash' },
};

async function findProgram(name: string): Promise<string | undefined> {
  for (const dir of SYSTEM_DIRS) {
    const candidate = path.join(dir, name);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here; try the next system folder.
    }
  }
  return undefined;
}

export type SystemToolsResult = { ok: true; tools: SystemTools } | { ok: false; missing: string; from: string };

export async function findSystemTools(): Promise<SystemToolsResult> {
  const found: Partial<SystemTools> = {};
  for (const [key, { name, from }] of Object.entries(REQUIRED) as [keyof typeof REQUIRED, { name: string; from: string }][]) {
    const location = await findProgram(name);
    if (!location) return { ok: false, missing: name, from };
    found[key] = location;
  }
  found.ip = await findProgram('ip');
  return { ok: true, tools: found as SystemTools };
}
