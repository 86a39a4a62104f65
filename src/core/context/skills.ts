// Agent Skills: folders with a SKILL.md (front matter `name`, `description`, then instructions;
// optional scripts/, references/, assets/) in `.agents/skills/` of the workspace and of the user's
// home. The system prompt lists them by name and description; the skill tool loads one in full.
// A workspace's skills are the repository's text: shown to the model, never run by us.
import { promises as nodeFs } from 'node:fs';
import * as path from 'node:path';
import type { WorkspaceFs } from '../fs/workspaceFs';
import { readTextPrefix, readWorkspaceText } from './boundedRead';
import { parseFrontMatter } from './frontMatter';

export const SKILLS_FOLDER = '.agents/skills';
/** A SKILL.md is read up to this many bytes (a note says so when it is longer). */
export const MAX_SKILL_BYTES = 64 * 1024;
/** Skills listed in the system prompt; more are left out with a note. */
export const MAX_LISTED_SKILLS = 50;
/** The Agent Skills limits on the front matter. */
export const MAX_SKILL_NAME_CHARS = 64;
export const MAX_SKILL_DESCRIPTION_CHARS = 1024;
/** Files of a skill listed when it is loaded. */
const MAX_SKILL_FILES = 50;
/**
 * Skill folders looked at in each place, by name: the catalog is read every turn, and a repository
 * may hold thousands of folders there to slow each turn down.
 */
export const MAX_SKILL_FOLDERS = 200;
/** What the catalog reads of each SKILL.md: enough for its front matter (the body is the skill tool's). */
export const MAX_SKILL_HEAD_BYTES = 16 * 1024;
const SKILL_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

export type SkillSource = 'workspace' | 'user';

export interface SkillSummary {
  name: string;
  description: string;
  source: SkillSource;
  /** Workspace-relative for a workspace skill; absolute for the user's own. */
  folder: string;
}

export interface SkillProblem {
  /** The SKILL.md (workspace-relative or absolute). */
  path: string;
  /** Why it was skipped, in words. */
  reason: string;
}

export interface SkillCatalog {
  skills: SkillSummary[];
  problems: SkillProblem[];
}

interface SkillFolder {
  source: SkillSource;
  /** Name of the folder (the skill's name must match it). */
  folderName: string;
  folder: string;
  skillFile: string;
  read(maxBytes: number): Promise<{ text: string; truncated: boolean } | undefined>;
  files(): Promise<string[]>;
}

/** Skills of both places, the user's winning over the workspace's of the same name (a repository cannot shadow them). */
export class AgentSkills {
  constructor(private readonly options: { homeDir?: string }) {}

  async catalog(workspace: WorkspaceFs): Promise<SkillCatalog> {
    const skills = new Map<string, SkillSummary>();
    const problems: SkillProblem[] = [];
    const [user, inWorkspace] = await Promise.all([this.userFolders(), workspaceFolders(workspace)]);
    for (const place of [user, inWorkspace]) {
      if (place.leftOut > 0) problems.push({ path: place.base, reason: `holds ${place.leftOut + MAX_SKILL_FOLDERS} folders; only the first ${MAX_SKILL_FOLDERS} by name were looked at` });
    }
    for (const folder of [...user.folders, ...inWorkspace.folders]) {
      const parsed = await summarize(folder);
      if ('reason' in parsed) {
        problems.push(parsed);
        continue;
      }
      const earlier = skills.get(parsed.name);
      if (earlier) {
        problems.push({ path: folder.skillFile, reason: `a skill named "${parsed.name}" is already installed in ${earlier.source === 'user' ? 'your home folder' : 'the workspace'}; this one is ignored` });
        continue;
      }
      skills.set(parsed.name, parsed);
    }
    return { skills: [...skills.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)), problems };
  }

  /** The skill tool: SKILL.md in full (bounded), then the files beside it. */
  async load(name: string, workspace: WorkspaceFs): Promise<{ ok: true; text: string } | { ok: false; error: string }> {
    const { skills, problems } = await this.catalog(workspace);
    const skill = skills.find((s) => s.name === name);
    if (!skill) {
      const broken = problems.find((p) => p.path.split('/').at(-2) === name);
      if (broken) return { ok: false, error: `The skill "${name}" cannot be loaded: ${broken.path} ${broken.reason}.` };
      const names = skills.map((s) => s.name);
      return { ok: false, error: `There is no skill named "${name}". ${names.length ? `Installed skills: ${names.join(', ')}.` : 'No skills are installed.'}` };
    }
    const places = skill.source === 'user' ? await this.userFolders() : await workspaceFolders(workspace);
    const folder = places.folders.find((f) => f.folder === skill.folder);
    if (!folder) return { ok: false, error: `The skill "${name}" changed while loading it (its folder is gone); try again.` };
    const read = await folder.read(MAX_SKILL_BYTES);
    const parsed = read ? parseFrontMatter(read.text) : undefined;
    if (!read || !parsed?.ok) return { ok: false, error: `The skill "${name}" changed while loading it (${folder.skillFile} is unreadable now); try again.` };
    const files = await folder.files().catch(() => []);
    const where = skill.source === 'user' ? `your home folder: ${folder.skillFile}` : `the workspace: ${folder.skillFile}`;
    const parts = [`Skill "${skill.name}" (from ${where})`, '', parsed.body.trimEnd()];
    if (read.truncated) parts.push('', `[${folder.skillFile} is longer than ${MAX_SKILL_BYTES / 1024} KB; only its start is shown.]`);
    if (files.length > 0) {
      const how = skill.source === 'workspace'
        ? 'read them with read_file; a script runs only through run_shell_command, which asks the user like any command'
        : 'they are outside the workspace, so read_file cannot open them; a script runs only through run_shell_command, which asks the user like any command';
      parts.push('', `Files of this skill (${how}):`, ...files.map((file) => `- ${file}`));
    }
    return { ok: true, text: parts.join('\n') };
  }

  private async userFolders(): Promise<SkillPlace> {
    const home = this.options.homeDir;
    if (!home) return { base: '', folders: [], leftOut: 0 };
    const base = path.join(home, ...SKILLS_FOLDER.split('/'));
    const names = await nodeFs.readdir(base, { withFileTypes: true }).catch(() => []);
    return bounded(base, names.filter((entry) => entry.isDirectory() || entry.isSymbolicLink()).map((entry) => entry.name), (folderName): SkillFolder => {
      const folder = path.join(base, folderName);
      const skillFile = path.join(folder, 'SKILL.md');
      return {
        source: 'user',
        folderName,
        folder,
        skillFile,
        read: (maxBytes) => readTextPrefix(skillFile, maxBytes),
        files: () => listNodeFiles(folder),
      };
    });
  }
}

