// The demo's "commit the change" step (test/fixtures/scripted/demoScript.ts) on a copy of the demo
// workspace made a repository: the speculation finishes ahead (no boundary), and Tab commits.
import * as assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEMO_COMMIT_MESSAGE, demoReply } from '../../fixtures/scripted/demoScript';
import { ScriptedServer } from '../../fixtures/scriptedServer';
import { repo, runCli } from '../cli/cliKit';
import { git, overlaySandboxAvailable } from './gitKit';

describe('demo: "commit the change" runs ahead', function () {
  this.timeout(120_000);
  let scratch: string;
  let available = false;
  before(async () => {
    available = await overlaySandboxAvailable();
  });
  afterEach(() => scratch && rmSync(scratch, { recursive: true, force: true }));

  it('finishes without a boundary and Tab makes the commit', async function () {
    if (!available) this.skip();
    scratch = realpathSync(mkdtempSync(join(tmpdir(), 'demo-commit-')));
    const workspace = join(scratch, 'ws');
    mkdirSync(join(scratch, 'tmp'));
    cpSync(join(repo, 'test/fixtures/workspaces/demo'), workspace, { recursive: true });
    git(workspace, 'init', '-q', '-b', 'main');
    git(workspace, 'config', 'user.name', 'Demo User');
    git(workspace, 'config', 'user.email', 'demo@example.com');
    git(workspace, 'add', '-A');
    git(workspace, 'commit', '-q', '-m', 'Demo workspace');
    const greet = join(workspace, 'src/greet.ts');
    writeFileSync(greet, `${readFileSync(greet, 'utf8')}\nexport function farewell(name: string): string {\n  return \`Goodbye, \${name}!\`;\n}\n`);
    const server = new ScriptedServer({ script: (request) => ({ ...demoReply(request.body ?? {}), latencyMs: 0, tokensPerSecond: undefined }) });
    await server.start();
    try {
      const result = await runCli(['speculate', '--workspace', workspace, '--base-url', server.baseUrl, '--model', 'demo', '--suggestion', 'commit the change', '--approval-mode', 'auto-edit', '--accept', '--state-dir', join(scratch, 'state')], { TMPDIR: join(scratch, 'tmp') });
      assert.equal(result.code, 0, result.stderr);
      const out = JSON.parse(result.stdout) as { status: string; boundary: unknown; error: string | null; messages: { role: string; content: string }[] };
      assert.equal(out.status, 'completed', JSON.stringify(out.boundary));
      assert.equal(out.error, null);
      assert.match(out.messages[out.messages.length - 1].content, new RegExp(`Committed: \`[0-9a-f]{7} ${DEMO_COMMIT_MESSAGE}\``));
      assert.equal(git(workspace, 'log', '-1', '--format=%s'), DEMO_COMMIT_MESSAGE);
      assert.match(git(workspace, 'show', 'HEAD:src/greet.ts'), /farewell/);
      assert.equal(git(workspace, 'status', '--porcelain'), '');
    } finally {
      await server.close();
    }
  });
});
