// A rigged workspace against unattended shell commands: symlinks that leave it, `..`, absolute
// paths, recursion through a symlinked folder, cd out, options that write in clustered or
// positional forms, computed file names in awk, and the session's secrets in the environment.
// Every command goes through the real run_shell_command path with approvedAsReadOnly (as
// speculation and auto-edit run it): nothing outside may be shown and nothing may be written.
import * as assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { ApprovalScheduler } from '../../../src/core/chat/approvals';
import { gateToolCall } from '../../../src/core/followup/speculationToolGate';
import { NodeProcessRunner } from '../../../src/core/process/nodeProcessRunner';
import { isShellCommandReadOnly } from '../../../src/core/shell';
import { createToolRegistry } from '../../../src/core/tools';
import { runShellCommandTool } from '../../../src/core/tools/runShellCommand';
import { openWorkspaceServices, type WorkspaceServices } from '../../../src/core/workspaceServices';
import { makeWorkspace, SECRET, type TempWorkspace } from '../tools/workspaceFixture';

const SESSION_SECRET = 'sk-session-secret-0123456789';

describe('unattended shell commands in a hostile workspace', () => {
  let ws: TempWorkspace;
  let services: WorkspaceServices;
  const processRunner = new NodeProcessRunner({ killGraceMs: 200 });

  before(async () => {
    ws = await makeWorkspace({ 'src/a.txt': 'alpha\n', 'notes.txt': 'notes\n', 'sub/inner.txt': 'inner\n' });
    symlinkSync(path.join(ws.outside, 'secret.txt'), path.join(ws.root, 'linkfile.txt'));
    symlinkSync(ws.outside, path.join(ws.root, 'linkdir'));
    symlinkSync(path.join(ws.outside, 'secret.txt'), path.join(ws.root, 'sub', 'escape.txt'));
    symlinkSync('../src', path.join(ws.root, 'sub', 'inside-link'));
    mkdirSync(path.join(ws.root, 'deep', 'er'), { recursive: true });
    symlinkSync(ws.outside, path.join(ws.root, 'deep', 'er', 'out'));
    writeFileSync(path.join(ws.root, 'list.txt'), `${path.join(ws.outside, 'secret.txt')}\n`);
    // A file whose name is an option: a glob would hand it to the command as --files0-from=….
    mkdirSync(path.join(ws.root, 'names'));
    symlinkSync(path.join(ws.outside, 'secret.txt'), path.join(ws.root, 'names', 'away'));
    writeFileSync(path.join(ws.root, 'names', '--files0-from=away'), '');
    writeFileSync(path.join(ws.root, 'names', 'plain.txt'), 'plain\n');
    // A symlink out named "]", which `[]]` matches in bash; a NUL-separated list naming the secret.
    symlinkSync(path.join(ws.outside, 'secret.txt'), path.join(ws.root, ']'));
    writeFileSync(path.join(ws.root, 'list0'), `${path.join(ws.outside, 'secret.txt')}\0`);
    services = await openWorkspaceServices(ws.root);
  });
  after(() => ws.cleanup());

  async function unattended(command: string, directory?: string) {
    return runShellCommandTool.execute(
      { command, ...(directory ? { directory } : {}) },
      ws.context({ processRunner, approvedAsReadOnly: true, shellEnv: { OPENAI_API_KEY: SESSION_SECRET, GITHUB_TOKEN: SESSION_SECRET } }),
    );
  }

  const outsideReads: Array<[command: string, directory?: string]> = [
    ['cat linkfile.txt'],
    ['head -n 3 linkdir/secret.txt'],
    ['cat ../outside/secret.txt'],
    [`cat ${path.join('..', 'outside', 'secret.txt')}`],
    ['cat /etc/passwd'],
    ['cat ~/.ssh/id_rsa'],
    ['grep -R secret .'],
    ['grep -r secret linkdir'],
    ['ls linkdir'],
    ['cat escape.txt', 'sub'],
    ['cat ../linkfile.txt', 'sub'],
    ['cat inside-link/../../outside/secret.txt', 'sub'],
    ['cat */*'],
    ['cat deep/*/out/secret.txt'],
    ['cat deep/er/*/secret.txt'],
    ['wc -c lin?file.txt'],
    ['cat {notes,linkfile}.txt'],
    ['cd .. && cat outside/secret.txt'],
    ['cd linkdir && cat secret.txt'],
    ['cd sub && cat escape.txt'],
    ['cd sub; cd ..; cd ..; cat outside/secret.txt'],
    ['cat < linkfile.txt'],
    ['xargs cat < list.txt'],
    ['cat $(cat list.txt)'],
    ['echo "$(cat linkfile.txt)"'],
    ['for f in linkdir/*; do cat "$f"; done'],
    ["sed 'r linkfile.txt' notes.txt"],
    ['grep -f linkfile.txt notes.txt'],
    ['diff -r src linkdir'],
    ['find -L . -name secret.txt'],
    ['rg -L secret'],
    ['tree -l'],
    ["awk '{ print }' linkfile.txt"],
    ['git diff --no-index notes.txt linkfile.txt'],
    ['bash -c "cat linkfile.txt"'],
    ['env cat linkfile.txt'],
    ['wc -l *', 'names'],
    ['cd names && wc -l *'],
    ['for f in *; do wc "$f"; done', 'names'],
    ['wc {--files0-from=away,plain.txt}', 'names'],
    ['for f in src/*; do cat "$f"; read -r f < list.txt; done'],
    ['cat []]'],
    ['cat l[[:alpha:]]nkfile.txt'],
    ['dd if=linkfile.txt status=none'],
    ['grep -f../outside/secret.txt notes.txt'],
    ['hexdump -f../outside/secret.txt notes.txt'],
    ['sort --files0-from=list0'],
    ['wc --files0-from list0'],
    ['for f in notes.txt; do :; done; for i in 1 2; do cat "$f"; for f in linkfile.txt; do :; done; done'],
  ];
  for (const [command, directory] of outsideReads) {
    it(`shows nothing from outside for ${JSON.stringify(command)}${directory ? ` in ${directory}` : ''}`, async function () {
      this.timeout(10_000);
      const verdict = await services.classifyShell(command, directory);
      assert.equal(verdict.readOnly, false, `classified read-only: ${command}`);
      const result = await unattended(command, directory);
      assert.equal(result.ok, false);
      assert.match(result.output, /^The command was not run: /);
      assert.ok(!result.output.includes(SECRET));
    });
  }

  const insideReads: Array<[command: string, directory?: string]> = [
    ['cat notes.txt'],
    ['cat src/a.txt'],
    ['cat inner.txt', 'sub'],
    ['cat inside-link/a.txt', 'sub'],
    ['cd sub && cat inner.txt'],
    ['cd src && cat ../notes.txt'],
    ['grep -r alpha src'],
    ['ls -la'],
    ['cat src/*'],
    ['for f in src/*; do wc -l "$f"; done'],
    ['echo $(pwd)'],
    ['echo "$(ls src)"'],
    ['wc -l < notes.txt'],
  ];
  for (const [command, directory] of insideReads) {
    it(`runs ${JSON.stringify(command)}${directory ? ` in ${directory}` : ''}, which stays inside`, async function () {
      this.timeout(10_000);
      const result = await unattended(command, directory);
      assert.equal(result.ok, true, result.output);
      assert.ok(!result.output.includes(SECRET));
    });
  }

  it('prints no secret of the session (printenv, env, set, export -p, declare -p)', async () => {
    const result = await unattended('printenv; env; set; export -p; declare -p');
    assert.equal(result.ok, true, result.output);
    assert.ok(!result.output.includes(SESSION_SECRET));
  });

  const writers = [
    'tree -Lo 1 out.txt',
    'tree -oL out.txt 1',
    'xxd notes.txt out.txt',
    'xxd notes.txt -ps',
    'xxd -ps notes.txt out.txt',
    'time --output=out.txt ls',
    'env time -o out.txt ls',
    'time -ao out.txt ls',
    'base64 -o out.txt notes.txt',
    'base64 notes.txt --output=out.txt',
    'sort -ro out.txt notes.txt',
    'uniq notes.txt out.txt',
    'rg -z alpha',
    'rg --pre ./x alpha',
    "awk 'BEGIN { f = \"/in\" \"et/tcp/0/127.0.0.1/9\"; getline < f }'",
    "awk -v f=/inet/tcp/0/127.0.0.1/9 'BEGIN { getline < f }'",
    "awk 'BEGIN { ARGV[1] = \"out.txt\"; ARGC = 2 } { print }'",
    "awk '{ print }' ARGV=x notes.txt",
    "echo /inet/tcp/0/127.0.0.1/9 | xargs awk '{ print }'",
    "awk '{ print }' /in{et,}/tcp/0/127.0.0.1/9",
  ];
  for (const command of writers) {
    it(`refuses ${JSON.stringify(command)} and writes nothing`, async function () {
      this.timeout(10_000);
      const before = readdirSync(ws.root).sort();
      const result = await unattended(command);
      assert.equal(result.ok, false, result.output);
      assert.match(result.output, /^The command was not run: /);
      assert.deepEqual(readdirSync(ws.root).sort(), before);
      assert.equal(existsSync(path.join(ws.root, 'out.txt')), false);
    });
  }

  it('the speculation gate and the approval scheduler judge a command in its directory', async () => {
    const tools = createToolRegistry();
    const tool = tools.get('run_shell_command');
    const gate = (args: Record<string, unknown>) =>
      gateToolCall('run_shell_command', tool, args, { approvalMode: 'auto-edit', fs: services.fs, overlayHasWrites: false, classifyShell: services.classifyShell });
    // escape.txt exists only in sub/: from the root the same words read nothing.
    assert.equal((await gate({ command: 'cat escape.txt' })).decision, 'allow');
    const inSub = await gate({ command: 'cat escape.txt', directory: 'sub' });
    assert.equal(inSub.decision, 'boundary');
    assert.match(inSub.reason, /outside the workspace through a symlink/);

    const approvals = new ApprovalScheduler({ mode: 'auto-edit', isReadOnly: async (command, directory) => (await services.classifyShell(command, directory)).readOnly });
    const shell = { name: 'run_shell_command', kind: 'shell' as const };
    assert.deepEqual(await approvals.decide(shell, { command: 'cat escape.txt' }), { action: 'run', readOnly: true });
    assert.deepEqual(await approvals.decide(shell, { command: 'cat escape.txt', directory: 'sub' }), { action: 'ask' });
  });

  it('without a workspace the classifier judges from the process\'s folder (the CLI\'s shell-check)', async () => {
    assert.equal((await isShellCommandReadOnly('cat /etc/passwd')).readOnly, false);
    assert.equal((await isShellCommandReadOnly('cat package.json')).readOnly, true);
  });
});
