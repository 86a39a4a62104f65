// A hostile repository (fsmonitor, a filter driver and hooks that leave a mark when they run) and
// the agent's `git status`: run without asking in auto-edit or yolo, or during speculation, it runs
// none of them; a command the user approved runs as git normally would, hooks and all.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { ApprovalScheduler, type ApprovalMode, type ApprovalRequest } from '../../../src/core/chat/approvals';
import { Conversation } from '../../../src/core/chat/conversation';
import type { ChatMessage } from '../../../src/core/messages';
import { makeWorld, MODEL, type EngineWorld } from '../engine/engineKit';

const FILES = { 'f.txt': 'one\n', 'g.txt': 'same\n' };

describe('read-only shell commands against a hostile repository', function () {
  // Each test builds a rigged repository with git and runs model turns that spawn git and bash.
  this.timeout(30_000);
  let world: EngineWorld;
  let marks: string;
  let touches = 0;

  /** This process's environment without git variables or the user's git config (setup only). */
  function setupEnv(): Record<string, string> {
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('GIT_') && value !== undefined) env[key] = value;
    return { ...env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' };
  }

  function git(...args: string[]): void {
    execFileSync('git', args, { cwd: world.root, env: setupEnv(), stdio: 'pipe' });
  }

  /** The planted programs that ran since the last call, sorted. */
  async function ran(): Promise<string[]> {
    const text = await readFile(marks, 'utf8').catch(() => '');
    await rm(marks, { force: true });
    return [...new Set(text.split('\n').filter(Boolean))].sort();
  }

  /** Gives g.txt a new mtime, so git status must re-read it through its filter driver. */
  async function makeStatDirty(): Promise<void> {
    const file = path.join(world.root, 'g.txt');
    const when = Date.now() / 1000 + 60 + ++touches;
    await utimes(file, when, when);
  }

  beforeEach(async () => {
    world = await makeWorld(FILES);
    marks = path.join(world.parent, 'marks');
    const plants = path.join(world.parent, 'plants');
    await mkdir(path.join(plants, 'hooks'), { recursive: true });
    const plant = async (name: string) => {
      const file = path.join(plants, name);
      await writeFile(file, `#!/bin/sh\necho ${path.basename(name)} >> '${marks}'\ncat "$1" 2>/dev/null\nexit 0\n`);
      await chmod(file, 0o755);
      return file;
    };
    git('init', '-q');
    git('config', 'user.email', 'test@example.com');
    git('config', 'user.name', 'Test');
    git('add', 'f.txt', 'g.txt');
    git('commit', '-qm', 'one');
    // Hostile settings, as a model in auto-edit mode (or a downloaded project) could leave them.
    await plant('hooks/post-index-change');
    await plant('hooks/pre-commit');
    git('config', 'core.hooksPath', path.join(plants, 'hooks'));
    git('config', 'core.fsmonitor', await plant('fsmonitor'));
    git('config', 'filter.evil.clean', await plant('clean'));
    git('config', 'filter.evil.process', await plant('process'));
    await writeFile(path.join(world.root, '.git', 'info', 'attributes'), 'g.txt filter=evil\n');
    await ran();
  });

  afterEach(() => world.dispose());

  /** One main-chat turn in which the model runs `command`; returns the tool message and the questions asked. */
  async function mainChatRuns(command: string, mode: ApprovalMode): Promise<{ result: string; asked: ApprovalRequest[] }> {
    const { services } = world;
    world.server.setScript([{ toolCalls: [{ name: 'run_shell_command', arguments: { command } }] }, { text: 'Done.' }]);
    const asked: ApprovalRequest[] = [];
    const conversation = new Conversation({
      llm: world.llm,
      model: MODEL,
      systemPrompt: services.systemPrompt,
      tools: services.tools,
      toolContext: services.toolContext,
      approvals: new ApprovalScheduler({ mode, isReadOnly: async (text) => (await services.classifyShell(text)).readOnly }),
      prompter: {
        request: async (request) => {
          asked.push(request);
          return 'allow';
        },
      },
    });
    assert.equal((await conversation.send('check the repository')).status, 'done');
    const tool = conversation.messages.find((m): m is Extract<ChatMessage, { role: 'tool' }> => m.role === 'tool');
    return { result: typeof tool?.content === 'string' ? tool.content : '', asked };
  }

  for (const mode of ['auto-edit', 'yolo'] as const) {
    it(`${mode}: git status runs without asking and runs none of the repository's programs`, async () => {
      await makeStatDirty();
      const { result, asked } = await mainChatRuns('git status', mode);
      assert.deepEqual(asked, []);
      assert.match(result, /^Exit code: 0\nOutput:\nOn branch/);
      assert.deepEqual(await ran(), []);
    });
  }

  it('a command the user approved (or yolo ran although not read-only) runs as git normally would, hooks and all', async () => {
    await makeStatDirty();
    const status = await mainChatRuns('git status', 'default');
    assert.equal(status.asked.length, 1, 'default mode asks');
    const programs = await ran();
    assert.ok(programs.includes('fsmonitor') && programs.includes('process'), `the trap is real: ${programs.join(', ')}`);

    // The planted "process" filter does not speak git's protocol, so a commit that re-reads g.txt
    // through it would fail; this step is about hooks.
    await writeFile(path.join(world.root, '.git', 'info', 'attributes'), '');
    await writeFile(path.join(world.root, 'f.txt'), 'one\ntwo\n');
    const commit = await mainChatRuns('git commit -qam two', 'auto-edit');
    assert.equal(commit.asked.length, 1, 'a commit is not read-only, so auto-edit asks');
    assert.match(commit.result, /^Exit code: 0/);
    assert.ok((await ran()).includes('pre-commit'), 'the pre-commit hook ran');

    // yolo runs everything without asking; what is not read-only still runs as git normally would.
    await writeFile(path.join(world.root, 'f.txt'), 'one\ntwo\nthree\n');
    const yolo = await mainChatRuns('git commit -qam three', 'yolo');
    assert.deepEqual(yolo.asked, []);
    assert.match(yolo.result, /^Exit code: 0/);
    assert.ok((await ran()).includes('pre-commit'), 'the pre-commit hook ran in yolo too');
  });

  it('speculation: git status runs and runs none of the repository programs', async () => {
    await makeStatDirty();
    world.server.setScript([{ toolCalls: [{ name: 'run_shell_command', arguments: { command: 'git status --porcelain' } }] }, { text: 'Clean.' }]);
    // The plain tool context: the engine itself marks the call as run on a read-only verdict.
    const final = await world.speculate('check the status', { toolContext: world.services.toolContext }).done;
    assert.equal(final.status, 'completed');
    assert.deepEqual(final.toolCalls.map((call) => [call.name, call.decision, call.executed, call.ok]), [['run_shell_command', 'allow', true, true]]);
    assert.deepEqual(await ran(), []);
  });
});
