// Shared fixtures for the engine's end-to-end tests: a temp workspace beside an "outside" folder and
// a private overlay temp root, the real workspace services, the scripted HTTP server and real client.
import { lstat, mkdir, mkdtemp, readFile, readdir, readlink, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { userTextOf } from '../../../src/core/context/attachments';
import type { ChatMessage } from '../../../src/core/messages';
import type { FollowupClock, TimerHandle } from '../../../src/core/followup/followupState';
import { CacheSafeParamsStore, type CacheSafeParams } from '../../../src/core/followup/forkedQuery';
import { OVERLAY_PARENT } from '../../../src/core/followup/overlay/recovery';
import { startSpeculation, type Speculation, type SpeculationOptions } from '../../../src/core/followup/speculation';
import { SUGGESTION_PROMPT } from '../../../src/core/followup/suggestionGenerator';
import { OpenAiCompatibleClient } from '../../../src/core/llm/openAiCompatibleClient';
import type { PrefixCaching } from '../../../src/core/llm/requestBody';
import { openWorkspaceServices, type WorkspaceServices } from '../../../src/core/workspaceServices';
import { ScriptedServer, type RecordedRequest, type Script, type ScriptedReply } from '../../fixtures/scriptedServer';

export const MODEL = 'scripted-model';
export const OUTSIDE_SECRET = 'outside secret, never to be read or written\n';

export interface EngineWorld {
  /** The mkdtemp folder holding everything; removed by dispose. */
  parent: string;
  /** Realpath of the workspace. */
  root: string;
  /** A sibling folder of the workspace that must never change. */
  outside: string;
  /** The temp root overlays go under (`<tmpRoot>/speculate/<pid>/<id>/`). */
  tmpRoot: string;
  services: WorkspaceServices;
  server: ScriptedServer;
  llm: OpenAiCompatibleClient;
  write(relative: string, content: string): Promise<void>;
  read(relative: string): Promise<string>;
  link(relative: string, target: string): Promise<void>;
  /** What the main chat would have saved after a turn with this history. */
  params(history?: ChatMessage[]): CacheSafeParams;
  /** Starts a speculation with the real services; tracked so dispose can abort it. */
  speculate(suggestion: string, options?: Partial<SpeculationOptions>, history?: ChatMessage[]): Speculation;
  /** Aborts every run this world started (idempotent for finished ones). */
  abortAll(): Promise<void>;
  /** Every path still below `<tmpRoot>/speculate` (overlay folders, pid folders). */
  overlayLeftovers(): Promise<string[]>;
  dispose(): Promise<void>;
}

/** Where the world's workspace and temp folder go when not in its own temp folder (a small disk). */
export interface WorldLayout {
  /** The workspace is created as `<workspaceIn>/ws`. */
  workspaceIn?: string;
  /** Overlays go under this folder instead of `<parent>/tmp`. */
  tmpRoot?: string;
}

export async function makeWorld(files: Record<string, string> = {}, script?: Script, clientOptions: { prefixCaching?: PrefixCaching } = {}, layout: WorldLayout = {}): Promise<EngineWorld> {
  const parent = await realpath(await mkdtemp(path.join(os.tmpdir(), 'speculate-engine-test-')));
  const root = path.join(layout.workspaceIn ?? parent, 'ws');
  const outside = path.join(parent, 'outside');
  const tmpRoot = layout.tmpRoot ?? path.join(parent, 'tmp');
  await mkdir(root);
  await mkdir(outside);
  await mkdir(tmpRoot, { recursive: true });
  await writeFile(path.join(outside, 'secret.txt'), OUTSIDE_SECRET);
  const put = async (relative: string, content: string) => {
    const file = path.join(root, relative);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content);
  };
  for (const [relative, content] of Object.entries(files)) await put(relative, content);
  // Never the real user's skills or memory: a home and state folder of the test's own.
  const services = await openWorkspaceServices(root, { tmpRoot, stateDir: path.join(parent, 'state'), homeDir: path.join(parent, 'home') });
  const server = new ScriptedServer(script ? { script } : {});
  await server.start();
  // Quick retries: the tests count attempts, they do not wait for real backoff.
  const llm = new OpenAiCompatibleClient({ baseURL: server.baseUrl, apiKey: 'test-key', retry: { baseDelayMs: 1, maxDelayMs: 2 }, ...clientOptions });
  const started: Speculation[] = [];
  const world: EngineWorld = {
    parent,
    root,
    outside,
    tmpRoot,
    services,
    server,
    llm,
    write: put,
    read: (relative) => readFile(path.join(root, relative), 'utf8'),
    async link(relative, target) {
      const at = path.join(root, relative);
      await mkdir(path.dirname(at), { recursive: true });
      await symlink(target, at);
    },
    params: (history = []) =>
      new CacheSafeParamsStore().save({ systemPrompt: services.systemPrompt, tools: services.tools.definitions(), history, model: MODEL }),
    speculate(suggestion, options = {}, history = []) {
      const speculation = startSpeculation(suggestion, {
        llm,
        params: world.params(history),
        tools: services.tools,
        approvalMode: 'auto-edit',
        createOverlay: services.createOverlay,
        classifyShell: services.classifyShell,
        toolContext: services.toolContext,
        ...options,
      });
      started.push(speculation);
      return speculation;
    },
    async abortAll() {
      for (const speculation of started) await speculation.abort();
    },
    overlayLeftovers: () => listBelow(path.join(tmpRoot, OVERLAY_PARENT)),
    async dispose() {
      for (const speculation of started) await speculation.abort().catch(() => undefined);
      await server.close();
      await rm(parent, { recursive: true, force: true });
      if (layout.workspaceIn) await rm(root, { recursive: true, force: true });
    },
  };
  return world;
}

