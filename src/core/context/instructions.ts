// Project instructions: the AGENTS.md nearest to each file in play and the workspace root's, with
// .github/copilot-instructions.md, CLAUDE.md and QWEN.md as fallbacks. Bounded in bytes, read
// fresh each turn (so an edited file counts at once) and rendered in a fixed order, so the same
// files give the same bytes and forks keep the main chat's cached prefix.
import type { WorkspaceFs } from '../fs/workspaceFs';
import { readWorkspaceText } from './boundedRead';

/** All instruction files together ride along in every request: at most this many bytes. */
export const MAX_INSTRUCTIONS_BYTES = 32 * 1024;
/** Folders below the root whose instructions may join (the nearest to the most recent files). */
export const MAX_NESTED_INSTRUCTION_FILES = 6;
/** Files in play looked at, most recent first. */
export const MAX_FILES_IN_PLAY = 20;

/** In each folder the first of these that exists is its instructions. */
export const FOLDER_INSTRUCTION_NAMES = ['AGENTS.md', 'CLAUDE.md', 'QWEN.md'] as const;
/** At the root GitHub Copilot's file comes right after AGENTS.md. */
export const ROOT_INSTRUCTION_NAMES = ['AGENTS.md', '.github/copilot-instructions.md', 'CLAUDE.md', 'QWEN.md'] as const;

export interface InstructionFile {
  /** Workspace-relative path. */
  path: string;
  /** What the prompt holds of it (a note says where it was cut). */
  text: string;
  /** The file's whole size. */
  size: number;
  truncated: boolean;
}

/**
 * The instruction files for a turn: the root's first, then the nearest below the root to each file
 * in play, by path. Each is read only up to what the budget has left.
 */
export async function findProjectInstructions(fs: WorkspaceFs, filesInPlay: readonly string[], maxBytes = MAX_INSTRUCTIONS_BYTES): Promise<InstructionFile[]> {
  const found: InstructionFile[] = [];
  let budget = maxBytes;
  const root = await firstExisting(fs, '', ROOT_INSTRUCTION_NAMES, budget);
  if (root) {
    found.push(root);
    budget -= Buffer.byteLength(root.text, 'utf8');
  }
  const nested = await nestedFolders(fs, filesInPlay);
  for (const folder of nested) {
    if (budget <= 0 || found.length > MAX_NESTED_INSTRUCTION_FILES) break;
    const file = await firstExisting(fs, folder, FOLDER_INSTRUCTION_NAMES, budget);
    if (!file) continue;
    found.push(file);
    budget -= Buffer.byteLength(file.text, 'utf8');
  }
  return found;
}

async function firstExisting(fs: WorkspaceFs, folder: string, names: readonly string[], budget: number): Promise<InstructionFile | undefined> {
  for (const name of names) {
    const path = folder === '' ? name : `${folder}/${name}`;
    const read = await readWorkspaceText(fs, path, Math.max(0, budget));
    if (!read) continue;
    if (read.size === 0) continue;
    const note = read.truncated ? `\n[${path} is ${formatBytes(read.size)}; only its first ${formatBytes(Buffer.byteLength(read.text, 'utf8'))} are part of these instructions.]` : '';
    return { path, text: read.text + note, size: read.size, truncated: read.truncated };
  }
  return undefined;
}

/**
 * The folders below the root that hold the instructions nearest to the files in play (sorted, so
 * the order does not depend on the order files came up).
 */
async function nestedFolders(fs: WorkspaceFs, filesInPlay: readonly string[]): Promise<string[]> {
  const nearest = new Set<string>();
  const checked = new Map<string, boolean>();
  for (const file of filesInPlay.slice(0, MAX_FILES_IN_PLAY)) {
    let relative: string;
    try {
      relative = await fs.resolve(file);
    } catch {
      continue;
    }
    const parts = relative.split('/').slice(0, -1);
    for (let depth = parts.length; depth > 0; depth--) {
      const folder = parts.slice(0, depth).join('/');
      let has = checked.get(folder);
      if (has === undefined) {
        has = await holdsInstructions(fs, folder);
        checked.set(folder, has);
      }
      if (has) {
        nearest.add(folder);
        break;
      }
    }
  }
  return [...nearest].sort().slice(0, MAX_NESTED_INSTRUCTION_FILES);
}

async function holdsInstructions(fs: WorkspaceFs, folder: string): Promise<boolean> {
  for (const name of FOLDER_INSTRUCTION_NAMES) {
    const info = await fs.stat(`${folder}/${name}`).catch(() => undefined);
    if (info?.type === 'file' && info.size > 0) return true;
  }
  return false;
}

/** The structure of history messages this module reads (it does not depend on the message types). */
export interface HistoryLike {
  role: string;
  tool_calls?: readonly { function: { arguments: string } }[];
}

/** Path arguments of the tools that name files. */
const PATH_ARGS = ['file_path', 'path'] as const;

/** The files the conversation worked on, most recent first (tool-call paths), after `extra` (attachments). */
export function filesInPlay(history: readonly HistoryLike[], extra: readonly string[] = []): string[] {
  const seen = new Set<string>(extra);
  const files = [...extra];
  for (let i = history.length - 1; i >= 0 && files.length < MAX_FILES_IN_PLAY; i--) {
    const calls = history[i].tool_calls ?? [];
    for (let c = calls.length - 1; c >= 0; c--) {
      let args: unknown;
      try {
        args = JSON.parse(calls[c].function.arguments);
      } catch {
        continue;
      }
      for (const name of PATH_ARGS) {
        const value = (args as Record<string, unknown> | null)?.[name];
        if (typeof value === 'string' && value.trim() !== '' && !seen.has(value)) {
          seen.add(value);
          files.push(value);
        }
      }
    }
  }
  return files.slice(0, MAX_FILES_IN_PLAY);
}

export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${bytes} bytes`;
}
