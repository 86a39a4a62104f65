// What a command under the Landlock backend may touch, as the helper's rule arguments: the system
// folders, toolchains, /proc and /sys and the workspace read-only; a handful of harmless devices;
// its own scratch folder (HOME and TMPDIR) writable; nothing else. Landlock cannot hide a file below
// a folder it grants, so a folder holding files others may not read (/etc/shadow, private keys) is
// granted entry by entry around them, as the namespace backend shows them empty.
import { readdir } from 'node:fs/promises';
import * as path from 'node:path';
import { isWithin } from '../fs/paths';
import type { SystemEntry } from './mountPlan';

export type LandlockRule = { kind: 'read' | 'list' | 'write' | 'device'; path: string };

/** Devices every program expects; never /dev as a whole (as root it holds the raw disks). */
const DEVICES = ['/dev/null', '/dev/zero', '/dev/full', '/dev/random', '/dev/urandom'];

export interface LandlockRuleInput {
  system: readonly SystemEntry[];
  /** Files and folders (below the system folders) that others may not read: left out. */
  masked: readonly { path: string }[];
  toolchains: readonly string[];
  workspaceRoot: string;
  scratch: string;
}

/** Read rules for `dir` and everything below it except `hidden`: the folders on the way to a hidden entry may be listed only. */
async function readAround(dir: string, hidden: readonly string[], rules: LandlockRule[]): Promise<void> {
  const inside = hidden.filter((entry) => isWithin(dir, entry));
  if (inside.length === 0) {
    rules.push({ kind: 'read', path: dir });
    return;
  }
  if (inside.includes(dir)) return;
  rules.push({ kind: 'list', path: dir });
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  for (const name of names.sort()) await readAround(path.join(dir, name), inside, rules);
}

export async function landlockRules(input: LandlockRuleInput): Promise<LandlockRule[]> {
  const rules: LandlockRule[] = [];
  const hidden = input.masked.map((entry) => entry.path);
  for (const entry of input.system) if (entry.kind === 'bind') await readAround(entry.path, hidden, rules);
  for (const dir of ['/proc', '/sys', ...input.toolchains, input.workspaceRoot]) rules.push({ kind: 'read', path: dir });
  for (const device of DEVICES) rules.push({ kind: 'device', path: device });
  rules.push({ kind: 'write', path: input.scratch });
  return rules;
}

export function ruleArguments(rules: readonly LandlockRule[]): string[] {
  return rules.flatMap((rule) => [`--${rule.kind}`, rule.path]);
}

/** Whether a path lies where the rules let the command read (for telling a hidden path from a missing one). */
export function readable(rules: readonly LandlockRule[], absolute: string): boolean {
  return rules.some((rule) => rule.kind !== 'list' && isWithin(rule.path, absolute));
}
