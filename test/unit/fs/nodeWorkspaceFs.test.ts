// The real workspace file system: isolation on every method, glob with .gitignore, and the two
// search backends giving the same answers on the same tree.
import * as assert from 'node:assert/strict';
import { chmod, mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { NodeWorkspaceFs } from '../../../src/core/fs/nodeWorkspaceFs';
import { findExecutable } from '../../../src/core/fs/ripgrep';
import { SearchPatternError } from '../../../src/core/fs/textSearch';
import { FileNotFoundError, PathOutsideWorkspaceError } from '../../../src/core/fs/workspaceFs';
import { addEscapes, escapingPaths, makeWorkspace, SECRET, type TempWorkspace } from '../tools/workspaceFixture';

const TREE: Record<string, string> = {
  '.gitignore': 'dist/\n*.log\n!keep.log\n/root-only.txt\n',
  'README.md': 'hello readme\n',
  'root-only.txt': 'hello ignored at root\n',
  'keep.log': 'hello kept log\n',
  'debug.log': 'hello debug\n',
  'src/app.ts': 'export const app = "hello";\nconsole.log(app);\n',
  'src/util.ts': 'export function util() {\n  return 42; // hello\n}\n',
  'src/root-only.txt': 'hello not ignored below root\n',
  'src/nested/.gitignore': '*.gen.ts\n',
  'src/nested/deep.ts': 'const hello = 1;\r\nconst world = 2;\r\n',
  'src/nested/x.gen.ts': 'hello generated\n',
  'src/a-b.ts': 'hello dash\n',
  'src/a/b.ts': 'hello slash\n',
  'dist/bundle.js': 'hello bundle\n',
  'node_modules/pkg/index.js': 'hello dependency\n',
  '.git/config': 'hello git\n',
  '.github/workflows/ci.yml': 'name: hello ci\n',
  'docs/guide.md': '# Guide\nSay hello.\nhello again\n',
};

describe('NodeWorkspaceFs', () => {
  let ws: TempWorkspace;

  beforeEach(async () => {
    ws = await makeWorkspace(TREE);
  });

  afterEach(() => ws.cleanup());

  describe('paths and file operations', () => {
    it('opens through a symlinked spelling and accepts absolute paths in either spelling', async () => {
      const alias = path.join(path.dirname(ws.root), 'alias');
      await symlink(ws.root, alias);
      const viaAlias = await NodeWorkspaceFs.open(alias, { ripgrepPath: null });
      assert.equal(viaAlias.root, ws.root);
      assert.equal(await viaAlias.resolve(path.join(alias, 'src/app.ts')), 'src/app.ts');
      assert.equal(await viaAlias.resolve(path.join(ws.root, 'src/app.ts')), 'src/app.ts');
      assert.equal(Buffer.from(await viaAlias.readFile(path.join(alias, 'README.md'))).toString(), 'hello readme\n');
    });

    it('refuses to open a folder that does not exist, saying so', async () => {
      await assert.rejects(NodeWorkspaceFs.open(path.join(ws.root, 'nope')), /does not exist/);
    });

    it('writes files with their parent folders and reports type, size and mode', async () => {
      await ws.fs.writeFile('new/deep/file.txt', 'abc');
      assert.equal(await readFile(path.join(ws.root, 'new/deep/file.txt'), 'utf8'), 'abc');
      await chmod(path.join(ws.root, 'new/deep/file.txt'), 0o750);
      const info = await ws.fs.stat('new/deep/file.txt');
      assert.deepEqual({ type: info?.type, size: info?.size, mode: info?.mode }, { type: 'file', size: 3, mode: 0o750 });
      assert.equal((await ws.fs.stat('new'))?.type, 'directory');
      assert.equal(await ws.fs.stat('missing.txt'), undefined);
    });

    it('reports a symlink by what it points to, and lists only entries that stay inside', async () => {
      await addEscapes(ws);
      await ws.link('link-in.ts', path.join(ws.root, 'src/app.ts'));
      await ws.link('linkdir-in', path.join(ws.root, 'src'));
      assert.equal((await ws.fs.stat('link-in.ts'))?.type, 'file');
      assert.equal((await ws.fs.stat('linkdir-in'))?.type, 'directory');
      const names = (await ws.fs.list('')).map((entry) => `${entry.name}:${entry.type}`);
      assert.ok(names.includes('link-in.ts:file'));
      assert.ok(names.includes('linkdir-in:directory'));
      for (const hidden of ['link-out.txt', 'linkdir-out', 'dangling.txt']) assert.ok(!names.some((name) => name.startsWith(hidden + ':')), hidden);
    });

    it('refuses every escaping path on every method and writes nothing outside', async () => {
      await addEscapes(ws);
      for (const { path: requested, why } of escapingPaths(ws)) {
        await assert.rejects(ws.fs.readFile(requested), (error: Error) => error instanceof PathOutsideWorkspaceError && why.test(error.message), `readFile ${requested}`);
        await assert.rejects(ws.fs.writeFile(requested, 'pwned'), PathOutsideWorkspaceError, `writeFile ${requested}`);
        await assert.rejects(ws.fs.stat(requested), PathOutsideWorkspaceError, `stat ${requested}`);
        await assert.rejects(ws.fs.delete(requested), PathOutsideWorkspaceError, `delete ${requested}`);
        await assert.rejects(ws.fs.rename('README.md', requested), PathOutsideWorkspaceError, `rename to ${requested}`);
      }
      await assert.rejects(ws.fs.writeFile('linkdir-out/new.txt', 'pwned'), PathOutsideWorkspaceError);
      await assert.rejects(ws.fs.list('linkdir-out'), PathOutsideWorkspaceError);
      assert.equal(await readFile(path.join(ws.outside, 'secret.txt'), 'utf8'), SECRET);
      assert.deepEqual(await readdir(ws.outside), ['secret.txt']);
      assert.ok(await stat(path.join(ws.root, 'README.md')));
    });

    it('renames files into new folders and deletes files and empty folders only', async () => {
      await ws.fs.rename('README.md', 'moved/README.md');
      assert.equal(await ws.fs.stat('README.md'), undefined);
      assert.equal((await ws.fs.stat('moved/README.md'))?.size, 'hello readme\n'.length);
      await ws.fs.delete('moved/README.md');
      assert.equal(await ws.fs.stat('moved/README.md'), undefined);
      await ws.fs.delete('moved');
      assert.equal(await ws.fs.stat('moved'), undefined);
      await assert.rejects(ws.fs.delete('src'), /Directory src is not empty/);
      assert.ok(await ws.fs.stat('src/app.ts'));
      await assert.rejects(ws.fs.delete('missing.txt'), FileNotFoundError);
      await assert.rejects(ws.fs.readFile('missing.txt'), FileNotFoundError);
      await assert.rejects(ws.fs.delete(''), /workspace folder itself/);
    });
  });

  describe('glob', () => {
    it('honours root and nested .gitignore files, negation, and always skips .git and node_modules', async () => {
      const all = await ws.fs.glob('**/*');
      assert.deepEqual(all, [
        '.github/workflows/ci.yml',
        '.gitignore',
        'README.md',
        'docs/guide.md',
        'keep.log',
        'src/a/b.ts',
        'src/a-b.ts',
        'src/app.ts',
        'src/nested/.gitignore',
        'src/nested/deep.ts',
        'src/root-only.txt',
        'src/util.ts',
      ]);
    });

    it('can include ignored files when asked, still without .git and node_modules', async () => {
      const all = await ws.fs.glob('**/*', { respectGitignore: false });
      assert.ok(all.includes('dist/bundle.js'));
      assert.ok(all.includes('debug.log'));
      assert.ok(all.includes('src/nested/x.gen.ts'));
      assert.ok(!all.some((file) => file.startsWith('.git/') || file.startsWith('node_modules/')));
    });

    it('matches relative to cwd, returns workspace-relative paths, and stops at the limit', async () => {
      assert.deepEqual(await ws.fs.glob('*.ts', { cwd: 'src' }), ['src/a-b.ts', 'src/app.ts', 'src/util.ts']);
      assert.deepEqual(await ws.fs.glob('src/*.ts'), ['src/a-b.ts', 'src/app.ts', 'src/util.ts']);
      assert.deepEqual(await ws.fs.glob('**/*.{md,yml}'), ['.github/workflows/ci.yml', 'README.md', 'docs/guide.md']);
      assert.deepEqual(await ws.fs.glob('**/*.ts', { limit: 2 }), ['src/a/b.ts', 'src/a-b.ts']);
      assert.deepEqual(await ws.fs.glob(path.join(ws.root, 'docs/*.md')), ['docs/guide.md']);
      assert.deepEqual(await ws.fs.glob(path.join(ws.root, 'docs/*.md'), { cwd: 'src' }), ['docs/guide.md'], 'absolute patterns ignore cwd');
      assert.deepEqual(await ws.fs.glob('nothing/*.ts'), []);
    });

    it('does not follow symlinked folders, and lists symlinked files only when they stay inside', async () => {
      await addEscapes(ws);
      await ws.link('linkdir-in', path.join(ws.root, 'src'));
      await ws.link('link-in.md', path.join(ws.root, 'README.md'));
      const all = await ws.fs.glob('**/*');
      assert.ok(all.includes('link-in.md'));
      for (const file of all) assert.ok(!/^(linkdir-in|linkdir-out|link-out|dangling)/.test(file), file);
    });

    it('refuses patterns that reach outside the workspace', async () => {
      await assert.rejects(ws.fs.glob('../outside/*'), PathOutsideWorkspaceError);
      await assert.rejects(ws.fs.glob('/etc/*'), PathOutsideWorkspaceError);
      await assert.rejects(ws.fs.glob('*', { cwd: '../outside' }), PathOutsideWorkspaceError);
    });
  });

  describe('search', () => {
    const rg = findExecutable('rg');

    async function bothBackends(): Promise<{ js: NodeWorkspaceFs; rg: NodeWorkspaceFs }> {
      assert.ok(rg, 'ripgrep (rg) must be on PATH for these tests: apt-get install ripgrep');
      return {
        js: await NodeWorkspaceFs.open(ws.root, { ripgrepPath: null }),
        rg: await NodeWorkspaceFs.open(ws.root, { ripgrepPath: rg }),
      };
    }

    it('finds lines with workspace-relative paths, in path then line order, honouring .gitignore', async () => {
      const { js } = await bothBackends();
      const matches = await js.search('hello');
      assert.deepEqual(
        matches.map((match) => `${match.path}:${match.line}`),
        [
          '.github/workflows/ci.yml:1',
          'README.md:1',
          'docs/guide.md:2',
          'docs/guide.md:3',
          'keep.log:1',
          'src/a/b.ts:1',
          'src/a-b.ts:1',
          'src/app.ts:1',
          'src/nested/deep.ts:1',
          'src/root-only.txt:1',
          'src/util.ts:2',
        ],
      );
      assert.equal(matches.find((match) => match.path === 'src/nested/deep.ts')?.text, 'const hello = 1;');
    });

    it('gives the same results from ripgrep and from JavaScript', async () => {
      await ws.write('bin/data.bin', Buffer.concat([Buffer.from('hello binary\n'), Buffer.from([0, 1, 2]), Buffer.from('\nhello\n')]));
      await ws.write('src/long.ts', `const s = "${'x'.repeat(900)} hello";\n`);
      await ws.link('link-in.md', path.join(ws.root, 'README.md'));
      // A .gitignore between the root and the searched folder, which ripgrep cannot be told about.
      await ws.write('docs/.gitignore', '*.tmp\n');
      await ws.write('docs/sub/x.md', 'hello sub\n');
      await ws.write('docs/sub/y.tmp', 'hello tmp\n');
      await ws.write('docs/sub/dist/z.md', 'hello dist\n');
      // .rgignore beats a deeper .gitignore (ripgrep's precedence); .ignore files count too.
      await ws.write('src/.rgignore', '!*.gen.ts\nutil.ts\n');
      await ws.write('.github/.ignore', '*.yml\n');
      await addEscapes(ws);
      const backends = await bothBackends();
      const queries: [string, Parameters<NodeWorkspaceFs['search']>[1]][] = [
        ['hello', {}],
        ['hello', { path: 'src' }],
        ['hello', { glob: '*.ts' }],
        ['hello', { glob: 'src/**/*.ts' }],
        ['hello', { path: 'src', glob: 'nested/*.ts' }],
        ['hello', { path: 'docs/guide.md' }],
        ['hello', { path: 'docs/sub' }],
        ['hello', { path: 'docs' }],
        ['hello', { path: 'src/nested' }],
        ['hello', { path: '.github' }],
        ['hello', { path: 'dist' }],
        ['^export (const|function)', {}],
        ['world;$', {}],
        ['hello', { limit: 3 }],
        ['no such text anywhere', {}],
      ];
      for (const [pattern, options] of queries) {
        const fromJs = await backends.js.search(pattern, options);
        const fromRg = await backends.rg.search(pattern, options);
        assert.deepEqual(fromRg, fromJs, `${pattern} ${JSON.stringify(options)}`);
      }
      const all = await backends.rg.search('hello');
      const files = new Set(all.map((match) => match.path));
      assert.ok(files.has('src/nested/x.gen.ts') && !files.has('src/util.ts') && !files.has('.github/workflows/ci.yml'), [...files].join());
      assert.ok(files.has('docs/sub/x.md') && !files.has('docs/sub/y.tmp') && !files.has('docs/sub/dist/z.md'), [...files].join());
      assert.ok(!all.some((match) => match.path.startsWith('bin/')), 'binary files are skipped');
      assert.ok(!all.some((match) => /link-in|link-out|linkdir-out|dangling/.test(match.path)), 'symlinks are not searched');
      const long = all.find((match) => match.path === 'src/long.ts');
      assert.ok(long && long.text.length <= 501 && long.text.endsWith('…'));
    });

    it('skips files above the size limit with either backend', async () => {
      await ws.write('big.txt', `hello\n${'y'.repeat(5000)}\n`);
      const { js, rg: viaRg } = await bothBackends();
      for (const backend of [js, viaRg]) {
        const small = await NodeWorkspaceFs.open(ws.root, { ripgrepPath: backend.searchBackend === 'ripgrep' ? rg : null, maxSearchFileBytes: 1000 });
        const matches = await small.search('hello');
        assert.ok(!matches.some((match) => match.path === 'big.txt'), small.searchBackend);
        assert.ok(matches.some((match) => match.path === 'README.md'), small.searchBackend);
      }
    });

    it('reports an invalid pattern as a SearchPatternError with either backend', async () => {
      const backends = await bothBackends();
      for (const backend of [backends.js, backends.rg]) {
        await assert.rejects(backend.search('foo('), (error: Error) => error instanceof SearchPatternError && /foo\(/.test(error.message), backend.searchBackend);
      }
    });

    it('refuses search paths outside the workspace and reports missing ones', async () => {
      await addEscapes(ws);
      for (const { path: requested } of escapingPaths(ws)) {
        await assert.rejects(ws.fs.search('secret', { path: requested }), PathOutsideWorkspaceError, requested);
      }
      await assert.rejects(ws.fs.search('x', { path: 'missing' }), FileNotFoundError);
    });

    it('stops when aborted, with either backend', async () => {
      for (let i = 0; i < 40; i++) await ws.write(`many/f${i}.txt`, 'hello\n');
      const backends = await bothBackends();
      for (const backend of [backends.js, backends.rg]) {
        const controller = new AbortController();
        controller.abort();
        await assert.rejects(backend.search('hello', { signal: controller.signal }), { name: 'AbortError' }, backend.searchBackend);
      }
    });
  });

  it('kills a running ripgrep when the search is aborted', async () => {
    const pidFile = path.join(ws.outside, 'rg.pid');
    // A stand-in for rg that records its pid and then hangs, so the abort must kill it.
    const fakeRg = path.join(ws.outside, 'fake-rg');
    await writeFile(fakeRg, `#!/bin/sh\necho $$ > ${pidFile}\nexec sleep 30\n`);
    await chmod(fakeRg, 0o755);
    const hanging = await NodeWorkspaceFs.open(ws.root, { ripgrepPath: fakeRg });
    const controller = new AbortController();
    const searching = hanging.search('hello', { signal: controller.signal });
    let pid = 0;
    for (let i = 0; i < 250 && pid === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      pid = Number((await readFile(pidFile, 'utf8').catch(() => '')).trim()) || 0;
    }
    assert.ok(pid > 0, 'the stand-in rg started');
    controller.abort();
    await assert.rejects(searching, { name: 'AbortError' });
    let running = true;
    for (let i = 0; i < 100 && running; i++) {
      try {
        const state = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]?.[0];
        running = state !== 'Z';
      } catch {
        running = false;
      }
      if (running) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(running, false, 'the rg process is gone');
  });

  it('never reads an ignore file through a symlink', async () => {
    await writeFile(path.join(ws.outside, 'ignore-all'), '*\n');
    await ws.link('docs/.ignore', path.join(ws.outside, 'ignore-all'));
    await ws.write('docs/sub/a.md', '');
    assert.deepEqual(await ws.fs.glob('*.md', { cwd: 'docs/sub' }), ['docs/sub/a.md']);
    assert.ok((await ws.fs.glob('**/*.md')).includes('docs/guide.md'));
  });

  it('creates parents but never follows a symlinked folder out when writing deep paths', async () => {
    await mkdir(path.join(ws.root, 'real'));
    await ws.link('real/out', ws.outside);
    await assert.rejects(ws.fs.writeFile('real/out/deeper/x.txt', 'pwned'), PathOutsideWorkspaceError);
    assert.deepEqual(await readdir(ws.outside), ['secret.txt']);
  });
});
