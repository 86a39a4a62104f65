// The overlay as the speculation's tools see it: copy-on-write reads and writes, and listings,
// stat, glob and search that show the workspace with the speculation's changes on top.
import * as assert from 'node:assert/strict';
import { stat as realStat } from 'node:fs/promises';
import * as path from 'node:path';
import { FileNotFoundError } from '../../../src/core/fs/workspaceFs';
import { OverlayDiscardedError, type OverlayFs } from '../../../src/core/followup/overlayFs';
import type { SpeculationOverlay } from '../../../src/core/followup/speculation';
import { OVERLAY_PARENT } from '../../../src/core/followup/overlay/recovery';
import { exists, makeSandbox, makeSymlink, snapshot, text, thrown, type Sandbox } from './overlayKit';

describe('OverlayFs merged view', () => {
  let box: Sandbox;
  let overlay: OverlayFs;

  beforeEach(async () => {
    box = await makeSandbox({
      'README.md': '# Project\nhello world\n',
      'src/app.ts': 'export const answer = 41;\n// TODO: fix the answer\n',
      'src/util.ts': 'export function helper() {\n  return "TODO";\n}\n',
      'src/deep/inner.ts': 'export const inner = true;\n',
      'scripts/run.sh': { content: '#!/bin/sh\necho run\n', mode: 0o755 },
      '.gitignore': 'dist/\n',
      'empty/.keep': '',
    });
    overlay = await box.open();
  });

  afterEach(async () => {
    const left = await box.dispose();
    assert.deepEqual(left, [], 'no overlay folder is left behind');
  });

  it('reads untouched files straight from the workspace', async () => {
    // The engine takes it as its overlay (checked by the type checker).
    const engineView: SpeculationOverlay = overlay;
    assert.equal(engineView.id, overlay.id);
    assert.equal(text(await overlay.readFile('README.md')), '# Project\nhello world\n');
    assert.deepEqual(await overlay.stat('src/app.ts'), await box.base.stat('src/app.ts'));
    assert.equal(overlay.root, box.ws);
    assert.deepEqual(overlay.writtenFiles(), []);
  });

  it('keeps a write in the overlay: reads see it, the real file does not change', async () => {
    await overlay.writeFile('src/app.ts', 'export const answer = 42;\n');
    assert.equal(text(await overlay.readFile('src/app.ts')), 'export const answer = 42;\n');
    assert.equal(await box.read('src/app.ts'), 'export const answer = 41;\n// TODO: fix the answer\n');
    assert.equal((await overlay.stat('src/app.ts'))?.size, 'export const answer = 42;\n'.length);
    assert.deepEqual(overlay.writtenFiles(), [{ path: 'src/app.ts', kind: 'modified' }]);
    // A second write replaces the first.
    await overlay.writeFile(path.join(box.ws, 'src/app.ts'), 'v3');
    assert.equal(text(await overlay.readFile('./src/app.ts')), 'v3');
  });

  it('shows a new file in a new folder only in the overlay', async () => {
    await overlay.writeFile('docs/guide/intro.md', 'Intro\n');
    assert.deepEqual(await overlay.list('docs'), [{ name: 'guide', type: 'directory' }]);
    assert.deepEqual(await overlay.list('docs/guide'), [{ name: 'intro.md', type: 'file' }]);
    assert.ok((await overlay.list('')).some((e) => e.name === 'docs' && e.type === 'directory'));
    assert.equal((await overlay.stat('docs'))?.type, 'directory');
    assert.equal(await exists(path.join(box.ws, 'docs')), false);
    assert.deepEqual(overlay.writtenFiles(), [{ path: 'docs/guide/intro.md', kind: 'created' }]);
  });

  it('hides a deleted file from read, stat, list, glob and search', async () => {
    await overlay.delete('src/util.ts');
    assert.ok((await thrown(() => overlay.readFile('src/util.ts'))) instanceof FileNotFoundError);
    assert.equal(await overlay.stat('src/util.ts'), undefined);
    assert.deepEqual((await overlay.list('src')).map((e) => e.name), ['app.ts', 'deep']);
    assert.deepEqual(await overlay.glob('src/*.ts'), ['src/app.ts']);
    assert.deepEqual((await overlay.search('TODO')).map((m) => m.path), ['src/app.ts']);
    assert.equal(await box.read('src/util.ts'), 'export function helper() {\n  return "TODO";\n}\n');
    assert.deepEqual(overlay.writtenFiles(), [{ path: 'src/util.ts', kind: 'deleted' }]);
  });

  it('leaves no trace of a file the speculation created and deleted again', async () => {
    await overlay.writeFile('tmp.txt', 'scratch');
    await overlay.delete('tmp.txt');
    assert.deepEqual(overlay.writtenFiles(), []);
    assert.equal(await overlay.stat('tmp.txt'), undefined);
  });

  it('moves a renamed file with its content and mode', async () => {
    await overlay.rename('scripts/run.sh', 'bin/run.sh');
    assert.equal(await overlay.stat('scripts/run.sh'), undefined);
    assert.equal(text(await overlay.readFile('bin/run.sh')), '#!/bin/sh\necho run\n');
    assert.equal((await overlay.stat('bin/run.sh'))?.mode, 0o755);
    assert.deepEqual(overlay.writtenFiles(), [
      { path: 'bin/run.sh', kind: 'created' },
      { path: 'scripts/run.sh', kind: 'deleted' },
    ]);
    assert.equal(await exists(path.join(box.ws, 'bin')), false);
  });

  it('moves a renamed folder with everything below it, including overlay edits', async () => {
    await overlay.writeFile('src/deep/inner.ts', 'edited');
    await overlay.rename('src', 'lib');
    assert.equal(await overlay.stat('src'), undefined);
    assert.deepEqual(await overlay.glob('lib/**/*.ts'), ['lib/app.ts', 'lib/deep/inner.ts', 'lib/util.ts']);
    assert.equal(text(await overlay.readFile('lib/deep/inner.ts')), 'edited');
    assert.ok(!(await overlay.list('')).some((e) => e.name === 'src'));
  });

  it('deletes a folder only once it is empty, then hides it', async () => {
    const error = await thrown(() => overlay.delete('src/deep'));
    assert.match(error.message, /not empty/);
    await overlay.delete('src/deep/inner.ts');
    await overlay.delete('src/deep');
    assert.equal(await overlay.stat('src/deep'), undefined);
    assert.deepEqual((await overlay.list('src')).map((e) => e.name), ['app.ts', 'util.ts']);
    // Writing below it again brings the folder back.
    await overlay.writeFile('src/deep/new.ts', 'x');
    assert.deepEqual(await overlay.list('src/deep'), [{ name: 'new.ts', type: 'file' }]);
  });

  it('refuses to write over a folder or below a file', async () => {
    assert.match((await thrown(() => overlay.writeFile('src', 'x'))).message, /src is a directory/);
    assert.match((await thrown(() => overlay.writeFile('README.md/child.txt', 'x'))).message, /README\.md is a file/);
    assert.match((await thrown(() => overlay.writeFile('', 'x'))).message, /workspace folder itself/);
    assert.deepEqual(overlay.writtenFiles(), []);
  });

  it('globs the merged tree: new files appear, deleted vanish, ignored and overlay-only folders behave as on disk', async () => {
    await overlay.writeFile('src/new.ts', 'new');
    await overlay.writeFile('src/app.ts', 'changed');
    await overlay.delete('src/util.ts');
    await overlay.writeFile('dist/bundle.ts', 'ignored');
    await overlay.writeFile('node_modules/pkg/index.ts', 'skipped');
    assert.deepEqual(await overlay.glob('**/*.ts'), ['src/app.ts', 'src/deep/inner.ts', 'src/new.ts']);
    assert.deepEqual(await overlay.glob('**/*.ts', { respectGitignore: false }), ['dist/bundle.ts', 'src/app.ts', 'src/deep/inner.ts', 'src/new.ts']);
    assert.deepEqual(await overlay.glob('*.ts', { cwd: 'src' }), ['src/app.ts', 'src/new.ts']);
    await overlay.writeFile('fresh/a.md', 'a');
    assert.deepEqual(await overlay.glob('*.md', { cwd: 'fresh' }), ['fresh/a.md']);
    assert.deepEqual(await overlay.glob('**/*.ts', { limit: 2 }), ['src/app.ts', 'src/deep/inner.ts']);
  });

  it('searches the merged tree with the same result shape, sorted by path and line', async () => {
    await overlay.writeFile('src/app.ts', 'export const answer = 42;\n// TODO: done?\n// TODO: really\n');
    await overlay.writeFile('src/aaa.ts', 'first TODO\n');
    await overlay.delete('src/util.ts');
    assert.deepEqual(await overlay.search('TODO'), [
      { path: 'src/aaa.ts', line: 1, text: 'first TODO' },
      { path: 'src/app.ts', line: 2, text: '// TODO: done?' },
      { path: 'src/app.ts', line: 3, text: '// TODO: really' },
    ]);
    // The old content of an edited file never matches any more.
    assert.deepEqual(await overlay.search('answer = 41'), []);
    assert.deepEqual(await overlay.search('hello'), [{ path: 'README.md', line: 2, text: 'hello world' }]);
    assert.deepEqual((await overlay.search('TODO', { path: 'src/app.ts' })).map((m) => m.line), [2, 3]);
    assert.deepEqual((await overlay.search('TODO', { glob: 'aaa.*' })).map((m) => m.path), ['src/aaa.ts']);
    assert.equal((await overlay.search('TODO', { limit: 1 })).length, 1);
    await overlay.writeFile('dist/out.ts', 'TODO in ignored output\n');
    assert.ok(!(await overlay.search('TODO')).some((m) => m.path.startsWith('dist/')));
  });

  it('records the base when a file is first written, not on later writes', async () => {
    await overlay.writeFile('src/app.ts', 'first');
    await box.write('src/app.ts', 'the user edits the real file');
    await overlay.writeFile('src/app.ts', 'second');
    const conflicts = await overlay.checkConflicts();
    assert.deepEqual(conflicts.map((c) => [c.path, c.reason]), [['src/app.ts', 'modified']]);
  });

  it('writes through a symlink inside the workspace under the resolved path', async () => {
    await makeSymlink('src', path.join(box.ws, 'src-link'));
    await overlay.writeFile('src-link/app.ts', 'via link');
    assert.deepEqual(overlay.writtenFiles(), [{ path: 'src/app.ts', kind: 'modified' }]);
    assert.equal(text(await overlay.readFile('src/app.ts')), 'via link');
    assert.equal(text(await overlay.readFile('src-link/app.ts')), 'via link');
  });

  it('tells listeners which workspace paths changed, until they unsubscribe', async () => {
    const events: string[][] = [];
    const subscription = overlay.onDidChange((paths) => events.push(paths));
    overlay.onDidChange(() => {
      throw new Error('a broken listener does not break writes');
    });
    await overlay.writeFile('a.txt', 'a');
    await overlay.delete('README.md');
    await overlay.rename('src/app.ts', 'src/main.ts');
    subscription.dispose();
    await overlay.writeFile('b.txt', 'b');
    assert.deepEqual(events, [['a.txt'], ['README.md'], ['src/app.ts', 'src/main.ts']]);
  });

  it('reads the original from the workspace for diffs', async () => {
    await overlay.writeFile('src/app.ts', 'new');
    await overlay.writeFile('created.txt', 'c');
    assert.equal(text((await overlay.readOriginal('src/app.ts')) as Uint8Array), 'export const answer = 41;\n// TODO: fix the answer\n');
    assert.equal(await overlay.readOriginal('created.txt'), undefined);
  });

  it('serves concurrent reads and writes consistently', async () => {
    const writes = Array.from({ length: 20 }, (_, i) => overlay.writeFile(`many/f${i}.txt`, `content ${i}`));
    const reads = Array.from({ length: 20 }, () => overlay.glob('many/*.txt'));
    await Promise.all([...writes, ...reads]);
    const files = await overlay.glob('many/*.txt');
    assert.equal(files.length, 20);
    for (const [i, file] of ['many/f0.txt', 'many/f19.txt'].entries()) assert.equal(text(await overlay.readFile(file)), `content ${i === 0 ? 0 : 19}`);
  });

  it('never shows its own folder in errors or results', async () => {
    const outputs: string[] = [];
    await overlay.writeFile('src/app.ts', 'TODO new');
    await overlay.writeFile('new/file.txt', 'TODO new file');
    await overlay.delete('README.md');
    outputs.push(JSON.stringify(await overlay.search('TODO')), JSON.stringify(await overlay.glob('**/*')));
    outputs.push(JSON.stringify(await overlay.list('new')), JSON.stringify(await overlay.stat('new/file.txt')));
    outputs.push(JSON.stringify(overlay.writtenFiles()), JSON.stringify(await overlay.checkConflicts()));
    const failures = [
      () => overlay.readFile('README.md'),
      () => overlay.readFile('missing.txt'),
      () => overlay.readFile('new'),
      () => overlay.list('new/file.txt'),
      () => overlay.writeFile('new', 'x'),
      () => overlay.writeFile('new/file.txt/x', 'x'),
      () => overlay.delete('nothing'),
      () => overlay.rename('nothing', 'else'),
      () => overlay.search('(', {}),
      () => overlay.search('x', { path: 'nowhere' }),
      () => overlay.glob('*', { cwd: 'missing' }),
      () => overlay.readFile('../outside/secret.txt'),
      () => overlay.writeFile('/etc/passwd', 'x'),
    ];
    for (const failure of failures) {
      const error = await thrown(failure);
      outputs.push(error.message, String(error.stack?.split('\n')[0]));
    }
    for (const output of outputs) {
      assert.ok(!output.includes(overlay.dir), `overlay folder leaked into: ${output}`);
      assert.ok(!output.includes(box.tmpRoot), `temp root leaked into: ${output}`);
    }
  });

  it('names a storage failure by its workspace path', async () => {
    await overlay.writeFile('src/app.ts', 'new');
    // Simulate the overlay folder vanishing under us (another tool cleaned the temp folder).
    const { rm } = await import('node:fs/promises');
    await rm(path.join(overlay.dir, 'blobs'), { recursive: true, force: true });
    const error = await thrown(() => overlay.readFile('src/app.ts'));
    assert.match(error.message, /copy of "src\/app\.ts"/);
    assert.ok(!error.message.includes(overlay.dir));
  });

  it('cleans up its folder once, and refuses work afterwards', async () => {
    await overlay.writeFile('a.txt', 'a');
    const before = await snapshot(box.ws);
    await overlay.cleanup();
    await overlay.cleanup();
    assert.equal(await exists(overlay.dir), false);
    assert.equal(await exists(path.dirname(overlay.dir)), false, 'the empty pid folder goes too');
    assert.ok((await thrown(() => overlay.readFile('a.txt'))) instanceof OverlayDiscardedError);
    assert.deepEqual(await snapshot(box.ws), before);
  });

  it('keeps its folder private to the user', async () => {
    const info = await realStat(overlay.dir);
    assert.equal(info.mode & 0o077, 0);
    assert.ok(overlay.dir.startsWith(path.join(box.tmpRoot, OVERLAY_PARENT, String(process.pid)) + path.sep));
    assert.equal(path.basename(overlay.dir), overlay.id);
  });
});