/** Every file and folder below `dir` (relative), or [] when `dir` does not exist. */
export async function listBelow(dir: string): Promise<string[]> {
  const found: string[] = [];
  const visit = async (current: string) => {
    let names: string[];
    try {
      names = await readdir(current);
    } catch {
      return;
    }
    for (const name of names.sort()) {
      const full = path.join(current, name);
      // An overlay being deleted right now may vanish between readdir and lstat.
      const info = await lstat(full).catch(() => undefined);
      if (!info) continue;
      found.push(path.relative(dir, full));
      if (info.isDirectory()) await visit(full);
    }
  };
  await visit(dir);
  return found;
}

/** Every entry below `root`: folders, file contents, symlink targets (not followed). */
export async function treeSnapshot(root: string): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  const visit = async (dir: string) => {
    for (const name of (await readdir(dir)).sort()) {
      const full = path.join(dir, name);
      const relative = path.relative(root, full).split(path.sep).join('/');
      const info = await lstat(full);
      if (info.isSymbolicLink()) result[relative] = `link -> ${await readlink(full)}`;
      else if (info.isDirectory()) {
        result[relative] = 'dir';
        await visit(full);
      } else result[relative] = `file ${(await readFile(full)).toString('base64')}`;
    }
  };
  await visit(root);
  return result;
}

/** The snapshot entry of a file with this text. */
export function fileEntry(content: string): string {
  return `file ${Buffer.from(content, 'utf8').toString('base64')}`;
}

/** Every string inside a value (object keys included), for leak checks. */
export function allStrings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(allStrings);
  if (typeof value === 'object' && value !== null) return Object.entries(value).flatMap(([key, child]) => [key, ...allStrings(child)]);
  return [];
}

/** Polls until `condition` holds; fails with `what` after `timeoutMs` (a hang guard, not a timing assertion). */
export async function waitUntil(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

// ── reading what the scripted server received ──────────────────────────────────────────────────

type WireMessage = Record<string, unknown>;

export function wireMessages(request: RecordedRequest): WireMessage[] {
  return request.body?.messages ?? [];
}

function textOf(message: WireMessage | undefined): string {
  const content = message?.content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => String((part as { text?: unknown }).text ?? '')).join('');
  return '';
}

/** A fork (suggestion or speculation) sends thinking off; the main chat leaves it to the provider. */
export function isFork(request: RecordedRequest): boolean {
  return request.body?.chat_template_kwargs !== undefined;
}

export function isSuggestionRequest(request: RecordedRequest): boolean {
  const last = wireMessages(request).at(-1);
  return last?.role === 'user' && textOf(last) === SUGGESTION_PROMPT;
}

/** The last user message that is not the suggestion prompt: the task the request works on (its words, attachments apart). */
export function taskOf(request: RecordedRequest): string {
  const messages = wireMessages(request);
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role === 'user' && textOf(messages[i]) !== SUGGESTION_PROMPT) return userTextOf(textOf(messages[i]));
  }
  return '';
}

/** Assistant messages after the task's user message: which step of the task this request is. */
export function stepOf(request: RecordedRequest): number {
  const messages = wireMessages(request);
  let lastUser = -1;
  messages.forEach((m, i) => {
    if (m.role === 'user' && textOf(m) !== SUGGESTION_PROMPT) lastUser = i;
  });
  return messages.slice(lastUser + 1).filter((m) => m.role === 'assistant').length;
}

/**
 * A scripted model for whole sessions: each task (a user message) has its replies by step, and
 * each task has the suggestion predicted after it ('' = silence).
 */
export function taskScript(
  turns: Record<string, ScriptedReply[]>,
  suggestions: Record<string, string> = {},
  suggestionReply: Partial<ScriptedReply> = {},
): Script {
  return (request) => {
    const task = taskOf(request);
    if (isSuggestionRequest(request)) return { ...suggestionReply, text: suggestions[task] ?? '' };
    const replies = turns[task];
    if (!replies) return { status: 500, body: { error: { message: `no script for task "${task}"`, type: 'server_error', code: null } } };
    return replies[stepOf(request)] ?? { text: `(no step ${stepOf(request)} scripted for "${task}")` };
  };
}

// ── a clock moved by hand ────────────────────────────────────────────────────────────────────

export class FakeClock implements FollowupClock {
  private time = 1_000_000;
  private nextId = 1;
  private timers: { id: number; at: number; fn: () => void }[] = [];

  now(): number {
    return this.time;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = this.nextId++;
    this.timers.push({ id, at: this.time + ms, fn });
    return id;
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers = this.timers.filter((timer) => timer.id !== handle);
  }

  get pendingTimers(): number {
    return this.timers.length;
  }

  /** Moves time on and runs the timers that fell due, in order. */
  advance(ms: number): void {
    this.time += ms;
    for (;;) {
      const due = this.timers.filter((timer) => timer.at <= this.time).sort((a, b) => a.at - b.at)[0];
      if (!due) return;
      this.timers = this.timers.filter((timer) => timer !== due);
      due.fn();
    }
  }
}
