// Protected paths as globs: TOOLS.md's defaults at any depth and in any case, a user's own list,
// anchored patterns, and a write spelled through a symlinked folder still counting as protected.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { DEFAULT_PROTECTED_PATHS, ProtectedPaths } from '../../../src/core/fs/protectedPaths';

describe('protected paths', () => {
  const defaults = new ProtectedPaths();

  it('defaults to the TOOLS.md list, and package.json declares the same default', () => {
    const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as { contributes: { configuration: { properties: Record<string, { default?: unknown; scope?: string }> } } };
    const setting = manifest.contributes.configuration.properties['speculate.protectedPaths'];
    assert.deepEqual(setting.default, DEFAULT_PROTECTED_PATHS);
    assert.equal(setting.scope, 'application');
  });

  it('matches what makes tools run programs or holds secrets, at any depth and in any case', () => {
    const protectedFiles = [
      '.git', '.git/hooks/post-checkout', '.git/config', 'vendor/lib/.git/hooks/pre-commit', '.GIT/HOOKS/pre-push',
      '.vscode/tasks.json', '.vscode/settings.json', '.vscode/launch.json', '.VSCode/Tasks.JSON', 'pkg/.vscode/tasks.json',
      'project.code-workspace', '.env', '.env.local', 'services/api/.env.production', '.envrc', '.npmrc', 'web/.npmrc',
      '.yarnrc', '.yarnrc.yml', '.pnpmfile.cjs', 'rust-toolchain', 'rust-toolchain.toml', '.tool-versions', '.github/workflows/ci.yml',
      '.github/workflows/nested/deploy.yaml',
    ];
    for (const file of protectedFiles) assert.ok(defaults.match(file), file);
    const ordinary = ['.gitignore', '.gitattributes-notes.md', 'src/env.ts', 'environment.ts', '.vscode/README.md', 'github/workflows/ci.yml', 'src/app.ts', 'docs/.envy', ''];
    for (const file of ordinary) assert.equal(defaults.match(file), undefined, file);
    assert.deepEqual(defaults.match('.vscode/tasks.json'), { path: '.vscode/tasks.json', pattern: '.vscode/*.json', why: 'VS Code runs tasks and launch configurations and applies settings from it' });
  });

  it('takes the user list instead, with /-anchored patterns and a reason naming the setting', () => {
    const custom = new ProtectedPaths(['/deploy/**', 'secrets.*']);
    assert.ok(custom.match('deploy/prod.sh'));
    assert.equal(custom.match('src/deploy/prod.sh'), undefined, '/ anchors the pattern at the root');
    assert.deepEqual(custom.match('config/secrets.json'), { path: 'config/secrets.json', pattern: 'secrets.*', why: 'it matches "secrets.*" in speculate.protectedPaths' });
    assert.equal(custom.match('.git/hooks/x'), undefined, 'the list replaces the defaults');
    custom.update([]);
    assert.equal(custom.match('deploy/prod.sh'), undefined);
  });

  it('a write counts as protected where it lands and as it was spelled (a symlinked .vscode folder)', () => {
    const root = '/work/ws';
    assert.ok(defaults.matchWrite(root, '.vscode/tasks.json', 'config/tasks.json'), 'spelled through the symlink');
    assert.ok(defaults.matchWrite(root, 'innocent.txt', '.git/hooks/post-checkout'), 'lands in .git through a symlink');
    assert.ok(defaults.matchWrite(root, '/work/ws/./.envrc', '.envrc'));
    assert.equal(defaults.matchWrite(root, 'src/../README.md', 'README.md'), undefined);
  });
});
