// Temporary workspaces for the tool and file-system tests: a workspace folder next to an
// "outside" folder holding a secret, so escapes through paths and symlinks can be tried for real.
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { NodeWorkspaceFs, type NodeWorkspaceFsOptions } from '../../../src/core/fs/nodeWorkspaceFs';
import type { WorkspaceFs } from '../../../src/core/fs/workspaceFs';
import type { ToolContext } from '../../../src/core/tools/types';

export const SECRET = 'outside secret';

export interface TempWorkspace {
  /** Realpath of the workspace folder. */
  root: string;
  /** Realpath of a folder beside it (outside the workspace) holding secret.txt. */
  outside: string;
  fs: NodeWorkspaceFs;
  write(relative: string, content: string | Uint8Array): Promise<void>;
  link(relative: string, target: string): Promise<void>;
  context(extra?: Partial<ToolContext>): ToolContext;
  cleanup(): Promise<void>;
}

export async function makeWorkspace(files: Record<string, string | Uint8Array> = {}, options: NodeWorkspaceFsOptions = {}): Promise<TempWorkspace> {
  const base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'speculate-tools-')));
  const root = path.join(base, 'ws');
  const outside = path.join(base, 'outside');
  await mkdir(root);
  await mkdir(outside);
  await writeFile(path.join(outside, 'secret.txt'), SECRET);
  const write = async (relative: string, content: string | Uint8Array) => {
    const target = path.join(root, relative);
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, content);
  };
  for (const [relative, content] of Object.entries(files)) await write(relative, content);
  const fs = await NodeWorkspaceFs.open(root, { ripgrepPath: null, ...options });
  return {
    root,
    outside,
    fs,
    write,
    async link(relative, target) {
      const at = path.join(root, relative);
      await mkdir(path.dirname(at), { recursive: true });
      await symlink(target, at);
    },
    context: (extra = {}) => ({ fs, ...extra }),
    cleanup: () => rm(base, { recursive: true, force: true }),
  };
}

/** Sets up the escape hatches every path-taking tool is tried against. */
export async function addEscapes(ws: TempWorkspace): Promise<void> {
  await ws.link('link-out.txt', path.join(ws.outside, 'secret.txt'));
  await ws.link('linkdir-out', ws.outside);
  await ws.link('dangling.txt', path.join(ws.root, 'does-not-exist.txt'));
}

/** Path arguments that must be refused, with what the refusal must mention. */
export function escapingPaths(ws: TempWorkspace): { path: string; why: RegExp }[] {
  return [
    { path: '../outside/secret.txt', why: /resolves outside the workspace/ },
    { path: '/etc/passwd', why: /resolves outside the workspace/ },
    { path: path.join(ws.outside, 'secret.txt'), why: /resolves outside the workspace/ },
    { path: 'link-out.txt', why: /outside the workspace through a symlink/ },
    { path: 'linkdir-out/secret.txt', why: /outside the workspace through a symlink/ },
    { path: 'dangling.txt', why: /symlink whose target does not exist/ },
  ];
}

/** The workspace's fs with some methods replaced (slow or hanging disks), everything else as is. */
export function withSlowMethods(fs: WorkspaceFs, overrides: Partial<Pick<WorkspaceFs, 'readFile' | 'stat' | 'list' | 'glob' | 'search' | 'writeFile'>>): WorkspaceFs {
  return new Proxy(fs, {
    get(target, key, receiver) {
      const override = (overrides as Record<PropertyKey, unknown>)[key];
      if (override) return override;
      const value = Reflect.get(target, key, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
