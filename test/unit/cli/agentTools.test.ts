// The four interaction tools and the project's instructions through the headless CLI: plan mode
// left by --approve allow, memory kept in --state-dir and read by the next run, AGENTS.md and
// skills in the system prompt, and speculation stopping before anything that needs the user.
import * as assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScriptedServer } from '../../fixtures/scriptedServer';
import { cli, repo, runCli } from './cliKit';

interface ChatResult {
  status: string;
  toolCalls: Array<{ name: string; args: Record<string, unknown>; outcome: string }>;
  messages: Array<Record<string, unknown>>;
  error: string | null;
}

describe('headless CLI: plan mode, memory, instructions, skills', function () {
  this.timeout(30_000);
  let model: ScriptedServer;
  let scratch: string;
  let workspace: string;
  let state: string;
  let home: string;
  before(function () {
    if (!existsSync(cli)) throw new Error('dist/cli.js is missing: run `node esbuild.mjs` first');
  });
  beforeEach(async () => {
    model = new ScriptedServer();
    await model.start();
    scratch = mkdtempSync(join(tmpdir(), 'cli-agent-'));
    workspace = join(scratch, 'ws');
    state = join(scratch, 'state');
    home = join(scratch, 'home');
    cpSync(join(repo, 'test/fixtures/workspaces/demo'), workspace, { recursive: true });
    mkdirSync(join(scratch, 'tmp'));
    mkdirSync(home);
  });
  afterEach(async () => {
    await model.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  const env = () => ({ TMPDIR: join(scratch, 'tmp'), HOME: home, XDG_STATE_HOME: join(scratch, 'xdg') });
  const endpoint = () => ['--workspace', workspace, '--base-url', model.baseUrl, '--model', 'scripted', '--state-dir', state];

  async function chat(prompt: string, extra: string[] = []): Promise<ChatResult> {
    const out = await runCli(['chat', ...endpoint(), '--prompt', prompt, ...extra], env());
    assert.equal(out.code, 0, out.stderr);
    return JSON.parse(out.stdout) as ChatResult;
  }

  const systemOf = (index: number) => String(model.chatRequests[index].body?.messages?.[0].content);

  it('plan mode: exit_plan_mode with --approve allow switches the run to auto-edit, and the plan is carried out', async () => {
    const before = readFileSync(join(workspace, 'src/greet.ts'), 'utf8');
    model.setScript([
      { toolCalls: [{ name: 'exit_plan_mode', arguments: { plan: '1. Say hi instead.' } }] },
      { toolCalls: [{ name: 'write_file', arguments: { file_path: 'src/greet.ts', content: 'export const hi = 1;\n' } }] },
      { text: 'Done.' },
    ]);
    const result = await chat('Plan it, then do it', ['--approval-mode', 'plan', '--approve', 'allow']);
    assert.equal(result.status, 'completed', result.error ?? '');
    assert.deepEqual(result.toolCalls.map((c) => [c.name, c.outcome]), [['exit_plan_mode', 'ran'], ['write_file', 'ran']]);
    assert.notEqual(readFileSync(join(workspace, 'src/greet.ts'), 'utf8'), before);
  });

  it('plan mode: with --approve deny the plan is not approved and nothing is written', async () => {
    const before = readFileSync(join(workspace, 'src/greet.ts'), 'utf8');
    model.setScript([
      { toolCalls: [{ name: 'exit_plan_mode', arguments: { plan: '1. Say hi instead.' } }] },
      { toolCalls: [{ name: 'write_file', arguments: { file_path: 'src/greet.ts', content: 'export const hi = 1;\n' } }] },
      { text: 'Still planning.' },
    ]);
    const result = await chat('Plan it', ['--approval-mode', 'plan']);
    assert.deepEqual(result.toolCalls.map((c) => [c.name, c.outcome]), [['exit_plan_mode', 'denied'], ['write_file', 'refused']]);
    assert.match(String(result.messages[2].content), /keep planning/);
    assert.equal(readFileSync(join(workspace, 'src/greet.ts'), 'utf8'), before);
  });

  it('save_memory writes to --state-dir, and the next run has the fact, AGENTS.md and the skills in its system prompt', async () => {
    writeFileSync(join(workspace, 'AGENTS.md'), 'Use pnpm, never npm.\n');
    mkdirSync(join(home, '.agents/skills/commit-style'), { recursive: true });
    writeFileSync(join(home, '.agents/skills/commit-style/SKILL.md'), '---\nname: commit-style\ndescription: How this user writes commit messages.\n---\nImperative mood.\n');
    model.setScript([{ toolCalls: [{ name: 'save_memory', arguments: { fact: 'The user is called Ada.' } }] }, { text: 'Noted.' }]);
    const first = await chat('Remember that I am Ada', ['--approval-mode', 'default']);
    assert.deepEqual(first.toolCalls.map((c) => [c.name, c.outcome]), [['save_memory', 'ran']]);
    assert.equal(readFileSync(join(state, 'memory.md'), 'utf8'), '- The user is called Ada.\n');
    assert.doesNotMatch(systemOf(0), /Ada/, 'the fact joins later prompts, not the one already sent');

    model.setScript([{ toolCalls: [{ name: 'skill', arguments: { name: 'commit-style' } }] }, { text: 'Hello Ada.' }]);
    const second = await chat('Who am I?');
    assert.deepEqual(second.toolCalls.map((c) => [c.name, c.outcome]), [['skill', 'ran']]);
    assert.match(String(second.messages[2].content), /^Skill "commit-style" \(from your home folder: .*\)\n\nImperative mood\./);
    const system = systemOf(2);
    assert.match(system, /<instructions path="AGENTS.md">\nUse pnpm, never npm\.\n<\/instructions>/);
    assert.match(system, /- commit-style: How this user writes commit messages\./);
    assert.match(system, /Memory: .*\n- The user is called Ada\./);
  });

  it('speculate: save_memory and exit_plan_mode stop the run before they change anything lasting', async () => {
    for (const [tool, args] of [['save_memory', { fact: 'secret plan' }], ['exit_plan_mode', { plan: '1. x' }]] as const) {
      model.setScript([{ toolCalls: [{ name: tool, arguments: args }] }, { text: 'never' }]);
      const out = await runCli(['speculate', ...endpoint(), '--suggestion', 'remember this', '--approval-mode', 'yolo'], env());
      assert.equal(out.code, 0, out.stderr);
      const result = JSON.parse(out.stdout) as { status: string; boundary: { type: string; tool: string } | null; toolCalls: Array<{ executed: boolean }> };
      assert.equal(result.status, 'boundary', tool);
      assert.deepEqual(result.boundary && [result.boundary.type, result.boundary.tool], ['denied_tool', tool]);
      assert.deepEqual(result.toolCalls.map((c) => c.executed), [false]);
    }
    assert.equal(existsSync(join(state, 'memory.md')), false, 'speculation never writes the memory file');
  });
});
