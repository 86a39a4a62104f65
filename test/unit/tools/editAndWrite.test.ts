// edit and write_file: exact replacements, helpful failures, and writes that never leave the workspace.
import * as assert from 'node:assert/strict';
import { readdir, readFile, stat, chmod } from 'node:fs/promises';
import * as path from 'node:path';
import { editTool } from '../../../src/core/tools/edit';
import { readFileTool } from '../../../src/core/tools/readFile';
import { writeFileTool } from '../../../src/core/tools/writeFile';
import { addEscapes, delay, escapingPaths, makeWorkspace, SECRET, withSlowMethods, type TempWorkspace } from './workspaceFixture';

const APP = 'function greet(name) {\n  return "hi " + name;\n}\n\nconsole.log(greet("a"));\nconsole.log(greet("b"));\n';

describe('edit and write_file tools', () => {
  let ws: TempWorkspace;

  beforeEach(async () => {
    ws = await makeWorkspace({ 'src/app.js': APP });
    await addEscapes(ws);
  });

  afterEach(() => ws.cleanup());

  const read = (relative: string) => readFile(path.join(ws.root, relative), 'utf8');
  const edit = (args: Record<string, unknown>) => editTool.execute(args, ws.context());

  async function outsideUntouched() {
    assert.deepEqual(await readdir(ws.outside), ['secret.txt']);
    assert.equal(await readFile(path.join(ws.outside, 'secret.txt'), 'utf8'), SECRET);
  }

  describe('edit', () => {
    it('replaces one exact occurrence and reports the changed file', async () => {
      const result = await edit({ file_path: 'src/app.js', old_string: 'return "hi " + name;', new_string: 'return `hello ${name}`;' });
      assert.deepEqual(result, { ok: true, output: 'Edited src/app.js: replaced 1 occurrence (line 2).', filesChanged: ['src/app.js'] });
      assert.equal(await read('src/app.js'), APP.replace('return "hi " + name;', 'return `hello ${name}`;'));
    });

    it('keeps special replacement characters literal and the file mode', async () => {
      await chmod(path.join(ws.root, 'src/app.js'), 0o755);
      await edit({ file_path: path.join(ws.root, 'src/app.js'), old_string: '"hi "', new_string: '"$& $1 $$"' });
      assert.ok((await read('src/app.js')).includes('return "$& $1 $$" + name;'));
      assert.equal((await stat(path.join(ws.root, 'src/app.js'))).mode & 0o777, 0o755);
    });

    it('refuses an ambiguous old_string, counting occurrences and suggesting what to do', async () => {
      const result = await edit({ file_path: 'src/app.js', old_string: 'console.log(greet(', new_string: 'print(' });
      assert.equal(result.ok, false);
      assert.equal(result.output, 'old_string occurs 2 times in src/app.js (lines 5, 6). Include more surrounding lines to make it unique, or set replace_all to true to replace every occurrence.');
      assert.equal(await read('src/app.js'), APP);
      const all = await edit({ file_path: 'src/app.js', old_string: 'console.log(greet(', new_string: 'print(greet(', replace_all: true });
      assert.equal(all.output, 'Edited src/app.js: replaced 2 occurrences (first at line 5).');
      assert.equal((await read('src/app.js')).match(/print\(greet/g)?.length, 2);
    });

    it('shows where the text almost matches when old_string is not found', async () => {
      const spacing = await edit({ file_path: 'src/app.js', old_string: 'function greet(name) {\nreturn "hi " + name;', new_string: 'x' });
      assert.equal(spacing.ok, false);
      assert.match(spacing.output, /old_string was not found in src\/app.js\. Lines 1–2 match it except for indentation/);
      assert.match(spacing.output, /\n2:   return "hi " \+ name;/);
      const close = await edit({ file_path: 'src/app.js', old_string: 'return "hello " + name;', new_string: 'x' });
      assert.match(close.output, /The closest text is around line 2:\n1: function greet\(name\) \{\n2:   return "hi " \+ name;/);
      const far = await edit({ file_path: 'src/app.js', old_string: 'zzzz qqqq', new_string: 'x' });
      assert.match(far.output, /Read the file again \(read_file\) and copy old_string exactly/);
      assert.equal(await read('src/app.js'), APP);
    });

    it('creates a missing file when old_string is empty, and refuses to clobber an existing one that way', async () => {
      const created = await edit({ file_path: 'src/new/file.txt', old_string: '', new_string: 'fresh\n' });
      assert.deepEqual(created, { ok: true, output: 'Created src/new/file.txt.', filesChanged: ['src/new/file.txt'] });
      assert.equal(await read('src/new/file.txt'), 'fresh\n');
      const clobber = await edit({ file_path: 'src/app.js', old_string: '', new_string: 'gone' });
      assert.equal(clobber.ok, false);
      assert.match(clobber.output, /already exists and is not empty/);
      const missing = await edit({ file_path: 'src/missing.js', old_string: 'a', new_string: 'b' });
      assert.match(missing.output, /File not found: src\/missing.js\. To create it, call edit with an empty old_string/);
    });

    it('keeps CRLF files CRLF when the model writes plain newlines', async () => {
      await ws.write('win.txt', 'one\r\ntwo\r\nthree\r\n');
      const result = await edit({ file_path: 'win.txt', old_string: 'one\ntwo', new_string: 'uno\ndos' });
      assert.equal(result.ok, true);
      assert.equal(await read('win.txt'), 'uno\r\ndos\r\nthree\r\n');
    });

    it('refuses binary files, no-op edits and bad argument types', async () => {
      await ws.write('blob.bin', Buffer.from([1, 0, 2]));
      assert.match((await edit({ file_path: 'blob.bin', old_string: 'a', new_string: 'b' })).output, /Cannot edit blob.bin: binary file, 3 bytes/);
      assert.match((await edit({ file_path: 'src/app.js', old_string: 'greet', new_string: 'greet' })).output, /the same; nothing would change/);
      assert.match((await edit({ file_path: 'src/app.js', old_string: 1, new_string: 'b' })).output, /"old_string" must be a string/);
      assert.match((await edit({ file_path: 'src/app.js', old_string: 'a' })).output, /"new_string" is required/);
      assert.match((await edit({ file_path: 'src/app.js', old_string: 'greet', new_string: 'g', replace_all: 'yes' })).output, /"replace_all" must be true or false/);
      assert.equal(await read('src/app.js'), APP);
    });

    it('refuses every escaping path, creating nothing outside', async () => {
      for (const { path: requested, why } of escapingPaths(ws)) {
        for (const args of [{ old_string: 'outside', new_string: 'pwned' }, { old_string: '', new_string: 'pwned' }]) {
          const result = await edit({ file_path: requested, ...args });
          assert.equal(result.ok, false, requested);
          assert.match(result.output, why);
        }
      }
      assert.equal((await edit({ file_path: 'linkdir-out/new.txt', old_string: '', new_string: 'pwned' })).ok, false);
      await outsideUntouched();
    });
  });

  describe('write_file', () => {
    const write = (args: Record<string, unknown>) => writeFileTool.execute(args, ws.context());

    it('creates files with their folders and overwrites existing ones', async () => {
      assert.deepEqual(await write({ file_path: 'a/b/c.txt', content: 'x\ny\n' }), { ok: true, output: 'Created a/b/c.txt (2 lines, 4 bytes).', filesChanged: ['a/b/c.txt'] });
      assert.deepEqual(await write({ file_path: path.join(ws.root, 'a/b/c.txt'), content: '' }), { ok: true, output: 'Overwrote a/b/c.txt (0 lines, 0 bytes).', filesChanged: ['a/b/c.txt'] });
      assert.equal(await read('a/b/c.txt'), '');
    });

    it('writes through a symlink that stays inside, to its target', async () => {
      await ws.link('alias.js', path.join(ws.root, 'src/app.js'));
      const result = await write({ file_path: 'alias.js', content: 'new' });
      assert.deepEqual(result.filesChanged, ['src/app.js']);
      assert.equal(await read('src/app.js'), 'new');
    });

    it('refuses every escaping path, directories and bad arguments', async () => {
      for (const { path: requested, why } of escapingPaths(ws)) {
        const result = await write({ file_path: requested, content: 'pwned' });
        assert.equal(result.ok, false, requested);
        assert.match(result.output, why);
      }
      assert.equal((await write({ file_path: 'linkdir-out/x.txt', content: 'pwned' })).ok, false);
      await outsideUntouched();
      assert.match((await write({ file_path: 'src', content: 'x' })).output, /src is a directory/);
      assert.match((await write({ file_path: 'x.txt' })).output, /"content" is required/);
      assert.match((await write({ file_path: 'x.txt', content: { a: 1 } })).output, /"content" must be a string \(got an object\)/);
    });

    it('summarises the call', () => {
      assert.equal(writeFileTool.summarize({ file_path: 'a.txt', content: 'x\ny\n' }), 'a.txt · 2 lines');
      assert.equal(editTool.summarize({ file_path: 'a.txt', old_string: 'a', new_string: 'b', replace_all: true }), 'a.txt · all occurrences');
    });
  });

  it('an edit stopped by its time limit writes nothing, even when its slow read finishes later', async () => {
    const slow = withSlowMethods(ws.fs, { readFile: async (file) => (await delay(120), ws.fs.readFile(file)) });
    const result = await editTool.execute({ file_path: 'src/app.js', old_string: '"hi "', new_string: '"late "' }, { fs: slow, toolTimeLimitMs: 30 });
    assert.equal(result.ok, false);
    assert.match(result.output, /edit did not finish within 30 ms and was stopped\. Nothing was written after it was stopped/);
    await delay(200);
    assert.equal(await read('src/app.js'), APP, 'the late edit did not land');
  });

  describe('edit of files that are not valid UTF-8', () => {
    // "café = 'déjà vu'" in Latin-1, a lone 0xFF, and a CRLF line: none of it may turn into U+FFFD.
    const LATIN1 = Buffer.concat([Buffer.from('caf\xe9 = \'d\xe9j\xe0 vu\'\r\n', 'latin1'), Buffer.from([0xff]), Buffer.from('\r\nanswer = 41\r\n', 'latin1')]);

    it('replaces only the bytes of old_string and keeps every other byte exactly', async () => {
      await ws.write('legacy.ini', LATIN1);
      const result = await edit({ file_path: 'legacy.ini', old_string: 'answer = 41\n', new_string: 'answer = 42\n' });
      assert.equal(result.ok, true, result.output);
      const after = await readFile(path.join(ws.root, 'legacy.ini'));
      assert.deepEqual(after, Buffer.from(LATIN1.toString('latin1').replace('answer = 41', 'answer = 42'), 'latin1'));
    });

    it('replace_all works on bytes too', async () => {
      await ws.write('legacy.txt', Buffer.concat([Buffer.from('x=1 '), Buffer.from([0xe9]), Buffer.from(' x=1 '), Buffer.from([0xfe]), Buffer.from(' x=1\n')]));
      const result = await edit({ file_path: 'legacy.txt', old_string: 'x=1', new_string: 'x=2', replace_all: true });
      assert.match(result.output, /replaced 3 occurrences \(first at line 1\)/);
      assert.deepEqual(await readFile(path.join(ws.root, 'legacy.txt')), Buffer.concat([Buffer.from('x=2 '), Buffer.from([0xe9]), Buffer.from(' x=2 '), Buffer.from([0xfe]), Buffer.from(' x=2\n')]));
    });

    it('refuses old_string or new_string holding U+FFFD, the stand-in for bytes it cannot show, and changes nothing', async () => {
      await ws.write('legacy.ini', LATIN1);
      for (const args of [
        { old_string: 'caf\uFFFD', new_string: 'cafe' },
        { old_string: 'answer = 41', new_string: 'answer = \uFFFD' },
      ]) {
        const result = await edit({ file_path: 'legacy.ini', ...args });
        assert.equal(result.ok, false);
        assert.match(result.output, /legacy\.ini is not valid UTF-8.*choose old_string and new_string without \uFFFD/s);
      }
      assert.deepEqual(await readFile(path.join(ws.root, 'legacy.ini')), LATIN1);
    });

    it('read_file says the file is not UTF-8', async () => {
      await ws.write('legacy.ini', LATIN1);
      const result = await readFileTool.execute({ file_path: 'legacy.ini' }, ws.context());
      assert.match(result.output, /legacy\.ini is not valid UTF-8: bytes in another encoding are shown as \uFFFD; edit keeps them as they are/);
    });
  });
});
