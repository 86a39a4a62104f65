// The house rule that keeps the engine testable without an editor: src/core never imports vscode.
import * as assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const IMPORTS_VSCODE = /(?:from\s+['"]vscode['"]|require\(\s*['"]vscode['"]\s*\)|import\(\s*['"]vscode['"]\s*\))/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    return statSync(full).isDirectory() ? sourceFiles(full) : name.endsWith('.ts') ? [full] : [];
  });
}

describe('layering', () => {
  it('no file under src/core imports vscode', () => {
    const files = sourceFiles(join(process.cwd(), 'src', 'core'));
    assert.ok(files.length > 0, 'src/core has source files');
    const offenders = files.filter((file) => IMPORTS_VSCODE.test(readFileSync(file, 'utf8')));
    assert.deepEqual(offenders, []);
  });

  it('the check itself recognises each form of importing vscode', () => {
    for (const line of [`import * as vscode from 'vscode';`, `const v = require("vscode");`, `await import('vscode')`]) {
      assert.match(line, IMPORTS_VSCODE);
    }
    assert.doesNotMatch(`import { x } from './vscodeLike';`, IMPORTS_VSCODE);
  });

  it('src/webview never imports node or vscode modules', () => {
    const files = sourceFiles(join(process.cwd(), 'src', 'webview'));
    const offenders = files.filter((file) => /from\s+['"](?:node:|vscode['"])/.test(readFileSync(file, 'utf8')));
    assert.deepEqual(offenders, []);
  });
});