/** The skill folders of one place (the first MAX_SKILL_FOLDERS by name) and how many more there are. */
interface SkillPlace {
  base: string;
  folders: SkillFolder[];
  leftOut: number;
}

function bounded(base: string, names: string[], folder: (name: string) => SkillFolder): SkillPlace {
  const sorted = names.sort();
  return { base, folders: sorted.slice(0, MAX_SKILL_FOLDERS).map(folder), leftOut: Math.max(0, sorted.length - MAX_SKILL_FOLDERS) };
}

async function workspaceFolders(workspace: WorkspaceFs): Promise<SkillPlace> {
  const entries = await workspace.list(SKILLS_FOLDER).catch(() => []);
  return bounded(SKILLS_FOLDER, entries.filter((entry) => entry.type === 'directory').map((entry) => entry.name), (folderName): SkillFolder => {
    const folder = `${SKILLS_FOLDER}/${folderName}`;
    const skillFile = `${folder}/SKILL.md`;
    return {
      source: 'workspace',
      folderName,
      folder,
      skillFile,
      read: (maxBytes) => readWorkspaceText(workspace, skillFile, maxBytes),
      files: () => listWorkspaceFiles(workspace, folder),
    };
  });
}

async function summarize(folder: SkillFolder): Promise<SkillSummary | SkillProblem> {
  const problem = (reason: string): SkillProblem => ({ path: folder.skillFile, reason });
  const read = await folder.read(MAX_SKILL_HEAD_BYTES);
  if (!read) return problem('is missing or not a readable file');
  const parsed = parseFrontMatter(read.text);
  if (!parsed.ok) {
    return problem(read.truncated && /not closed/.test(parsed.error) ? `has no front matter closed by a line "---" within its first ${MAX_SKILL_HEAD_BYTES / 1024} KB` : parsed.error);
  }
  const name = parsed.fields.name?.trim() ?? '';
  const description = (parsed.fields.description ?? '').replace(/\s+/g, ' ').trim();
  if (name === '') return problem('has no name: in its front matter');
  if (!SKILL_NAME.test(name) || name.length > MAX_SKILL_NAME_CHARS) {
    return problem(`has the name "${name.slice(0, 80)}", but a skill name is lowercase letters, digits and single hyphens, at most ${MAX_SKILL_NAME_CHARS} characters`);
  }
  if (name !== folder.folderName) return problem(`is named "${name}", but its folder is "${folder.folderName}" (they must match)`);
  if (description === '') return problem('has no description: in its front matter');
  if (description.length > MAX_SKILL_DESCRIPTION_CHARS) return problem(`has a description of ${description.length} characters (at most ${MAX_SKILL_DESCRIPTION_CHARS})`);
  return { name, description, source: folder.source, folder: folder.folder };
}

/** The files below a workspace skill's folder (SKILL.md aside), by path, depth-limited. */
async function listWorkspaceFiles(workspace: WorkspaceFs, folder: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string, depth: number) => {
    const entries = await workspace.list(dir).catch(() => []);
    for (const entry of [...entries].sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (out.length >= MAX_SKILL_FILES) return;
      const child = `${dir}/${entry.name}`;
      if (entry.type === 'directory') {
        if (depth < 3) await walk(child, depth + 1);
      } else if (child !== `${folder}/SKILL.md`) out.push(child);
    }
  };
  await walk(folder, 0);
  return out;
}

async function listNodeFiles(folder: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string, depth: number) => {
    const entries = await nodeFs.readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of [...entries].sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (out.length >= MAX_SKILL_FILES) return;
      const child = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (depth < 3) await walk(child, depth + 1);
      } else if (child !== path.join(folder, 'SKILL.md')) out.push(child);
    }
  };
  await walk(folder, 0);
  return out;
}
