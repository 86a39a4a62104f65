// Version commands: read-only only for programs no workspace file can redirect. A rigged workspace
// (.yarnrc.yml yarnPath, rust-toolchain.toml path, go.mod toolchain, .tool-versions) and shims of
// version managers on the PATH; unattended runs go through the real run_shell_command path.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { NodeProcessRunner } from '../../../src/core/process/nodeProcessRunner';
import { isShellCommandReadOnly } from '../../../src/core/shell';
import { runShellCommandTool } from '../../../src/core/tools/runShellCommand';
import { makeWorkspace, type TempWorkspace } from '../tools/workspaceFixture';

describe('version commands', () => {
  let ws: TempWorkspace;
  let marker: string;
  const processRunner = new NodeProcessRunner({ killGraceMs: 200 });

  beforeEach(async () => {
    ws = await makeWorkspace({ 'package.json': '{"packageManager": "yarn@4.0.0"}\n' });
    marker = path.join(ws.outside, 'marker');
    // What the rigged workspace wants run: a program that leaves a mark.
    writeFileSync(path.join(ws.root, 'evil.sh'), `#!/bin/sh\necho ran >> '${marker}'\necho 9.9.9\n`);
    chmodSync(path.join(ws.root, 'evil.sh'), 0o755);
  });
  afterEach(() => ws.cleanup());

  /** A folder outside the workspace holding `name` as given (a script or a link). */
  function install(dir: string, name: string, make: (file: string) => void): string {
    const folder = path.join(ws.outside, dir);
    mkdirSync(folder, { recursive: true });
    make(path.join(folder, name));
    return folder;
  }

  const script = (text: string) => (file: string) => {
    writeFileSync(file, text);
    chmodSync(file, 0o755);
  };

  const redirected: Array<[string, RegExp]> = [
    ['yarn --version', /yarnPath/],
    ['yarn -v', /yarnPath/],
    ['pnpm --version', /packageManager/],
    ['corepack --version', /packageManager/],
    ['cargo --version', /rust-toolchain\.toml/],
    ['cargo -V', /rust-toolchain\.toml/],
    ['rustc -V', /rust-toolchain\.toml/],
    ['rustup --version', /rust-toolchain\.toml/],
    ['go version', /toolchain/],
    ['go env GOPATH', /toolchain/],
    ['npx --version', /runs packages/],
    ['./gradlew --version', /runs a program by path/],
    ['mvn -v', /jvm\.config/],
    ['bundle -v', /Gemfile/],
    ['bazel --version', /bazelversion/],
    ['dotnet --version', /global\.json/],
    ['env yarn --version', /yarnPath/],
    ['bash -c "cargo --version"', /rust-toolchain\.toml/],
  ];
  for (const [command, why] of redirected) {
    it(`refuses ${JSON.stringify(command)}: the workspace can redirect it`, async () => {
      const verdict = await isShellCommandReadOnly(command, { workspaceRoot: ws.root, pathValue: '/usr/bin:/bin' });
      assert.equal(verdict.readOnly, false);
      assert.match(verdict.reason, why);
    });
  }

  it('accepts the version of a native program found on the PATH, and only its version flag', async () => {
    const folder = install('native', 'node', (file) => copyFileSync('/bin/true', file));
    const context = { workspaceRoot: ws.root, pathValue: folder };
    assert.equal((await isShellCommandReadOnly('node --version', context)).readOnly, true);
    assert.equal((await isShellCommandReadOnly('node -v', context)).readOnly, true);
    for (const command of ['node version', 'node -e 1', 'node --version --require x', 'python -v']) {
      assert.equal((await isShellCommandReadOnly(command, context)).readOnly, false, command);
    }
  });

  const shims: Array<[string, (t: TempWorkspace) => string]> = [
    ['an asdf shim (a script in a shims folder)', () => install('.asdf/shims', 'node', script('#!/usr/bin/env bash\nexec asdf exec "node" "$@"\n'))],
    ['a pyenv-style shim outside a shims folder', () => install('bin-pyenv', 'python3', script('#!/usr/bin/env bash\nexec "$PYENV_ROOT/libexec/pyenv" exec "$program" "$@"\n'))],
    ['a volta shim (a link to volta-shim)', () => {
      const bin = install('volta-install', 'volta-shim', (file) => copyFileSync('/bin/true', file));
      return install('.volta/bin', 'node', (file) => symlinkSync(path.join(bin, 'volta-shim'), file));
    }],
    ['a mise shim (a link to the mise binary)', () => {
      const bin = install('mise-install', 'mise', (file) => copyFileSync('/bin/true', file));
      return install('mise-shims-elsewhere', 'node', (file) => symlinkSync(path.join(bin, 'mise'), file));
    }],
    ['a corepack shim', () => install('corepack/shims', 'npm', script("#!/usr/bin/env node\nrequire('./lib/corepack.cjs').runMain(['npm', ...process.argv.slice(2)]);\n"))],
  ];
  for (const [what, make] of shims) {
    it(`refuses a version flag when the program is ${what}`, async () => {
      const folder = make(ws);
      const name = existsSync(path.join(folder, 'node')) ? 'node' : existsSync(path.join(folder, 'npm')) ? 'npm' : 'python3';
      const verdict = await isShellCommandReadOnly(`${name} --version`, { workspaceRoot: ws.root, pathValue: folder });
      assert.equal(verdict.readOnly, false);
      assert.match(verdict.reason, /may run a program the workspace chooses/);
    });
  }

  it('never runs the workspace\'s yarnPath or rust toolchain without approval', async function () {
    this.timeout(20_000);
    writeFileSync(path.join(ws.root, '.yarnrc.yml'), 'yarnPath: ./evil.sh\n');
    writeFileSync(path.join(ws.root, '.yarnrc'), 'yarn-path "./evil.sh"\n');
    mkdirSync(path.join(ws.root, 'toolchain', 'bin'), { recursive: true });
    for (const tool of ['cargo', 'rustc']) copyFileSync(path.join(ws.root, 'evil.sh'), path.join(ws.root, 'toolchain', 'bin', tool));
    chmodSync(path.join(ws.root, 'toolchain', 'bin', 'cargo'), 0o755);
    chmodSync(path.join(ws.root, 'toolchain', 'bin', 'rustc'), 0o755);
    writeFileSync(path.join(ws.root, 'rust-toolchain.toml'), `[toolchain]\npath = "${path.join(ws.root, 'toolchain')}"\n`);
    writeFileSync(path.join(ws.root, 'go.mod'), 'module x\n\ngo 1.21\n\ntoolchain go1.99.0\n');
    writeFileSync(path.join(ws.root, '.tool-versions'), `nodejs path:${ws.root}\n`);
    // A stand-in for yarn 1/berry's documented start-up: run the file yarnPath names.
    const yarnFolder = install('yarn-install', 'yarn', script('#!/bin/sh\nexec "$(sed -n "s/^yarnPath: //p" .yarnrc.yml)" "$@"\n'));
    const shellEnv = { PATH: `${yarnFolder}:${process.env.PATH ?? '/usr/bin:/bin'}` };
    const commands = ['yarn --version', 'yarn -v'];
    const rustup = (() => {
      try {
        return execFileSync('bash', ['-c', 'command -v rustup'], { encoding: 'utf8' }).trim();
      } catch {
        return '';
      }
    })();
    if (rustup) commands.push('cargo --version', 'rustc -V');

    // The trap is real: a command the user approved runs what the workspace chose.
    const approved = await runShellCommandTool.execute({ command: commands.join('; ') }, ws.context({ processRunner, shellEnv }));
    assert.match(approved.output, /9\.9\.9/);
    assert.ok(existsSync(marker));
    rmSync(marker);

    for (const command of commands) {
      const result = await runShellCommandTool.execute({ command }, ws.context({ processRunner, shellEnv, approvedAsReadOnly: true }));
      assert.equal(result.ok, false, command);
      assert.match(result.output, /^The command was not run: .*not read-only/, command);
      assert.equal(existsSync(marker), false, `${command} ran the workspace's program: ${existsSync(marker) ? readFileSync(marker, 'utf8') : ''}`);
    }
  });
});
